"""A student's CUDA C, run where it can harm nothing: the C must be text; the kernel is tried once in a
child process first (a wild access or an endless loop costs that process its GPU context, not the
notebook's); the compiler's lines and a lost context become one line each; CuPy only where a GPU runs it.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys

from . import cuda_on_cpu
from .c_code import compile_hint, endless_loop
from .check_core import NotYet
from .notebooks import YOUR_TURN_MESSAGE
from ..backends import probe


_CONTEXT_LOST = ("The GPU's context is lost: from now on every GPU cell fails. Restart the notebook's kernel "
                 "(Kernel > Restart Kernel), then run the cells from the top")


def _gpu_cupy(what: str):
    """CuPy where it runs on a GPU here; else None, after saying what is not checked and why."""

    found = probe("cupy")
    if not found.ok:
        print(f"- {what}: not checked here, it needs an NVIDIA GPU with CuPy ({found.reason})")
        return None
    import cupy

    return cupy


def _refuse_the_placeholder(student) -> None:
    """The "your turn" error of a student function still unwritten, without calling it: where a
    GPU-only checker cannot run the function, the student still learns that it is not written."""
    if YOUR_TURN_MESSAGE in getattr(getattr(student, "__code__", None), "co_consts", ()):
        raise NotImplementedError(YOUR_TURN_MESSAGE)


def c_text(text, what: str) -> None:
    """The student's CUDA C must be a string: a list of lines, a number or a function gets one line
    that says so, where the checkers' reading of the code would fail with a traceback."""
    if not isinstance(text, str):
        raise NotYet(f"{what} is a {type(text).__name__}: write the C as one string, in quotes "
                     '("..." for one line, """...""" for several)')


@contextlib.contextmanager
def _gpu_errors_as_hints(cupy):
    """nvrtc's log (the compiler's error lines) instead of CuPy's long traceback; a kernel that
    touched memory outside its arrays told as such, with what it costs (the context is lost)."""
    try:
        yield
    except cupy.cuda.compiler.CompileException as err:
        lines = [line.strip() for line in str(err).splitlines() if "error" in line]
        raise NotYet(compile_hint(lines or str(err).splitlines()[:1])) from None
    except (cupy.cuda.runtime.CUDARuntimeError, cupy.cuda.driver.CUDADriverError) as err:
        # CUDA names a wild access in several ways (an illegal address, an invalid address space, a launch failure)
        raise NotYet(f"your kernel failed on the GPU ({err}): most often it reads or writes outside its arrays, at the "
                     f"border or with an index far too large. {_CONTEXT_LOST}") from None


def compiles_first(template: str, body: str, name: str, compile_mistake=None, on_gpu: bool = True) -> None:
    """A kernel that does not compile is told so (the compiler's first error, in one line, with the
    student's line) before anything else is read from its code: a barrier, a race or an index read from
    code that is not C names a mistake that is not there. `template` with `body` in place of BODY, its
    function `name`; `compile_mistake(error lines)`: the exercise's usual mistakes, named. Where CuPy runs
    on a GPU, nvrtc compiles it (`on_gpu` False: not there, the kernel being no RawKernel); else the CPU's
    C++ compiler, where one is here (one of CUDA's own names it lacks is left to the checker's run, which
    says "not checked"); else nothing is told here. On a GPU the kernel compiles as the checker will
    compile it, whose compile is then CuPy's cached one; only one that fails compiles again, marked, for
    the student's line numbers."""
    kernel, source = template.replace("BODY", body), cuda_on_cpu.marked(template, body)
    found = probe("cupy")
    if found.ok:
        if not on_gpu or _nvrtc_errors(kernel, name) is None:
            return
        errors = _nvrtc_errors(source, name) or ["error: does not compile"]
    elif cuda_on_cpu.compiler() is not None:
        errors = cuda_on_cpu.syntax_errors(source)
        if not errors:
            return
    else:
        return
    try:
        hint = cuda_on_cpu.compile_failure(kernel, "\n".join(errors), compile_mistake, body)
    except cuda_on_cpu.NotOnCpu:
        return
    raise NotYet(hint) from None


def _nvrtc_errors(source: str, name: str) -> list[str] | None:
    """nvrtc's error lines for `source` (its first line where none says "error"), None where it compiles."""
    import cupy

    compiled = cupy.RawKernel(source, name)
    try:
        compiled.compile() if hasattr(compiled, "compile") else compiled.kernel
    except cupy.cuda.compiler.CompileException as err:
        return [line.strip() for line in str(err).splitlines() if "error" in line] or str(err).splitlines()[:1]
    return None


def trial_in_a_child(trial: str, body: str) -> None:
    """Run the student's kernel once in a separate process first (`trial`, "module:function", is
    called there with `body`): a kernel that touches memory far outside its arrays, or never ends,
    costs that process its GPU context, not the notebook's. Any failure of the child is the
    kernel's, but for a GPU without memory for a second process (a small one, nearly full: no trial
    then), and for a kernel that does not compile, left to the notebook's process, which reports
    the compiler's lines. CUDA names a wild access in several ways (an illegal address...)."""
    if "cupy" in sys.modules:  # the spare blocks of this process's pool, for the child on a small GPU
        sys.modules["cupy"].get_default_memory_pool().free_all_blocks()
    module, function = trial.split(":")
    code = f"import sys; from {module.rsplit('.', 1)[0]} import {module.rsplit('.', 1)[1]} as m; m.{function}(sys.stdin.read())"
    try:
        child = subprocess.run([sys.executable, "-c", code], input=body, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        raise NotYet("your kernel did not finish within 60 s on a small input: "
                     + (endless_loop(body) or "a loop that never ends?")) from None
    if child.returncode != 0 and not re.search(r"OutOfMemoryError|out of memory|OUT_OF_MEMORY", child.stderr):
        last = next((line.strip() for line in reversed(child.stderr.splitlines()) if line.strip()), "no message")
        raise NotYet("your kernel failed when tried in a separate process (this notebook's GPU is unharmed): it reads "
                     "or writes outside its arrays, most often at the border or with an index far too large "
                     f"({last[:160]})")


