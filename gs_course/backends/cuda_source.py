"""The CUDA source of the Gray-Scott step (gray_scott.cu), read once for every library that compiles it."""

from importlib import resources

GRAY_SCOTT_CU = resources.files(__package__).joinpath("gray_scott.cu").read_text()
