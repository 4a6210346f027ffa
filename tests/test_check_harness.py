"""Every exercise's checker on the answers of gs_course.lessons.check_answers: each case's verdict and line
(right answers written in several ways pass, wrong ones get the line that names their mistake, a
check that cannot run here says "not checked"). The GPU's cases skip here with the reason; on the
GPU host they run (python -m gs_course.lessons.check_harness --gpu, or this file)."""

import os
import subprocess
import sys

import pytest

from gs_course.lessons import check_harness
from gs_course.lessons.check_answers import EXERCISES, Case
from gs_course.lessons.check_cases import CASES

GPU = check_harness.gpu_here()


def _param(case: Case):
    reason = check_harness.runs_here(case, GPU)
    return pytest.param(case, id=case.label, marks=[pytest.mark.skip(reason=reason)] if reason else [])


IN_THIS_PROCESS = [_param(c) for c in CASES if not EXERCISES[c.exercise].own_process]
OWN_PROCESS = sorted({c.exercise for c in CASES if EXERCISES[c.exercise].own_process})


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")  # a student's thread that fails
@pytest.mark.parametrize("answer", IN_THIS_PROCESS)
def test_each_answer_gets_its_verdict_and_line(answer):
    outcome = check_harness.run(answer, EXERCISES)
    wrong = check_harness.mismatch(answer, outcome)
    assert wrong is None, wrong


@pytest.mark.parametrize("exercise", OWN_PROCESS)
def test_the_exercises_of_their_own_process(exercise):
    """The halo exchange needs JAX on several devices, which XLA_FLAGS sets before JAX starts."""
    env = {**os.environ, "XLA_FLAGS": os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4"}
    done = subprocess.run([sys.executable, "-m", "gs_course.lessons.check_harness", "--only", exercise], capture_output=True,
                          text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


def test_every_case_names_a_known_exercise_and_its_changes_apply():
    for case in CASES:
        assert case.verdict in (check_harness.PASS, check_harness.FAIL, check_harness.NOT_CHECKED), case
        case.source(EXERCISES)  # raises where an (old, new) pair's old text is not in the reference answer


def test_a_case_that_expects_the_wrong_verdict_is_reported():
    """The harness itself: a wrong answer expected to pass is a mismatch, with the checker's line."""
    case = Case("synthesis 1", ("dtype=np.float64", "dtype=np.float32"), check_harness.PASS)
    wrong = check_harness.mismatch(case, check_harness.run(case, EXERCISES))
    assert wrong is not None and "expected pass, got fail" in wrong


NOTEBOOKS = {"jax": "1_Python_GPU_JAX", "cupynumeric": "2_Python_GPU_cuPyNumeric", "cupy": "3_Python_GPU_CuPy",
             "synthesis": "4_Python_GPU_synthesis"}


def test_the_harness_calls_each_checker_as_its_notebook_does():
    """Each exercise's checker call (its last line) is in its solved notebook as it is: a notebook
    that calls a checker otherwise needs its exercise here changed too (gs_course/check_answers.py)."""
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "solutions"
    for name, exercise in EXERCISES.items():
        notebook = json.loads((root / f"{NOTEBOOKS[name.split()[0]]}.ipynb").read_text())
        code = "\n".join("".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "code")
        call = [line for line in exercise.answer.strip().splitlines() if "check." in line][-1]
        assert call.strip() in code, f"{name}: the notebook does not call {call.strip()!r}"


def test_each_setup_defines_what_the_earlier_exercises_of_its_notebook_define():
    """An answer may call what an earlier exercise defined (images calling the time loop's `run`), as
    the notebook lets it: every name an earlier exercise's solved cell binds at its top level is in
    the exercise's setup (JAX's and cuPyNumeric's notebooks; CuPy's kernels are compiled by their
    checkers' calls)."""
    import ast
    import json
    from pathlib import Path

    from gs_course.lessons.notebooks import exercises

    def bound(code: str) -> set[str]:
        names = set()
        for node in ast.parse(code).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Assign):
                names.update(n.id for target in node.targets for n in ast.walk(target) if isinstance(n, ast.Name))
        return names

    root = Path(__file__).resolve().parents[1] / "solutions"
    for name, exercise in EXERCISES.items():
        if name.split()[0] not in ("jax", "cupynumeric"):
            continue
        cells = exercises(json.loads((root / f"{NOTEBOOKS[name.split()[0]]}.ipynb").read_text()))
        call = [line for line in exercise.answer.strip().splitlines() if "check." in line][-1].strip()
        here = next(i for i, cell in enumerate(cells) if call in cell)
        wanted = set().union(*(bound(cell) for cell in cells[:here]))
        assert wanted <= bound(exercise.setup), f"{name}: the setup lacks {sorted(wanted - bound(exercise.setup))}"


NOTEBOOK_OF = {"jax": "1_Python_GPU_JAX", "cupynumeric": "2_Python_GPU_cuPyNumeric", "cupy": "3_Python_GPU_CuPy",
               "synthesis": "4_Python_GPU_synthesis"}


@pytest.mark.parametrize("name", sorted(EXERCISES))
def test_each_exercise_is_named_as_its_notebook_numbers_it(name):
    """"cupy 5" is the CuPy notebook's Exercise 5 (its checker's call in that solved cell), as the
    playtesters and the students read it; "jax 1 step" is one checker of a cell that has two."""
    import json
    import re

    from gs_course.lessons.notebooks import SOLUTIONS, exercises

    library, number = name.split()[:2]
    solved = exercises(json.loads((SOLUTIONS / f"{NOTEBOOK_OF[library]}.ipynb").read_text()))
    call = re.findall(r"(\w+\.\w+)\(", EXERCISES[name].answer.strip().splitlines()[-1])[-1]
    assert f"{call}(" in solved[int(number) - 1], f"{name}: its checker {call} is not in exercise {number}'s cell"
