"""The notebooks: students get the solutions' notebooks minus the solutions and outputs, kept in
step by a test; each exercise ends with a checker; the student version runs up to its first
'your turn'. (nbval runs the solved notebooks themselves: solutions/ is in the test paths.)"""

import json

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from gs_course import notebooks

PAIRS = notebooks.pairs()


def _code(notebook: dict) -> list[str]:
    return ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]


def test_solution_blocks_become_your_turn_lines_at_their_indentation():
    source = "def f(x):\n    y = 1\n    ### BEGIN SOLUTION\n    return x + y\n    ### END SOLUTION\n\n\ncheck(f)"
    assert notebooks._strip_solution(source) == f"def f(x):\n    y = 1\n    {notebooks.YOUR_TURN}\n\n\ncheck(f)"
    with pytest.raises(ValueError, match="unbalanced solution markers"):
        notebooks._strip_solution("### BEGIN SOLUTION\nx = 1\n")


def test_student_notebooks_are_up_to_date_with_the_solutions():
    assert PAIRS, "no notebooks in solutions/"
    assert notebooks.main(["--check"]) == 0, "run: python -m gs_course.notebooks"


@pytest.mark.parametrize("solution, student", PAIRS, ids=[p.name for p, _ in PAIRS])
def test_exercises_end_with_a_checker_and_students_get_no_outputs(solution, student):
    solved, given = json.loads(solution.read_text()), json.loads(student.read_text())
    exercises = [cell for cell in _code(solved) if notebooks.BEGIN in cell]
    assert len(exercises) >= 5
    assert all("check." in cell.split(notebooks.END)[-1] for cell in exercises), "each exercise ends with a check"
    checked = [c for c in solved["cells"] if c["cell_type"] == "code" and notebooks.BEGIN in "".join(c["source"])]
    assert all("\N{CHECK MARK}" in json.dumps(c["outputs"], ensure_ascii=False) for c in checked), \
        "the solutions are executed and pass their checks (nbval compares these outputs)"
    assert not any(c.get("outputs") for c in given["cells"] if c["cell_type"] == "code")
    assert sum(notebooks.YOUR_TURN in cell for cell in _code(given)) == len(exercises)
    assert not any(notebooks.BEGIN in cell or notebooks.END in cell for cell in _code(given))


@pytest.mark.parametrize("student", [s for _, s in PAIRS], ids=[s.name for _, s in PAIRS])
def test_student_notebook_runs_up_to_its_first_your_turn(student):
    notebook = nbformat.read(student, as_version=4)
    client = NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(student.parent)}})
    with client.setup_kernel():
        for index, cell in enumerate(notebook.cells):
            if cell.cell_type != "code":
                continue
            try:
                client.execute_cell(cell, index)
            except CellExecutionError as err:
                assert notebooks.YOUR_TURN in cell.source, f"cell {index} failed before any exercise:\n{err}"
                assert "NotImplementedError" in str(err) and "Your turn" in str(err)
                return
    pytest.fail("the student notebook ran to the end: its exercises do not ask for anything")
