"""The command line: a run that writes what it says, one clear line and exit code 2 for bad input."""

import os
import signal
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import numpy as np
import pytest

from gs_course import backends
from gs_course.cli import main
from gs_course.delivery.instructor import select_notebooks
from gs_course.model import PARITY_ATOL, reference_run
from gs_course.output import read_frames
from gs_course.parameters import Parameters

SMALL = ["-r", "20", "-c", "30", "--backend", "numpy", "--no-progress"]


def test_run_writes_the_images_and_reports_the_speed(tmp_path, capsys):
    out = tmp_path / "gs.h5"
    code = main(["run", "-n", "3", "-e", "10", "-t", "0.5", "-f", "0.03", "-k", "0.06", "-o", str(out), *SMALL])
    printed = capsys.readouterr().out
    assert code == 0
    assert "Gray-Scott 20 x 30, 3 images x 10 steps, F=0.03 k=0.06 dt=0.5, on numpy" in printed
    assert "30 steps in" in printed and "steps/s" in printed and "(includes compilation)" in printed
    assert f"wrote 3 images to {out}" in printed
    frames, attrs = read_frames(out)
    assert frames.shape == (3, 20, 30) and attrs["dt"] == 0.5 and attrs["complete"]
    _, v = reference_run(20, 30, 30, Parameters(feed=0.03, kill=0.06, dt=0.5))
    np.testing.assert_allclose(frames[-1], v, rtol=0, atol=PARITY_ATOL)


