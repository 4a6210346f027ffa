"""The step kernels' checkers on a grid of as many rows as columns, which `check_model.step` may
draw: there a row stride of rows for cols, or an index transposed, gives the right values, so the
checker's first step on a grid of more rows than columns must name it (run on the CPU); and the
compilers' errors of a usual mistake named, in the words of each compiler (nvrtc's only on a GPU
host otherwise)."""

import re

import pytest

from gs_course.lessons import check_model, cupy_check, kernel_mistakes
from gs_course.lessons.check_core import NotYet
from gs_course.lessons.check_answers import EXERCISES

REFERENCE = EXERCISES["cupy 4"].answer.split('step_body = """')[1].split('"""')[0]

on_the_cpu = pytest.mark.skipif(not cupy_check._on_the_cpu(), reason="runs the kernel on the CPU: needs a C++ "
                                "compiler, and no GPU (where CuPy runs it)")


@on_the_cpu
@pytest.mark.parametrize("index, hint", [("r * rows + c", "a row is cols cells long"), ("c * rows + r", "transposed")])
def test_a_wrong_row_stride_is_named_on_a_square_grid(monkeypatch, index, hint):
    monkeypatch.setattr(check_model, "_grid", lambda rng: (41, 41))
    body = REFERENCE.replace("u[r * cols + c]", f"u[{index}]").replace("v[r * cols + c]", f"v[{index}]")
    with pytest.raises(NotYet, match=hint):
        cupy_check.step_kernel(body)


@on_the_cpu
def test_the_right_kernel_passes_on_a_square_grid(monkeypatch, capsys):
    monkeypatch.setattr(check_model, "_grid", lambda rng: (41, 41))
    cupy_check.step_kernel(REFERENCE)
    assert "step: right" in capsys.readouterr().out


#: Each compiler's first error line for the mistake: g++, clang++, nvrtc (CuPy on a GPU).
@pytest.mark.parametrize("kind, old, new, errors, hint", [
    ("raw", "const float uvv = uc * vc * vc;", "const float uvv = uc * vc**2;",
     ("invalid type argument of unary ‘*’ (have ‘int’)", "indirection requires pointer operand ('int' invalid)",
      'kern.cu(14): error: operand of "*" must be a pointer but has type "int"'), "C has no \\*\\*"),
    ("raw", "const float uvv = uc * vc * vc;", "const float uvv = uc * (vc ^ 2);",
     ("invalid operands of types ‘const float’ and ‘int’ to binary ‘operator^’",
      "invalid operands to binary expression ('const float' and 'int')",
      "kern.cu(14): error: expression must have integral or unscoped enum type"), "\\^ is C's exclusive or"),
    ("raw", "u_next[cell] = uc", "u[cell] = uc",
     ("assignment of read-only location ‘*(u + ((sizetype)cell) * 4))’", "read-only variable is not assignable",
      "kern.cu(15): error: expression must be a modifiable lvalue"), "u is an input \\(const float\\*\\).*u_next\\[cell\\]"),
    ("raw", "            lv += v[r * cols + c] - vc;\n        }", "            lv += v[r * cols + c] - vc;",
     ("a function-definition is not allowed here before ‘{’ token", "function definition is not allowed here",
      'kern.cu(20): error: expected a "}"'), "the braces do not pair: 2 \\{ and 1 \\}"),
])
def test_a_usual_mistake_is_named_from_each_compilers_words(kind, old, new, errors, hint):
    body = REFERENCE.replace(old, new)
    assert body != REFERENCE
    for error in errors:
        assert re.search(hint, kernel_mistakes.compile_mistake(body, kind, [error]) or ""), error


def test_an_error_of_another_kind_is_left_to_the_compilers_line():
    body = REFERENCE.replace("const float uvv = uc * vc * vc;", "const float uvv = uc * vc * vc")
    assert kernel_mistakes.compile_mistake(body, "raw", ["expected ‘,’ or ‘;’ before ‘u_next’"]) is None
    double_pointer = REFERENCE.replace("const float uvv", "const float** spare = 0; const float uvv")
    assert kernel_mistakes.compile_mistake(double_pointer, "raw", ["invalid type argument of unary ‘*’"]) is None


@pytest.mark.parametrize("declared, verdict", [
    ("float lu, lv;", "lu and lv are never given a value"), ("float lu = 0.0f, lv;", "lv is never given a value"),
    ("float lu, lv;\n    lu = lv = 0.0f;", None), ("float lu;\n    float lv = lu = 0.0f;", None),
])
def test_a_local_never_given_a_value_is_read_from_the_code(declared, verdict):
    hint = kernel_mistakes.uninitialised(REFERENCE.replace("float lu = 0.0f, lv = 0.0f;", declared))
    assert (hint is None) if verdict is None else (verdict in hint)
