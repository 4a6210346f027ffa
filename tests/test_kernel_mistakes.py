"""The step kernels' checkers on a grid of as many rows as columns, which `check_model.step` may
draw: there a row stride of rows for cols, or an index transposed, gives the right values, so the
checker's first step on a grid of more rows than columns must name it (run on the CPU)."""

import pytest

from gs_course.lessons import check_model, cupy_check
from gs_course.lessons.check_core import NotYet
from gs_course.lessons.check_answers import EXERCISES

REFERENCE = EXERCISES["cupy 4"].answer.split('step_body = """')[1].split('"""')[0]

pytestmark = pytest.mark.skipif(not cupy_check._on_the_cpu(), reason="runs the kernel on the CPU: needs a C++ "
                                "compiler, and no GPU (where CuPy runs it)")


@pytest.mark.parametrize("index, hint", [("r * rows + c", "a row is cols cells long"), ("c * rows + r", "transposed")])
def test_a_wrong_row_stride_is_named_on_a_square_grid(monkeypatch, index, hint):
    monkeypatch.setattr(check_model, "_grid", lambda rng: (41, 41))
    body = REFERENCE.replace("u[r * cols + c]", f"u[{index}]").replace("v[r * cols + c]", f"v[{index}]")
    with pytest.raises(NotYet, match=hint):
        cupy_check.step_kernel(body)


def test_the_right_kernel_passes_on_a_square_grid(monkeypatch, capsys):
    monkeypatch.setattr(check_model, "_grid", lambda rng: (41, 41))
    cupy_check.step_kernel(REFERENCE)
    assert "step: right" in capsys.readouterr().out