def test_preset_and_default_backend(capsys):
    assert main(["run", "-n", "1", "-e", "2", "-r", "16", "-c", "16", "--preset", "maze", "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "F=0.029 k=0.057" in printed and f"on {backends.default_backend()}" in printed


@pytest.mark.parametrize(
    "args, message",
    [
        (["-r", "0"], "rows must be at least 16"),
        (["-c", "-5"], "columns must be at least 16"),
        (["-n", "0"], "--images must be at least 1"),
        (["-e", "-1"], "--steps must be at least 1"),
        (["-t", "0"], "dt must be > 0"),
        (["-f", "nan"], "feed must be finite"),
        (["--preset", "stripes"], "unknown preset 'stripes'; choose one of spots"),
        (["--backend", "numba"], "unknown backend 'numba'; the backends are numpy, jax, cupynumeric, cupy, torch; working here: numpy"),
        (["--formulation", "magic"], "backend numpy has no formulation 'magic'"),
        (["-r", "3000000", "-c", "3000000"], "the largest grid of this shape that fits is -r"),
        (["-o", "/no/such/folder/out.h5"], "cannot write /no/such/folder/out.h5: folder /no/such/folder does not exist"),
        (["-o", "/"], "output / is a folder"),
    ],
)
def test_bad_input_gets_one_clear_line(args, message, capsys):
    base = ["run", "-n", "1", "-e", "1", "-r", "20", "-c", "20", "--backend", "numpy", "--no-progress"]
    assert main(base + args) == 2
    err = capsys.readouterr().err
    assert message in err and err.startswith("gs-course: error: ") and err.count("\n") == 1


def test_a_backend_that_cannot_run_here_lists_those_that_can(capsys):
    missing = next((name for name in backends.BACKENDS if not backends.probe(name).ok), None)
    if missing is None:
        pytest.skip("every backend runs here")
    assert main(["run", "-n", "1", "-e", "1", "-r", "16", "-c", "16", "--backend", missing]) == 2
    err = capsys.readouterr().err
    assert f"backend {missing} cannot run here: {backends.probe(missing).reason}" in err and "working here: numpy" in err


def test_unstable_time_step_warns_in_one_line(capsys):
    assert main(["run", "-n", "1", "-e", "1", "-t", "2", *SMALL]) == 0
    assert "gs-course: warning: dt = 2.0 is above the stable limit 1.67" in capsys.readouterr().err


_EVERY_FORMULATION_WITH_OUTPUT = """
import sys
from gs_course import backends, cli
backend, folder = sys.argv[1:]
for formulation in backends.load(backend).FORMULATIONS:
    print("running", formulation, flush=True)
    code = cli.main(["run", "--backend", backend, "--formulation", formulation, "-n", "3", "-e", "4",
                     "-r", "16", "-c", "24", "--no-progress", "-o", f"{folder}/{formulation}.h5"])
    assert code == 0, (formulation, code)
"""


def test_every_formulation_writes_its_images_from_the_writer_thread(backend, tmp_path):
    """`run -o` hands each image to a second thread that writes it (and drops it): a formulation
    whose image still holds its library's memory crashed there (cuPyNumeric's slices: Legion
    aborted the process). A child process per backend, so that an abort fails this test alone."""
    done = subprocess.run([sys.executable, "-c", _EVERY_FORMULATION_WITH_OUTPUT, backend, str(tmp_path)],
                          capture_output=True, text=True, timeout=600)
    ran = [line.split()[1] for line in done.stdout.splitlines() if line.startswith("running ")]
    said = [line for line in (done.stdout + done.stderr).splitlines() if "EXCEPTION" in line or "Error" in line]
    assert done.returncode == 0, f"{backend} {ran[-1] if ran else ''}: exit {done.returncode}: {said[:3]}"
    assert ran == list(backends.load(backend).FORMULATIONS)
    _, v = reference_run(16, 24, 12, Parameters())
    for formulation in ran:
        frames, attrs = read_frames(tmp_path / f"{formulation}.h5")
        assert frames.shape == (3, 16, 24) and attrs["complete"] and attrs["formulation"] == formulation
        np.testing.assert_allclose(frames[-1], v, rtol=0, atol=PARITY_ATOL, err_msg=f"{backend} {formulation}")


def test_run_gives_back_the_signal_handlers_it_replaced(tmp_path):
    """Called in-process (a notebook, a test), `main` leaves the caller's Ctrl-C and SIGTERM as it found them."""
    def mine(signum, frame):
        pass

    before = {signum: signal.signal(signum, mine) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        assert main(["run", "-n", "2", "-e", "1", "-o", str(tmp_path / "gs.h5"), *SMALL]) == 0
        assert signal.getsignal(signal.SIGINT) is mine and signal.getsignal(signal.SIGTERM) is mine
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)


def _start(tmp_path, *args):
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.Popen([sys.executable, "-m", "gs_course.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_stopped_run_exits_130_and_keeps_its_images(tmp_path, sig):
    out = tmp_path / "stopped.h5"
    proc = _start(tmp_path, "run", "-n", "100000", "-e", "1", "-o", str(out), *SMALL)
    deadline = time.time() + 60
    while time.time() < deadline and not out.exists():
        time.sleep(0.1)
    time.sleep(1.0)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    frames, attrs = read_frames(out)
    assert 0 < len(frames) == attrs["images_written"] < 100000 and not attrs["complete"]
    # every image computed before the signal is kept, the ones still queued for the writer too
    assert f"interrupted after {len(frames)} of 100000 images; {out} keeps the {len(frames)} completed images" in err
    assert "Traceback" not in err


def test_doctor_lists_every_backend_and_the_shared_gpu_settings():
    done = subprocess.run([sys.executable, "-m", "gs_course.cli", "doctor"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    for name in backends.BACKENDS:
        assert f"  {name} " in done.stdout
    assert "runs on CPU" in done.stdout  # numpy at least
    assert "XLA_PYTHON_CLIENT_PREALLOCATE=" in done.stdout and "LEGATE_CONFIG=" in done.stdout


def test_doctor_require_gpu_fails_without_one():
    done = subprocess.run([sys.executable, "-m", "gs_course.cli", "doctor", "--require-gpu"],
                          capture_output=True, text=True, timeout=600)
    has_gpu = any(backends.probe(name).on_gpu for name in backends.GPU_PREFERENCE)
    assert done.returncode == (0 if has_gpu else 1)
    if not has_gpu:
        assert "no backend runs on a GPU here" in done.stderr


def test_console_script_is_installed():
    script = shutil.which("gs-course", path=os.pathsep.join([os.path.dirname(sys.executable), sysconfig.get_path("scripts")]))
    assert script, "gs-course is not installed: pip install -e ."
    done = subprocess.run([script, "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("gs-course ")


def test_instructor_check_takes_notebooks_by_name_or_number(capsys):
    solved = [Path(f"solutions/{name}.ipynb") for name in ("1_Python_GPU_JAX", "2_Python_GPU_cuPyNumeric")]
    assert select_notebooks(solved, ["2", "1_Python_GPU_JAX.ipynb", "solutions/2_Python_GPU_cuPyNumeric"]) == solved[::-1]
    assert main(["instructor-check", "--size", "small", "7"]) == 2
    assert "no single notebook '7' in solutions/; the notebooks are 1_Python_GPU_JAX.ipynb" in capsys.readouterr().err


def test_instructor_check_refuses_an_unwritable_summary(capsys):
    assert main(["instructor-check", "--summary", "/no/such/folder/summary.md"]) == 2
    assert "folder /no/such/folder does not exist" in capsys.readouterr().err


def test_run_takes_its_grid_from_the_course_choice_and_says_so(capsys, monkeypatch):
    monkeypatch.setenv("GS_COURSE_SIZE", "small")
    assert main(["run", "-n", "1", "-e", "1", "--backend", "numpy", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("GS_COURSE_SIZE=small: running 135 x 240 (")
    assert "Gray-Scott 135 x 240, 1 images x 1 steps" in out


def test_an_output_folder_is_made_where_only_it_is_missing(tmp_path):
    """A classroom's `--out results/new` made before it runs, not refused (a site's first run lost
    its classroom so); a missing parent, or a file, gets one line that says what to do."""
    from gs_course import paths

    assert paths.output_folder_problem("--out", tmp_path / "new") is None and (tmp_path / "new").is_dir()
    assert "make it first (mkdir -p" in paths.output_folder_problem("--out", tmp_path / "a" / "b")
    (tmp_path / "file").write_text("")
    assert paths.output_folder_problem("--out", tmp_path / "file") == f"--out {tmp_path / 'file'} is a file, not a folder: give a folder"
