"""In a notebook, a rejected answer shows its hint alone, and the cell still fails (Run all and
nbval stop there): run in a real IPython kernel through nbclient."""

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

WRONG_STEP = """
import numpy as np
from gs_course import check

def step(u, v, p):
    return u, v

check.step(step, device_type=None, to_device=np.asarray)
"""


def _run(*sources):
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    client = NotebookClient(notebook, timeout=120, kernel_name="python3")
    error = None
    try:
        client.execute()
    except CellExecutionError as err:
        error = err
    return notebook, error


def test_a_rejected_answer_shows_the_hint_alone_and_fails_the_cell():
    notebook, error = _run(WRONG_STEP, "print('after')")
    assert error is not None, "the cell of a wrong answer must fail"
    outputs = notebook.cells[0].outputs
    assert [o.output_type for o in outputs] == ["error"]
    shown = "\n".join(outputs[0].traceback)
    assert "it is the state you were given" in shown
    assert "Traceback" not in shown and "check.py" not in shown
    assert len(shown.splitlines()) <= 3
    assert not notebook.cells[1].outputs, "execution must stop at the failed cell"


def test_other_errors_keep_their_traceback():
    notebook, error = _run("import gs_course.lessons.checkers\n1 / 0")
    assert error is not None
    assert "Traceback" in "\n".join(notebook.cells[0].outputs[0].traceback)


def test_a_right_answer_prints_its_line():
    notebook, error = _run("from gs_course import check\ncheck.ok('fine')")
    assert error is None
    assert notebook.cells[0].outputs[0].text == "\N{CHECK MARK} fine\n"


def test_the_placeholder_left_in_a_function_shows_one_line_naming_it_and_fails_the_cell():
    """The student's step is written, their laplacian still the exercise's placeholder: one line names
    laplacian and its line, no traceback through the checkers; the cell fails, as a NotImplementedError."""
    from gs_course.lessons.notebooks import YOUR_TURN

    source = ("import numpy as np\nfrom gs_course import check\n\ndef laplacian(a):\n    " + YOUR_TURN +
              "\n\ndef step(u, v, p):\n    return u + laplacian(u), v\n\ncheck.step(step, device_type=None, to_device=np.asarray)")
    notebook, error = _run(source, "print('after')")
    assert error is not None and error.ename == "NotImplementedError"
    shown = "\n".join(notebook.cells[0].outputs[0].traceback)
    assert "placeholder" in shown and "in your laplacian (line 5 of the cell that defines it)" in shown, shown
    assert "Traceback" not in shown and "check_" not in shown and len(shown.splitlines()) == 1
    assert not notebook.cells[1].outputs


def test_another_not_implemented_error_keeps_its_traceback():
    notebook, error = _run("import gs_course.lessons.checkers\nraise NotImplementedError('mine')")
    assert error is not None
    shown = "\n".join(notebook.cells[0].outputs[0].traceback)
    assert "Traceback" in shown and "NotImplementedError" in shown and "mine" in shown


def test_an_error_the_course_shows_is_kept_for_debug():
    """IPython keeps an error it shows itself for %debug and %tb (sys.last_*); one the course's handler
    shows (another NotImplementedError, a hint) is kept too."""
    notebook, error = _run("import sys\nimport gs_course.lessons.checkers\n"
                           "get_ipython().run_cell(\"raise NotImplementedError('mine')\")\n"
                           "print(type(sys.last_value).__name__, sys.last_traceback is not None)")
    assert error is None
    assert notebook.cells[0].outputs[-1].text == "NotImplementedError True\n"
