"""JupyterHub kernels that run the course inside its Apptainer image.

Two kernels: "Python on GPU" for the JAX and CuPy tutorials, and "cuPyNumeric (Legate)" for the
cuPyNumeric one; both start `python -m ipykernel_launcher` in the image with the host's NVIDIA
driver (`--nv`), a clean environment, through the image's `./course run`, which gives Legate and
JAX their share of the GPU memory free when the kernel starts.

    gs-course kernels --image /shared/gs-course.sif           # for this user
    gs-course kernels --image /shared/gs-course.sif --prefix /opt/jupyterhub   # for every hub user
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

#: The image's course command (the recipes keep the course's folder there).
IMAGE_COURSE = "/opt/gs-course/course"
#: The settings of the container recipes: JAX allocates as it goes (Legate's share: ./course run),
#: Legate leaves its threads unpinned (students side by side would pin to the same cores: see
#: gs_course/__init__.py).
SHARED_GPU_ENV = {"XLA_PYTHON_CLIENT_PREALLOCATE": "false", "REALM_SYNTHETIC_CORE_MAP": ""}
#: The cuPyNumeric tutorial's kernel keeps JAX off the GPU: a second library's CUDA context and
#: memory pool in the same process share the GPU with Legate, which then ran slower on the H200
#: (BENCHMARKS.md: one process per library).
LEGATE_ENV = {**SHARED_GPU_ENV, "JAX_PLATFORMS": "cpu"}


#: The kernel tutorial 2 declares. A clone and both images have it in deploy/jupyter/kernels (on
#: JUPYTER_PATH under ./course and in the images; Jupyter reads `python` as its own interpreter);
#: a hub has it from the image, under the same name (`kernel_specs`).
LEGATE_KERNEL = "gs-course-legate"
LEGATE_DISPLAY_NAME = "cuPyNumeric (Legate, gs-course)"


def local_specs() -> dict[str, dict]:
    """Kernel name -> kernel.json of the kernels deploy/jupyter/kernels/ holds (kept in step by a test)."""
    return {LEGATE_KERNEL: {"argv": ["python", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                            "display_name": LEGATE_DISPLAY_NAME, "language": "python",
                            "env": {name: LEGATE_ENV[name] for name in ("JAX_PLATFORMS", "REALM_SYNTHETIC_CORE_MAP")},
                            "metadata": {"debugger": False}}}


def kernel_specs(image: str, apptainer: str = "apptainer") -> dict[str, dict]:
    """Kernel name -> kernel.json contents. With --cleanenv, Apptainer passes only APPTAINERENV_*
    variables into the image, under their names without the prefix."""
    def spec(display_name: str, env: dict[str, str]) -> dict:
        return {
            "argv": [apptainer, "exec", "--nv", "--cleanenv", image, IMAGE_COURSE, "run",
                     "python", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": display_name,
            "language": "python",
            "env": {f"APPTAINERENV_{name}": value for name, value in env.items()},
            "metadata": {"debugger": False},
        }

    return {
        "gs-course": spec("Python on GPU (gs-course)", SHARED_GPU_ENV),
        LEGATE_KERNEL: spec(LEGATE_DISPLAY_NAME, LEGATE_ENV),
    }


def install(image: str, user: bool = True, prefix: str | None = None, apptainer: str = "apptainer") -> list[str]:
    """Install both kernel specs where Jupyter looks for them; returns their folders."""
    from jupyter_client.kernelspec import KernelSpecManager

    manager = KernelSpecManager()
    installed = []
    for name, spec in kernel_specs(image, apptainer).items():
        with tempfile.TemporaryDirectory() as folder:
            (Path(folder) / "kernel.json").write_text(json.dumps(spec, indent=1) + "\n")
            installed.append(manager.install_kernel_spec(folder, name, user=user and prefix is None, prefix=prefix))
    return installed
