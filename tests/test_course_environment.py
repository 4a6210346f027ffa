"""The course's environment as a newcomer meets it: `gs-course doctor` reads its child probes
through whatever the libraries print while they start, and `./course run` gives any command (the
console script, a Python that imports cuPyNumeric first) the settings `./course lab` gives the
notebooks' kernels."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gs_course import backends
from gs_course.delivery import doctor

ROOT = Path(__file__).resolve().parent.parent
LEGATE_NOISE = ("[0 - 7f00]    0.000000 {4}{gpu}: cuInit(0) returned 100 (CUDA_ERROR_NO_DEVICE)\n"
                "[0 - 7f00]    0.000000 {5}{gpu}: We are not able to discover the CUDA resources.\n")


def _child_answers(monkeypatch, stdout: str, stderr: str = "", returncode: int = 0):
    def run(command, **kwargs):
        return subprocess.CompletedProcess(command, returncode, stdout=stdout, stderr=stderr)

    monkeypatch.setattr(doctor.subprocess, "run", run)


def test_doctor_reads_the_probe_through_what_legate_prints_on_standard_output(monkeypatch):
    answer = {"name": "cupynumeric", "ok": True, "version": "26.6.1", "device": "CPU through Legate"}
    _child_answers(monkeypatch, LEGATE_NOISE + doctor.PROBE_MARKER + json.dumps(answer) + "\n")
    found = doctor.probe_isolated("cupynumeric")
    assert found == backends.Probe(**answer)


def test_a_probe_that_dies_says_the_last_line_it_wrote(monkeypatch):
    _child_answers(monkeypatch, LEGATE_NOISE, stderr="Traceback ...\nOSError: libatomic.so.1: cannot open\n",
                   returncode=1)
    found = doctor.probe_isolated("cupynumeric")
    assert not found.ok and found.reason == "crashed while loading: OSError: libatomic.so.1: cannot open"


def _course_run(*command: str, **env: str) -> subprocess.CompletedProcess:
    # The interpreter running the tests stands for the course's venv (the GPU host has no venv).
    environment = {**os.environ, "GS_COURSE_PYTHON": sys.executable, **env}
    environment.pop("LEGATE_CONFIG", None)
    return subprocess.run([str(ROOT / "course"), "run", *command], capture_output=True, text=True,
                          env=environment, timeout=300)


def test_course_run_gives_a_command_the_course_settings():
    done = _course_run(sys.executable, "-c", "import os; print(os.environ['LEGATE_CONFIG']); "
                       "print(os.environ['XLA_PYTHON_CLIENT_PREALLOCATE'])")
    assert done.returncode == 0, done.stderr
    from gs_course.sizing import default_legate_config

    assert done.stdout.split("\n")[:2] == [default_legate_config(), "false"]


_REALM = "import os, sys; print(os.environ.get('LEGATE_CONFIG'), '|', os.environ.get('REALM_DEFAULT_ARGS'))"
_ONE_CORE = "import os, sys; os.sched_setaffinity(0, [max(os.sched_getaffinity(0))]); os.execvp(sys.argv[1], sys.argv[1:])"


def test_realm_gets_one_background_worker_on_few_cores_and_never_beside_a_sites_legate_config():
    """Kept to one core, `./course run` gives Realm one background worker with Legate's workers; a
    LEGATE_CONFIG the site chose gets no Realm option of the course's beside it, nor does the kernel."""
    def on_one_core(*command: str, **env: str) -> str:
        environment = {name: value for name, value in os.environ.items() if name not in ("LEGATE_CONFIG", "REALM_DEFAULT_ARGS")}
        done = subprocess.run([sys.executable, "-c", _ONE_CORE, str(ROOT / "course"), "run", *command], text=True,
                              capture_output=True, env={**environment, "GS_COURSE_PYTHON": sys.executable, **env},
                              timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip().splitlines()[-1]

    assert on_one_core(sys.executable, "-c", _REALM).endswith("| -ll:bgwork 1")
    assert on_one_core(sys.executable, "-c", _REALM, LEGATE_CONFIG="--cpus 2 --gpus 0") == "--cpus 2 --gpus 0 | None"
    imported = "import gs_course.backends.cupynumeric_backend; " + _REALM
    assert on_one_core(sys.executable, "-c", imported, LEGATE_CONFIG="--cpus 2 --gpus 0").endswith("| None")


_THREAD_MASKS = """
import os, gs_course, cupynumeric
float(cupynumeric.ones(1000).sum())  # Legate's processors have started
masks = set()
for thread in os.listdir("/proc/self/task"):
    for line in open(f"/proc/self/task/{thread}/status"):
        if line.startswith("Cpus_allowed_list"):
            masks.add(line.split()[1])
import json
print(json.dumps([sorted(masks), sorted(os.sched_getaffinity(0))]))
"""


@pytest.mark.skipif(not backends.probe("cupynumeric").ok, reason="cupynumeric not available")
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one core: pinned or not looks the same")
def test_legate_leaves_its_threads_unpinned_so_that_students_side_by_side_spread():
    """Pinned, every student's Legate puts its threads on the same first cores of the machine."""
    env = {k: v for k, v in os.environ.items() if k != "REALM_SYNTHETIC_CORE_MAP"}
    done = subprocess.run([sys.executable, "-c", _THREAD_MASKS], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    masks, allowed = json.loads(done.stdout.strip().splitlines()[-1])
    whole = f"{min(allowed)}-{max(allowed)}" if len(allowed) > 1 else str(allowed[0])
    assert masks == [whole], f"every thread may run on every core the process has, not {masks}"


def test_course_run_without_a_command_says_how_to_use_it():
    done = _course_run()
    assert done.returncode == 2
    assert "usage: ./course run COMMAND" in done.stderr


@pytest.mark.skipif(not backends.probe("cupynumeric").ok, reason="cupynumeric not available")
def test_cupynumeric_imported_first_starts_with_the_course_settings():
    """Without LEGATE_CONFIG, Legate configures itself at its first import (and fails on a shared
    machine); `./course` sets it before any kernel or command starts."""
    done = _course_run(sys.executable, "-c", "import cupynumeric; print(float(cupynumeric.ones(3).sum()))")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines() == ["3.0"], "Legate's cuInit lines come first"
    assert "cuInit" not in done.stderr


def test_course_jupyterlab_has_no_news_pop_up():
    pytest.importorskip("jupyterlab_server", reason="JupyterLab is not installed (the GPU test host has none)")
    done = _course_run(sys.executable, "-c", "import json; from jupyterlab_server.config import get_static_page_config; "
                       "print(json.dumps(get_static_page_config()))")
    assert done.returncode == 0, done.stderr
    disabled = json.loads(done.stdout.splitlines()[-1])["disabledExtensions"]
    assert disabled.get("@jupyterlab/apputils-extension:announcements") is True


def _stage(tmp_path: Path) -> Path:
    """The course script in a copy of the repository's layout (what it writes lands there)."""
    stage = tmp_path / "clone"
    stage.mkdir()
    for name in ("course", "pyproject.toml"):
        shutil.copy2(ROOT / name, stage / name)
    shutil.copytree(ROOT / "constraints", stage / "constraints")
    return stage


def _stub_python(tmp_path: Path, name: str = "python") -> Path:
    """A Python that records what it is asked to run with -m (jupyter, pip, venv) in RECORD and
    runs everything else with the test's interpreter; `-m venv DIR` makes DIR/bin/python a stub too."""
    stub = tmp_path / "bin" / name
    stub.parent.mkdir(exist_ok=True)
    stub.write_text(f"""#!/bin/sh
if [ "$1" = -m ] && [ "$2" = venv ]; then mkdir -p "$3/bin" && cp "$0" "$3/bin/python"; exit 0; fi
if [ "$1" = -m ] && [ "$2" != gs_course.cli ]; then printf '%s\\n' "$*" >>"$RECORD"; exit 0; fi
exec {sys.executable} "$@"
""")
    stub.chmod(0o755)
    return stub


def test_course_lab_serves_the_students_own_copy_and_keeps_their_work(tmp_path):
    """notebooks/ is the course's, regenerated from solutions/: JupyterLab opens the student's copy
    (my-notebooks/, ignored by git), and a later start keeps a notebook they changed."""
    stage, record = _stage(tmp_path), tmp_path / "record"
    env = {**os.environ, "GS_COURSE_PYTHON": str(_stub_python(tmp_path)), "RECORD": str(record)}
    env.pop("GS_COURSE_NOTEBOOKS", None)
    done = subprocess.run([str(stage / "course"), "lab", "--no-browser"], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    mine = stage / "my-notebooks"
    assert record.read_text().split() == ["-m", "jupyter", "lab", f"--notebook-dir={mine}",
                                          *(["--allow-root"] if os.geteuid() == 0 else []), "--no-browser"]
    assert (mine / "1_Python_GPU_JAX.ipynb").read_bytes() == (ROOT / "notebooks" / "1_Python_GPU_JAX.ipynb").read_bytes()
    assert (mine / ".gitignore").read_text().splitlines()[-1] == "*"
    (mine / "1_Python_GPU_JAX.ipynb").write_text("my answers")
    done = subprocess.run([str(stage / "course"), "lab"], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert (mine / "1_Python_GPU_JAX.ipynb").read_text() == "my answers"


def test_course_run_keeps_the_callers_working_directory(tmp_path):
    """`./course run gs-course run -o out.h5` from elsewhere writes out.h5 where the caller is."""
    done = subprocess.run([str(ROOT / "course"), "run", sys.executable, "-c", "import os; print(os.getcwd())"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300,
                          env={**os.environ, "GS_COURSE_PYTHON": sys.executable})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == str(tmp_path)


def test_course_setup_installs_the_tested_versions_of_its_python(tmp_path):
    """The venv gets constraints/pyX.Y.txt of the Python it is made with (CI's, the images' and the
    GPU host's versions are those files)."""
    stage, record = _stage(tmp_path), tmp_path / "record"
    stub = _stub_python(tmp_path, "python3.12")
    env = {k: v for k, v in os.environ.items() if k not in ("GS_COURSE_PYTHON", "VIRTUAL_ENV")}
    env.update(PATH=f"{stub.parent}:/usr/bin:/bin", RECORD=str(record), GS_COURSE_EXTRAS="cuda12")
    done = subprocess.run([str(stage / "course"), "setup"], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    constraints = stage / "constraints" / f"py{sys.version_info.major}.{sys.version_info.minor}.txt"
    installs = [line.split() for line in record.read_text().splitlines() if line.startswith("-m pip install")]
    assert installs and all(words[words.index("-c") + 1] == str(constraints) for words in installs), installs
    assert installs[-1][-2:] == ["-e", f"{stage}[lab,test,cuda12]"]
    pins = dict(line.split("==") for line in constraints.read_text().splitlines() if not line.startswith("#"))
    assert {"jax", "jaxlib", "numpy", "cupy-cuda12x", "cupy-cuda13x", "nvidia-cupynumeric", "jupyterlab"} <= set(pins)


def test_nbval_runs_a_notebook_under_the_kernel_it_declares(tmp_path):
    """The course's configuration (pyproject.toml's addopts), as ./course test and the instructor
    check run it: a notebook that declares the course's Legate kernel runs in that kernel (its
    JAX_PLATFORMS=cpu), not in the test's own environment."""
    from gs_course.delivery import jupyter_kernels as kernels

    cell = {"cell_type": "code", "execution_count": 1, "metadata": {}, "source": "import os\nprint(os.environ.get('JAX_PLATFORMS'))",
            "outputs": [{"name": "stdout", "output_type": "stream", "text": "cpu\n"}]}
    notebook = {"cells": [cell], "nbformat": 4, "nbformat_minor": 4,
                "metadata": {"kernelspec": {"name": kernels.LEGATE_KERNEL, "display_name": kernels.LEGATE_DISPLAY_NAME,
                                            "language": "python"}}}
    (tmp_path / "declared.ipynb").write_text(json.dumps(notebook))
    env = {k: v for k, v in os.environ.items() if k not in ("JAX_PLATFORMS", "JUPYTER_PATH")}
    done = subprocess.run([str(ROOT / "course"), "test", "-q", "-p", "no:cacheprovider", "--rootdir", str(ROOT),
                           "-c", str(ROOT / "pyproject.toml"), str(tmp_path / "declared.ipynb")],
                          capture_output=True, text=True, timeout=300, env={**env, "GS_COURSE_PYTHON": sys.executable})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout


def test_every_solved_notebook_declares_a_kernel_the_course_has():
    declared = {json.loads(path.read_text())["metadata"]["kernelspec"]["name"] for path in (ROOT / "solutions").glob("*.ipynb")}
    done = _course_run(sys.executable, "-c", "import json; from jupyter_client.kernelspec import KernelSpecManager; "
                       "print(json.dumps(sorted(KernelSpecManager().find_kernel_specs())))")
    assert done.returncode == 0, done.stderr
    assert declared <= set(json.loads(done.stdout.splitlines()[-1])) >= {"gs-course-legate"}
