"""The course's environment as a newcomer meets it: `gs-course doctor` reads its child probes
through whatever the libraries print while they start, and `./course run` gives any command (the
console script, a Python that imports cuPyNumeric first) the settings `./course lab` gives the
notebooks' kernels."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gs_course import backends, cli

ROOT = Path(__file__).resolve().parent.parent
LEGATE_NOISE = ("[0 - 7f00]    0.000000 {4}{gpu}: cuInit(0) returned 100 (CUDA_ERROR_NO_DEVICE)\n"
                "[0 - 7f00]    0.000000 {5}{gpu}: We are not able to discover the CUDA resources.\n")


def _child_answers(monkeypatch, stdout: str, stderr: str = "", returncode: int = 0):
    def run(command, **kwargs):
        return subprocess.CompletedProcess(command, returncode, stdout=stdout, stderr=stderr)

    monkeypatch.setattr(cli.subprocess, "run", run)


def test_doctor_reads_the_probe_through_what_legate_prints_on_standard_output(monkeypatch):
    answer = {"name": "cupynumeric", "ok": True, "version": "26.6.1", "device": "CPU through Legate"}
    _child_answers(monkeypatch, LEGATE_NOISE + cli._PROBE_MARKER + json.dumps(answer) + "\n")
    found = cli._probe_isolated("cupynumeric")
    assert found == backends.Probe(**answer)


def test_a_probe_that_dies_says_the_last_line_it_wrote(monkeypatch):
    _child_answers(monkeypatch, LEGATE_NOISE, stderr="Traceback ...\nOSError: libatomic.so.1: cannot open\n",
                   returncode=1)
    found = cli._probe_isolated("cupynumeric")
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
    from gs_course.devices import default_legate_config

    assert done.stdout.split("\n")[:2] == [default_legate_config(), "false"]


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
    assert done.stdout.strip().splitlines()[-1] == "3.0"
