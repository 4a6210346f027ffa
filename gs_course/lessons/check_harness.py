"""Every exercise's checker run on answers given as data: `gs_course.lessons.check_answers` holds, per
exercise, the notebook's context and its reference answer (the solution cell, the checker call
included), and the cases, each an answer (the reference with a few words changed, or a whole cell)
with the verdict it must get ("pass", "fail", "not checked") and a piece of its line. A new wrong
answer is one line there.

    python -m gs_course.lessons.check_harness            # the cases that run here (CPU), one line each
    python -m gs_course.lessons.check_harness --gpu      # with the GPU's cases (CuPy on an NVIDIA GPU)
    python -m gs_course.lessons.check_harness --only "synthesis 8"

The test suite runs the same cases (tests/test_check_harness.py). A case marked `gpu` needs CuPy on
a GPU; one marked `cpu` checks what a checker does without one (NumPy in CuPy's place), and is
skipped where there is a GPU.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import gc
import io
import linecache
import os
import re
import sys
import time
import types

from ..backends import probe
from . import cuda_on_cpu
from .check_answers import EXERCISES, FAIL, NOT_CHECKED, PASS, Case
from .check_cases import CASES

@dataclasses.dataclass(frozen=True)
class Outcome:
    verdict: str  # pass, fail, not checked, or error (a raw exception: always a defect)
    line: str
    seconds: float



@functools.cache
def _loads(backend: str) -> bool:
    return probe(backend).ok


def gpu_here() -> bool:
    return _loads("cupy")


def runs_here(case: Case, gpu: bool, exercises: dict | None = None) -> str | None:
    """None where `case` runs on this machine, else why not (CI requires cuPyNumeric: its
    conftest fails the run where it cannot load, so skipping it here hides nothing there)."""
    if case.exercise.startswith("cupynumeric") and not _loads("cupynumeric"):
        return "needs cuPyNumeric, which cannot load here"
    if case.where == "gpu" and not gpu:
        return "needs CuPy on an NVIDIA GPU (run python -m gs_course.lessons.check_harness --gpu on the GPU host)"
    if case.where == "cpu" and gpu:
        return "checks what the checker does without a GPU"
    if (exercises or EXERCISES)[case.exercise].kernel and not gpu and cuda_on_cpu.compiler() is None:
        return "a kernel: without a GPU it runs on the CPU only with a C++ compiler (c++, g++ or clang++)"
    return None


def _compiled(source: str, name: str):
    """`source` compiled as a notebook's cell is, its lines where `inspect.getsource` finds them
    (IPython keeps every cell's in linecache; the checkers read a task's decorator there)."""
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    return compile(source, name, "exec")


def run(case: Case, exercises: dict | None = None) -> Outcome:
    """Run the case's answer in a fresh module, as its notebook would: its verdict and line."""
    from . import checkers as check  # imports JAX: after XLA_FLAGS (main)

    exercises = EXERCISES if exercises is None else exercises
    exercise = exercises[case.exercise]
    module = types.ModuleType("student_answer")  # the answer's functions belong to it (legate_check follows them)
    printed = io.StringIO()
    started = time.perf_counter()
    try:
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(io.StringIO()):  # a student's thread's error
            exec(_compiled(exercise.setup, f"<{case.exercise} setup>"), module.__dict__)  # noqa: S102
            exec(_compiled(case.source(exercises), f"<{case.exercise} answer>"), module.__dict__)  # noqa: S102
    except check.NotYet as err:
        return Outcome(FAIL, str(err), time.perf_counter() - started)
    except Exception as err:  # noqa: BLE001 (a raw error is an outcome: the case says it is a defect)
        first = (str(err).strip().splitlines() or [""])[0]
        return Outcome("error", f"{type(err).__name__}: {first[:300]}", time.perf_counter() - started)
    finally:
        # The case's module (its functions refer to it: a cycle) is freed here, in this thread: left to a
        # later collection, its cuPyNumeric arrays could be freed in some other thread, which Legate does not
        # survive (a writer thread of a later case).
        module.__dict__.clear()
        gc.collect()
    lines = [line for line in printed.getvalue().splitlines() if line.strip()]
    ticks = [line for line in lines if line.startswith("\N{CHECK MARK}")]
    unchecked = [line for line in lines if "not checked" in line.lower() and not line.startswith("\N{CHECK MARK}")]
    seconds = time.perf_counter() - started
    if unchecked:
        return Outcome(NOT_CHECKED, unchecked[-1], seconds)
    if ticks:
        return Outcome(PASS, ticks[-1], seconds)
    return Outcome("error", "the checker printed no tick and raised nothing: " + " | ".join(lines)[:300], seconds)


def mismatch(case: Case, outcome: Outcome) -> str | None:
    """Why `outcome` is not what `case` expects, else None."""
    if outcome.verdict != case.verdict:
        return f"expected {case.verdict}, got {outcome.verdict}: {outcome.line}"
    if case.hint and not re.search(case.hint, outcome.line):
        return f"the line does not match {case.hint!r}: {outcome.line}"
    if "Traceback" in outcome.line or len(outcome.line.splitlines()) > 1:
        return f"the line is not one line: {outcome.line}"
    return None


def selected(cases, only: str | None):
    return [c for c in cases if only is None or c.exercise == only or c.exercise.startswith(only + " ")]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gs_course.lessons.check_harness", description=__doc__.split("\n\n")[0])
    parser.add_argument("--gpu", action="store_true", help="require a GPU: fail instead of skipping its cases")
    parser.add_argument("--only", help='one notebook or exercise, e.g. "jax" or "synthesis 8"')
    args = parser.parse_args(argv)
    if "jax" not in sys.modules:  # the halo exchange needs several devices: four of the CPU's where no GPUs
        os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4"

    gpu = gpu_here()
    if args.gpu and not gpu:
        print("--gpu: CuPy finds no NVIDIA GPU here")
        return 2
    failures = 0
    for case in selected(CASES, args.only):
        reason = runs_here(case, gpu)
        if reason:
            print(f"skip  {case.label}: {reason}")
            continue
        outcome = run(case, EXERCISES)
        wrong = mismatch(case, outcome)
        failures += wrong is not None
        print(f"{'FAIL' if wrong else 'ok  '}  {case.label} ({outcome.seconds:.1f} s): {wrong or outcome.line}"[:400])
    print(f"{failures} case(s) not as expected")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
