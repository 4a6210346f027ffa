"""The notebooks: students get the solutions' notebooks minus the solutions and outputs, kept in
step by a test; each exercise ends with a checker; the student version runs up to each 'your
turn', which is a plain error, and a stuck student catches up with `%catch_up N`. (nbval runs the
solved notebooks themselves: solutions/ is in the test paths.)"""

import json
import re

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from gs_course.lessons import notebooks

PAIRS = notebooks.pairs()


def _code(notebook: dict) -> list[str]:
    return ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]


def test_solution_blocks_become_your_turn_lines_at_their_indentation():
    source = "def f(x):\n    y = 1\n    ### BEGIN SOLUTION\n    return x + y\n    ### END SOLUTION\n\n\ncheck(f)"
    assert notebooks._strip_solution(source, 4) == (
        f"def f(x):\n    y = 1\n    {notebooks.YOUR_TURN}  # stuck? %catch_up 4 in this cell loads the answer\n\n\ncheck(f)")
    with pytest.raises(ValueError, match="unbalanced solution markers"):
        notebooks._strip_solution("### BEGIN SOLUTION\nx = 1\n", 1)


def test_the_catch_up_code_is_the_solved_cell_without_its_markers():
    solved = {"cells": [{"cell_type": "markdown", "source": "### BEGIN SOLUTION in prose"},
                        {"cell_type": "code", "source": ["x = 1\n", "### BEGIN SOLUTION\n", "y = x\n",
                                                         "  ### END SOLUTION  \n", "check(y)"]},
                        {"cell_type": "code", "source": "z = 2"}]}
    assert notebooks.exercises(solved) == ["x = 1\ny = x\ncheck(y)"]


