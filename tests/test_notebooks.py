"""The notebooks: students get the solutions' notebooks minus the solutions and outputs, kept in
step by a test; each exercise ends with a checker; the student version runs up to each 'your
turn', which is a plain error. (nbval runs the solved notebooks themselves: solutions/ is in the
test paths.)"""

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
    assert not any("execution" in c.get("metadata", {}) for c in given["cells"]), "no execution times either"
    assert sum(notebooks.YOUR_TURN in cell for cell in _code(given)) == len(exercises)
    assert not any(notebooks.BEGIN in cell or notebooks.END in cell for cell in _code(given))


@pytest.mark.parametrize("solution, student", PAIRS, ids=[p.name for p, _ in PAIRS])
def test_each_your_turn_is_a_plain_error_and_the_solution_then_runs_on(solution, student):
    """The student version runs up to each exercise, which raises the "your turn" error and leaves
    the kernel alive (an error inside a Legate task, for one, would stop it); with the solution
    run in its place, the notebook goes on to the next exercise, and so on to the end."""
    given, solved = nbformat.read(student, as_version=4), nbformat.read(solution, as_version=4)
    exercises = sum(notebooks.YOUR_TURN in c.source for c in given.cells if c.cell_type == "code")
    client = NotebookClient(given, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(student.parent)}})
    turns = 0
    with client.setup_kernel():
        for index, (cell, solved_cell) in enumerate(zip(given.cells, solved.cells)):
            if cell.cell_type != "code":
                continue
            try:
                client.execute_cell(cell, index)
            except CellExecutionError as err:
                assert notebooks.YOUR_TURN in cell.source, f"cell {index} failed, and it is no exercise:\n{err}"
                assert "NotImplementedError" in str(err) and "Your turn" in str(err)
                turns += 1
                client.execute_cell(solved_cell, index)  # fails here if the kernel died
    assert turns == exercises >= 5
