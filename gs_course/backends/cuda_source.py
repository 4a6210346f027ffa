"""The CUDA source of the Gray-Scott step (gray_scott.cu), read once for every library that compiles it,
and of CuPy's persistent kernel (persistent.cu, compiled after it: it uses its device functions)."""

from importlib import resources

GRAY_SCOTT_CU = resources.files(__package__).joinpath("gray_scott.cu").read_text()
PERSISTENT_CU = resources.files(__package__).joinpath("persistent.cu").read_text()