@pytest.mark.parametrize("solution, student", PAIRS, ids=[p.name for p, _ in PAIRS])
def test_exercises_are_numbered_in_order_and_the_notebook_says_how_to_catch_up(solution, student):
    """`%catch_up N` loads the N-th solved cell: the text's exercise N must be that cell, and the
    setup cell registers the magic for this very notebook."""
    solved = json.loads(solution.read_text())
    numbers, found = [], 0
    for cell in solved["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            numbers += [int(n) for n in re.findall(r"\*\*Exercise (\d+)\.\*\*", source)]
        elif notebooks.BEGIN in source:
            found += 1
            assert numbers and numbers[-1] == found, f"exercise cell {found} comes after the text of exercise {numbers[-1:]}"
    assert numbers == list(range(1, found + 1))
    assert any(f'notebooks.enable_catch_up("{solution.stem}")' in "".join(c["source"]) for c in solved["cells"][:3])
    assert "%catch_up" in "".join(solved["cells"][0]["source"]), "the introduction says how to catch up"


def test_student_notebooks_are_up_to_date_with_the_solutions():
    assert PAIRS, "no notebooks in solutions/"
    assert notebooks.main(["--check"]) == 0, "run: python -m gs_course.lessons.notebooks"


def test_one_tutorial_is_regenerated_by_its_number_and_an_unknown_one_named(capsys):
    """Who holds one notebook's lock regenerates that notebook only."""
    assert notebooks.main(["--check", PAIRS[0][0].stem.split("_")[0]]) == 0
    with pytest.raises(SystemExit):
        notebooks.main(["--check", "99"])
    assert "no tutorial 99 in solutions/: 1_" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        notebooks.main(["--check", "1", "99"])
    assert "no tutorial 99 in solutions/: 1_" in capsys.readouterr().err, "an unknown name beside a known one"


def test_a_notebook_is_named_by_file_name_first_words_or_number():
    solved = [solution for solution, _ in PAIRS]
    first = solved[0]
    for name in (first.name, first.stem, f"solutions/{first.name}", first.stem.rsplit("_", 1)[0],
                 first.stem.split("_")[0]):
        assert notebooks.named(solved, name) == [first], name
    assert notebooks.named(solved, first.stem[:-1]) == [], "a name cut inside a word names nothing"


@pytest.mark.parametrize("solution, student", PAIRS, ids=[p.name for p, _ in PAIRS])
def test_exercises_end_with_a_checker_and_students_get_no_outputs(solution, student):
    solved, given = json.loads(solution.read_text()), json.loads(student.read_text())
    exercises = [cell for cell in _code(solved) if notebooks.BEGIN in cell]
    assert len(exercises) >= 5
    assert all("check." in cell.split(notebooks.END)[-1] for cell in exercises), "each exercise ends with a check"
    checked = [c for c in solved["cells"] if c["cell_type"] == "code" and notebooks.BEGIN in "".join(c["source"])]
    said = [json.dumps(c["outputs"], ensure_ascii=False) for c in checked]  # executed on a CPU, GPU-only checkers say so
    assert all("\N{CHECK MARK}" in out or "not checked here" in out for out in said), \
        "the solutions are executed and pass their checks (nbval compares these outputs)"
    assert not any(c.get("outputs") for c in given["cells"] if c["cell_type"] == "code")
    assert not any("execution" in c.get("metadata", {}) for c in given["cells"]), "no execution times either"
    assert set(given["metadata"]) <= set(notebooks.STUDENT_METADATA), "no saved widget state or run record"
    assert sum(notebooks.YOUR_TURN in cell for cell in _code(given)) == len(exercises)
    assert not any(notebooks.BEGIN in cell or notebooks.END in cell for cell in _code(given))


@pytest.mark.parametrize("solution, student", PAIRS, ids=[p.name for p, _ in PAIRS])
def test_each_your_turn_is_a_plain_error_and_the_catch_up_runs_on(solution, student):
    """The student version runs up to each exercise, which raises the "your turn" error and leaves
    the kernel alive (an error inside a Legate task, for one, would stop it); `%catch_up N` typed
    in the cell puts the solved cell in its place (IPython's set_next_input), which passes its
    checker, and the notebook goes on to the next exercise, and so on to the end."""
    given = nbformat.read(student, as_version=4)
    exercises = sum(notebooks.YOUR_TURN in c.source for c in given.cells if c.cell_type == "code")
    client = NotebookClient(given, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(student.parent)}})
    payloads = []
    client.on_cell_executed = lambda cell, cell_index, execute_reply: payloads.append(execute_reply["content"].get("payload", []))
    turns = 0
    with client.setup_kernel():
        for index, cell in enumerate(given.cells):
            if cell.cell_type != "code":
                continue
            try:
                client.execute_cell(cell, index)
            except CellExecutionError as err:
                assert notebooks.YOUR_TURN in cell.source, f"cell {index} failed, and it is no exercise:\n{err}"
                assert "NotImplementedError" in str(err) and "Your turn" in str(err)
                turns += 1
                assert f"%catch_up {turns} in this cell" in str(err), "the error names the exercise's catch-up"
                typed = nbformat.v4.new_code_cell(f"%catch_up {turns}")
                client.execute_cell(typed, index)  # fails here if the kernel died
                (loaded,) = [p for p in payloads[-1] if p.get("source") == "set_next_input"]
                assert loaded["replace"] and "Exercise" in typed.outputs[0]["text"]
                caught_up = nbformat.v4.new_code_cell(loaded["text"])
                client.execute_cell(caught_up, index)
                said = json.dumps(caught_up.outputs, ensure_ascii=False)  # GPU-only checkers say what they cannot check
                assert "\N{CHECK MARK}" in said or "not checked here" in said, f"the answer fails its checker: {said}"
        wrong = nbformat.v4.new_code_cell(f"%catch_up {exercises + 1}")
        client.execute_cell(wrong, 0)  # nbclient stores the cell at this index of its notebook
        # the kernel may flush a print in two messages (its text, then the newline): read them together
        said = "".join(output.get("text", "") for output in wrong.outputs)
        assert said == f"%catch_up N, with N the exercise's number, 1 to {exercises}\n"
    assert turns == exercises >= 5


def test_a_catch_up_typed_beside_other_code_stops_its_cell_with_its_line_alone():
    """`%catch_up N` typed in place of the stub's "your turn" line runs when the checker calls the
    stub's function: the answer is loaded and the cell stops there with that line alone, where the
    checker would go on to a hint on the old code ("your Laplacian is None"). Typed in another
    exercise's cell (its stub says which), it loads nothing and says whose cell it is."""
    (student,) = [s for _, s in PAIRS if s.name == "3_Python_GPU_CuPy.ipynb"]
    given = nbformat.read(student, as_version=4)
    first = next(i for i, c in enumerate(given.cells) if notebooks.YOUR_TURN in c.source)
    client = NotebookClient(given, timeout=300, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(student.parent)}})
    payloads = []
    client.on_cell_executed = lambda cell, cell_index, execute_reply: payloads.append(execute_reply["content"].get("payload", []))
    typed = {number: nbformat.v4.new_code_cell(given.cells[first].source.replace(
        "raise NotImplementedError", f"%catch_up {number}\n    #")) for number in (1, 2)}
    with client.setup_kernel():
        for index in range(first):
            if given.cells[index].cell_type == "code":
                client.execute_cell(given.cells[index], index)
        for number, cell in typed.items():
            client.execute_cell(cell, first)
            (error,) = [o for o in cell.outputs if o.output_type == "error"]
            assert not [o for o in cell.outputs if o.output_type != "error"], "nothing but the catch-up's line"
            loaded = [p for p in payloads[-1] if p.get("source") == "set_next_input"]
            if number == 1:
                assert error.traceback == ["Exercise 1's answer is now in this cell: run the cell to go on."]
                assert loaded and "### BEGIN" not in loaded[0]["text"] and "check.laplacian(" in loaded[0]["text"]
            else:
                assert error.traceback == ["This cell is exercise 1's: %catch_up 1 loads its answer here (exercise 2's "
                                           "answer goes in exercise 2's cell)"]
                assert not loaded
        # The function still holds the magic until its cell runs again: another cell that calls it loads nothing
        client.execute_cell(typed[1], first)
        later = nbformat.v4.new_code_cell("laplacian(xp.zeros((5, 7), xp.float32))")
        client.execute_cell(later, first + 1)
        assert [o.traceback for o in later.outputs if o.output_type == "error"] == [[
            "your laplacian still holds %catch_up 1: run exercise 1's cell again (it holds the answer now), then this one"]]
        assert not [p for p in payloads[-1] if p.get("source") == "set_next_input"], "the later cell is left as it is"
        # The stub's comment copied along with the magic is no number of its own
        alone = nbformat.v4.new_code_cell("%catch_up 1  # stuck? %catch_up 1 in this cell loads the answer")
        client.execute_cell(alone, first)
        assert [p for p in payloads[-1] if p.get("source") == "set_next_input"]


def test_the_exercise_of_the_running_cell_is_known_by_its_id_or_what_it_holds_of_the_stub():
    """A cell replaced whole by `%catch_up 3` holds nothing of its stub: its id, which JupyterLab sends
    and the student notebook shares with the solved one, still says whose cell it is; without an id
    (another front end), the stub's comment or its checker's call does; a cell of the student's own is
    no exercise's."""
    solution, student = PAIRS[0]
    notebook = json.loads(solution.read_text())
    solved = notebooks.exercises(notebook)
    code = [c for c in notebook["cells"] if c["cell_type"] == "code" and notebooks.BEGIN in "".join(c["source"])]
    given = json.loads(student.read_text())
    assert [c["id"] for c in given["cells"]] == [c["id"] for c in notebook["cells"]], "the student's cells keep their ids"

    class Kernel:
        def __init__(self, cell_id):
            self.cell_id = cell_id

        def get_parent(self, channel):
            return {"metadata": {} if self.cell_id is None else {"cellId": self.cell_id}}

    class Shell:
        def __init__(self, cell_id=None):
            self.kernel = Kernel(cell_id)

    def here(cell: str, cell_id=None):
        return notebooks._exercise_here(Shell(cell_id), cell, notebook, solved)

    assert here("%catch_up 3", code[1]["id"]) == 2
    assert here("%catch_up 3", "an id of the student's own") is None
    assert here("%catch_up 3") is None
    assert here(f"x = 1\n{notebooks.YOUR_TURN}  # stuck? %catch_up 2 in this cell loads the answer") == 2
    assert here("%catch_up 3\n" + solved[1].strip().splitlines()[-1]) == 2
    assert notebooks._exercise_here(object(), "%catch_up 1", notebook, solved) is None
