"""Checkers of the CuPy tutorial's kernels and copies (the notebook calls most of them through
`gs_course.lessons.checkers`): the ElementwiseKernel of the update and the RawKernel of a step,
each tried in a child process first and checked as a step, its usual mistakes named
(`gs_course.lessons.kernel_mistakes`); the pinned fetch, its copy queued on `stream`; and the
launch configuration of the strip kernel (`strip_launch`), whose arithmetic is checked anywhere (it
is plain Python), then, where CuPy finds a GPU, run with the course's strip kernel.

Kernels and pinned memory need an NVIDIA GPU: without one, each checker says what it could not
check and why, and the notebook runs on.
"""

from __future__ import annotations

import contextlib
import time

import numpy as np

from .check_core import PARAMS, NotYet, _checkers_own_copies, _grid, compare, ok, their_errors
from .hints import checks, takes
from .kernel_runs import (_gpu_cupy, _gpu_errors_as_hints, _refuse_the_placeholder, c_text, compiles_first,
                          trial_in_a_child)
from . import cuda_on_cpu, kernel_mistakes
from .kernel_barriers import barrier_mistake
from .kernel_indices import computed_nan, read_outside_everywhere, unseen_read_outside
from .kernel_shared import unsynchronised_tile
from .check_model import step
from ..model import initial_state, reference_step
from ..backends import probe

#: (rows, cols, threads of a block along columns and rows, cells each thread walks down): the
#: school's grid, the small one, shapes that no block size divides, and one that blocks divide
#: exactly both ways (where a division rounded down plus one launches a row of blocks too many).
LAUNCH_CASES = (
    (1080, 1920, (128, 2), 8),
    (135, 240, (32, 8), 4),
    (77, 103, (64, 4), 3),
    (17, 1000, (32, 16), 16),
    (1024, 1024, (32, 8), 4),
)


def _blocks(n: int, per_block: int) -> int:
    """Blocks of `per_block` cells that cover n cells: the division rounded up."""
    return -(-n // per_block)


def _dims(value, what: str) -> tuple[int, int, int]:
    """`value`, a grid or a block, as a CUDA launch takes it: CuPy's takes a tuple of one to three
    whole numbers, the missing ones 1."""
    if isinstance(value, list):
        raise NotYet(f"your {what} is a list, {value!r}: a kernel launch takes a tuple, (x, y)")
    try:
        dims = tuple(int(x) for x in value) if isinstance(value, tuple) else ()
    except (TypeError, ValueError):
        dims = ()
    if not 1 <= len(dims) <= 3:
        raise NotYet(f"your {what} is {value!r}: give two whole numbers, along columns (x) then along rows (y)"
                     " (a third, z, is 1)")
    return (dims + (1, 1))[:3]


def _row_blocks(rows: int, block: tuple[int, int], strip_rows: int) -> int:
    """The blocks along the rows that cover `rows` with strips of `strip_rows` cells."""
    return _blocks(rows, block[1] * strip_rows)


def _launch_hint(rows: int, cols: int, block: tuple[int, int], strip_rows: int, got) -> str | None:
    """What is wrong with `got`, the (grid, block) of the strip kernel on rows x cols; None if right."""
    if not isinstance(got, (tuple, list)) or len(got) != 2 or not all(hasattr(part, "__len__") for part in got):
        return f"return a pair (grid, block), each two numbers; got {got!r}"
    floats = [n for part in got for n in part if not isinstance(n, (int, np.integer)) or isinstance(n, bool)]
    if floats:
        return (f"your launch has {floats[0]} where CUDA counts blocks and threads in whole numbers: a kernel "
                "launch takes integers (np.ceil gives floats: round up in integers, -(-n // per_block))")
    (*grid, depth), got_block = _dims(got[0], "grid"), _dims(got[1], "block")
    grid = tuple(grid)
    if len(got[0]) == 1 and _row_blocks(rows, block, strip_rows) > 1:
        return (f"your grid {got[0]!r} has one number: CuPy takes it as ({got[0][0]}, 1), a single block along the "
                f"rows; give the blocks along the columns (x) then along the rows (y)")
    if got_block != (*block, 1):
        swapped = tuple(got[0]) == tuple(block)  # (block, grid): the launch's order is grid, then block
        return (f"your block is {got[1]}: a block's threads are given ({block}), return them unchanged"
                + (", after the grid: return grid, block" if swapped else ""))
    if depth != 1:
        return (f"your grid {got[0]} has {depth} layers of blocks along z: the strip kernel does not use blockIdx.z, so "
                f"each layer computes the same cells again; z is 1 (or leave it out)")
    want = (_blocks(cols, block[0]), _row_blocks(rows, block, strip_rows))
    if grid == want:
        return None
    where = f"on {rows} x {cols} with blocks of {block[0]} x {block[1]} threads, {strip_rows} rows each"
    if grid == want[::-1]:
        return f"your grid {grid} has x and y swapped ({where}): x counts blocks along the columns, y along the rows"
    if block[0] != block[1] and grid == (_blocks(cols, block[1]), _blocks(rows, block[0] * strip_rows)):
        return (f"your grid {grid} divides the columns by block[1] and the rows by block[0] ({where}): block[0] is "
                "a block's threads along the columns (x), block[1] along the rows (y)")
    if grid[1] == _blocks(rows, block[1]) and strip_rows > 1:
        return (f"your grid {grid} launches a thread for every row ({where}): each thread walks down "
                f"{strip_rows} rows, so a block covers block[1] x strip_rows rows")
    for rows_blocks, mistake in ((_blocks(rows, block[1]) * strip_rows, "multiplies the blocks by strip_rows"),
                                 (_blocks(rows, block[1] + strip_rows), "divides by block[1] + strip_rows")):
        if grid[1] == rows_blocks != want[1]:
            return (f"your grid {grid} {mistake} along the rows ({where}): a block covers block[1] x strip_rows "
                    f"rows (its threads, each down strip_rows rows), so divide the rows by their product, "
                    f"-(-rows // (block[1] * strip_rows)) = {want[1]}")
    covered = (grid[0] * block[0], grid[1] * block[1] * strip_rows)
    for axis, n, per_block, covers in ((0, cols, block[0], "columns"), (1, rows, block[1] * strip_rows, "rows")):
        if covered[axis] < n:
            return (f"your grid {grid} covers {covered[axis]} of the {n} {covers} ({where}): round the "
                    f"division up, -(-{n} // {per_block}) = {want[axis]} blocks")
    plus_one = next((covers for axis, n, per_block, covers in ((0, cols, block[0], "columns"),
                                                               (1, rows, block[1] * strip_rows, "rows"))
                     if n % per_block == 0 and grid[axis] == n // per_block + 1), None)
    why = (f": rounding down and adding one (n // per_block + 1, which (n + per_block) // per_block is too) adds a "
           f"block too many where the blocks divide the {plus_one} exactly; round up instead, -(-n // per_block)"
           if plus_one else "")
    return (f"your grid {grid} launches blocks that lie wholly outside the domain ({where}): "
            f"{want} blocks cover it{why}")


def _called(student, args: tuple, call: str):
    """student(*args), called as `call` says the exercise calls it (its signature read before, by the
    checker's `checks`): an error raised in the student's own code told in one line (the error, and the
    line of the student's cell), never as a traceback through the checker."""
    with their_errors(f"your {call.split('(', 1)[0]}", library="cupy"):
        return student(*args)


_STRIP_CALL = "strip_launch(rows, cols, block, strip_rows)"


@checks(_STRIP_CALL)
def strip_launch(student) -> None:
    """`student(rows, cols, block, strip_rows)` must return (grid, block) for gs_course's strip
    kernel: `block` unchanged, `grid` the blocks along columns and along rows that cover the
    domain, a block covering block[0] columns and block[1] x strip_rows rows."""

    rng = np.random.default_rng()
    odd = (*_grid(rng), (int(rng.choice([32, 64, 128])), int(rng.choice([1, 2, 4]))), int(rng.integers(2, 9)))
    for rows, cols, block, strip_rows in (*LAUNCH_CASES, odd):
        hint = _launch_hint(rows, cols, block, strip_rows, _called(student, (rows, cols, block, strip_rows), _STRIP_CALL))
        if hint:
            raise NotYet(hint)
    done = f"launch configuration: right on {len(LAUNCH_CASES) + 1} grids"
    found = probe("cupy")
    if not found.ok:
        ok(f"{done} (the strip kernel runs with it only on an NVIDIA GPU: {found.reason})")
        return
    import cupy

    from ..backends.cuda_steps import scalars, strip_kernel

    rows, cols, block, strip_rows = odd
    u, v = (rng.random((rows, cols), dtype=np.float32) for _ in range(2))
    u_next, v_next = (cupy.full((rows, cols), np.nan, np.float32) for _ in range(2))  # unwritten cells show
    grid, _ = _called(student, (rows, cols, block, strip_rows), _STRIP_CALL)
    strip_kernel(strip_rows)(tuple(int(n) for n in grid), block,
                             (cupy.asarray(u), cupy.asarray(v), u_next, v_next, *scalars(PARAMS, rows, cols)))
    want = reference_step(u.astype(np.float64), v.astype(np.float64), PARAMS)
    for name, got, w in zip("uv", (u_next, v_next), want):
        compare(cupy.asnumpy(got), w.astype(np.float32), f"{name}_next of the strip kernel with your launch", 1e-5)
    ok(f"{done}; the strip kernel launched with it computed every cell of a {rows} x {cols} step")


# --- The kernels of a step, and the pinned fetch ------------------------------------------------------

#: The ElementwiseKernel of the update: per cell, U and V, their Laplacians and the parameters in.
UPDATE_INPUTS = "float32 u, float32 v, float32 lu, float32 lv, float32 du, float32 dv, float32 feed, float32 kill, float32 dt"
UPDATE_OUTPUTS = "float32 u_next, float32 v_next"

#: The RawKernel of a whole step, one thread a cell; the student writes what replaces BODY.
STEP_KERNEL = """extern "C" __global__ void step(
    const float* u, const float* v, float* u_next, float* v_next,
    int rows, int cols, float du, float dv, float feed, float kill, float dt)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= rows || col >= cols) return;
    const int cell = row * cols + col;
BODY
}"""

#: cudaPointerGetAttributes' memory type of page-locked (pinned) host memory.
_CUDA_MEMORY_TYPE_HOST = 1

#: What fills the memory around the kernel's input arrays: a read outside them (a window not
#: clamped at the border) turns the cell's result into something this large.
_OUTSIDE = np.float32(1e20)

def _guarded(cupy, a: np.ndarray, fill):
    """A device copy of `a` inside a larger buffer whose rest holds `fill`: (the copy, the buffer,
    the slice of the buffer that is the copy). A window read one row or column outside the copy,
    or a wrong row stride's read, stays inside the buffer."""
    margin = 2 * a.size + 64  # a row stride or an index transposed reads up to about 2 arrays past the end
    buffer = cupy.full(a.size + 2 * margin, fill, dtype=np.float32)
    inside = slice(margin, margin + a.size)
    view = buffer[inside].reshape(a.shape)
    view[...] = cupy.asarray(a)
    return view, buffer, inside


def _outside_touched(cupy, guards) -> bool:
    """Whether anything wrote into the memory around the arrays (what `_guarded` filled)."""
    for buffer, inside, fill in guards:
        around = cupy.concatenate([buffer[: inside.start], buffer[inside.stop :]]).get()
        if not (np.isnan(around).all() if np.isnan(fill) else (around == fill).all()):
            return True
    return False


def elementwise_update(body: str, laplacian):
    """`body`, the CUDA C of an ElementwiseKernel with UPDATE_INPUTS and UPDATE_OUTPUTS, must compute
    one cell's u_next and v_next: checked as a step with `laplacian`. Returns the kernel (None
    without a GPU, where the C runs on the CPU if a C++ compiler is here). `laplacian`, the student's
    own, is read from its signature first, as the exercise that wrote it reads it."""
    takes(laplacian, (None,), "laplacian(a)")
    c_text(body, "your update's body")
    if hint := kernel_mistakes.declared_again(body, "elementwise"):  # named, where it is why it does not compile
        raise NotYet(hint)
    compiles_first(_ELEMENTWISE_ON_CPU, body, "update", lambda errors: kernel_mistakes.compile_mistake(
        body, "elementwise", errors), on_gpu=False)  # on a GPU, CuPy's own code around it compiles it
    if hint := kernel_mistakes.uninitialised(body):
        raise NotYet(hint)
    if _on_the_cpu():
        _checked_on_the_cpu("your ElementwiseKernel", _cpu_step(_ELEMENTWISE_ON_CPU.replace("BODY", body), "update(u, v, "
                            "lu, lv, SCALARS, u_next, v_next, rows * cols)", (body, "elementwise"), laplacian))
        return None
    cupy = _gpu_cupy("your ElementwiseKernel")
    if cupy is None:
        return None
    from ..backends.cuda_steps import scalars

    kernel = cupy.ElementwiseKernel(UPDATE_INPUTS, UPDATE_OUTPUTS, body, "student_update")

    def fused_step(u, v, p):
        u_next, v_next = cupy.full_like(u, np.nan), cupy.full_like(v, np.nan)  # unwritten cells stay NaN
        lu, lv = (_called(laplacian, (a,), "laplacian(a)") for a in (u, v))
        kernel(u, v, lu, lv, *scalars(p, *u.shape)[2:], u_next, v_next)  # no rows, cols
        with _checkers_own_copies():
            _named_mistake(body, "elementwise", p, *(a.get() for a in (u, v, u_next, v_next)))
        return u_next, v_next

    with _gpu_errors_as_hints(cupy), _compile_mistakes_named(cupy, body, "elementwise"):
        _checked_step(fused_step, cupy.ndarray, cupy.asarray)
    return kernel


#: The ElementwiseKernel's body as CuPy runs it, one cell after another: each output starts as what
#: its array holds (NaN: an output never written shows).
_ELEMENTWISE_ON_CPU = """static void update(const float* U, const float* V, const float* LU, const float* LV, float du,
    float dv, float feed, float kill, float dt, float* U_next, float* V_next, int n)
{
    for (int i = 0; i < n; ++i) {
        const float u = U[i], v = V[i], lu = LU[i], lv = LV[i];
        float u_next = U_next[i], v_next = V_next[i];
BODY
        U_next[i] = u_next;
        V_next[i] = v_next;
    }
}"""


@contextlib.contextmanager
def _compile_mistakes_named(cupy, body: str, kind: str):
    """nvrtc's errors of a usual mistake (`kernel_mistakes.compile_mistake`) as its hint; any other
    compile error goes on to `_gpu_errors_as_hints`, which shows the compiler's first line."""
    try:
        yield
    except cupy.cuda.compiler.CompileException as err:
        named = kernel_mistakes.compile_mistake(body, kind, [line for line in str(err).splitlines() if "error" in line])
        if named is None:
            raise
        raise NotYet(f"your code does not compile: {named}") from None


def _on_the_cpu() -> bool:
    """Whether a kernel is checked on the CPU here: no GPU with CuPy, a C++ compiler."""

    return not probe("cupy").ok and cuda_on_cpu.compiler() is not None


def _checked_on_the_cpu(what: str, one_step) -> None:
    """`_checked_step` of a kernel run on the CPU; one that calls a function of CUDA's that the CPU's
    stand-in lacks is not checked here, said in one line (never a tick), as the synthesis's kernels."""
    try:
        _checked_step(one_step, None, np.asarray)
    except cuda_on_cpu.NotOnCpu as err:
        print(f"- {what}: {err}")


def _checked_step(one_step, device_type, to_device) -> None:
    """`check_model.step` of the kernel's step, after a first step on a grid of more rows than
    columns whose mistakes are named: the grid `step` draws may have as many rows as columns, where
    a row stride of rows for cols, or an index transposed, gives the right values."""
    u, v = (np.random.default_rng().random((53, 37), dtype=np.float32) for _ in range(2))
    one_step(to_device(u), to_device(v), PARAMS)
    step(one_step, device_type=device_type, to_device=to_device, writes="kernel")


def _named_mistake(body: str, kind: str, p, u, v, u_next, v_next) -> None:
    """Where the kernel's step (u, v) -> (u_next, v_next) is one of a kernel's usual mistakes, its hint."""
    if hint := kernel_mistakes.step_mistake(body, kind, u, v, p, (u_next, v_next)):
        raise NotYet(hint if hint.startswith("your ") else f"your step is off: {hint}")
    # right values too: a write into another thread's cell (u_next[cell + cols] = ...) races with that thread
    if kind == "raw" and (hint := kernel_mistakes.written_at_another_index(body, *u.shape)):
        raise NotYet(hint)


def _cpu_step(kernel: str, call: str, student: tuple[str, str], laplacian=None):
    """A step (u, v, p) -> (u_next, v_next) that runs `kernel` on the CPU through `call` (C++ in
    main, where rows, cols and SCALARS, the parameters, are known; lu and lv are `laplacian`'s),
    for `check_model.step` to check; `student` (the body, its kind) names a usual mistake. Reads
    outside the arrays show as huge values (the guard zones hold 1e20), writes as writes outside."""
    def one_step(u, v, p):
        rows, cols = u.shape
        scalars = ", ".join(f"(float) {getattr(p, name)!r}" for name in ("du", "dv", "feed", "kill", "dt"))
        main = f"    const int rows = {rows}, cols = {cols};\n    {call.replace('SCALARS', scalars)};"
        arrays = {"u": u, "v": v, "u_next": np.full_like(u, np.nan), "v_next": np.full_like(v, np.nan)}
        if laplacian is not None:
            arrays.update(lu=np.asarray(_called(laplacian, (u,), "laplacian(a)"), np.float32),
                          lv=np.asarray(_called(laplacian, (v,), "laplacian(a)"), np.float32))
        probed = ("u", "v") if student[1] == "raw" else ()  # NaN around one input: a read there that changed nothing shows
        refilled = {"u_next": np.zeros_like(u), "v_next": np.zeros_like(v)}  # a NaN written shows there too
        runs = [({}, {}), (refilled, {})] + [({}, {"fills": {name: np.nan}}) for name in probed]
        got, again, *others = cuda_on_cpu.run_checked(kernel, arrays, main, runs, timeout=5,  # a step takes milliseconds
                                                      compile_mistake=lambda errors: kernel_mistakes.compile_mistake(*student, errors))
        outputs = got["u_next"], got["v_next"]
        if hint := computed_nan(student[0], outputs, (again["u_next"], again["v_next"]), " (run on the CPU)") or \
                read_outside_everywhere(student[0], u.shape):
            raise NotYet(hint)
        _named_mistake(*student, p, u, v, *outputs)
        _read_outside(outputs, " (run on the CPU)")
        if hint := unseen_read_outside(student[0], outputs, {n: (o["u_next"], o["v_next"]) for n, o in zip(probed, others)},
                                       " (run on the CPU)"):
            raise NotYet(hint)
        return outputs

    return one_step


def _read_outside(got, where: str = "") -> None:
    """The hint where a step's values are huge, what the memory around the input arrays holds: the
    kernel read outside them. At the border only, the window's bounds are the usual cause; a cell
    inside the grid read through an index that points elsewhere."""
    huge = np.logical_or(*(np.abs(g) > 1e15 for g in got))  # NaN compares False: unwritten cells are not counted
    if not huge.any():
        return
    cells = np.argwhere(huge)
    rows, cols = huge.shape
    inner = [(r, c) for r, c in cells if 0 < r < rows - 1 and 0 < c < cols - 1]
    if inner:
        raise NotYet(f"your kernel reads outside its arrays at cell {tuple(map(int, inner[0]))}, inside the grid{where}: "
                     "an index there points outside its array; the cell is row * cols + col (the kernel's cell), its "
                     "neighbours r * cols + c for r and c in the window")
    raise NotYet(f"your kernel reads outside its arrays at the border{where}, at {len(cells)} cells, the first "
                 f"{tuple(map(int, cells[0]))}: cells at the border have fewer neighbours; keep the window inside the "
                 "grid (r from max(row - 1, 0) to min(row + 1, rows - 1), the same for columns), and every other "
                 "index (v[cell + 1] is past the end at the last cell)")


def _trial(body: str) -> None:
    """The child's side of `trial_in_a_child`: a step on each of two small grids, no checking."""
    import cupy

    from ..backends.cuda_steps import launch_step, scalars

    try:
        kernel = cupy.RawKernel(STEP_KERNEL.replace("BODY", body), "step")
        for rows, cols in ((33, 47), (53, 37)):  # as the notebook's checks: steps on grids wide and tall
            u, v = initial_state(rows, cols)
            arrays = [_guarded(cupy, a, _OUTSIDE)[0] for a in (u, v, u, v)]
            launch_step(*arrays, scalars(PARAMS, rows, cols), kernel)  # outside by one row is told there, not here
    except cupy.cuda.compiler.CompileException:
        return  # the notebook's process reports it, with the compiler's lines
    cupy.cuda.Device().synchronize()


def _probed(cupy, launch, guards, u, v, p) -> dict:
    """The step's outputs with NaN around u, then around v (the others as they were): {"u": [u_next,
    v_next], "v": ...}. A read outside an array that changed nothing (0.0f * v[cell + 1]) shows there."""
    probed = {}
    for name, a in (("u", u), ("v", v)):
        for buffer, inside, fill in guards:
            if buffer.data.ptr <= a.data.ptr < buffer.data.ptr + buffer.nbytes:
                buffer[: inside.start], buffer[inside.stop :] = np.nan, np.nan
                outputs = [cupy.full(u.shape, np.nan, np.float32) for _ in range(2)]
                launch(u, v, *outputs, p)
                buffer[: inside.start], buffer[inside.stop :] = fill, fill
                probed[name] = [o.get() for o in outputs]
                break
    return probed


def step_kernel(body: str):
    """`body` completes STEP_KERNEL: one thread computes cell (row, col) of a whole step. Checked on
    a random odd grid; returns `launch(u, v, u_next, v_next, params)`, which queues one step
    (None without a GPU, where the C runs on the CPU if a C++ compiler is here)."""
    c_text(body, "your step's body")
    if hint := kernel_mistakes.declared_again(body, "raw"):  # named, where it is why it does not compile
        raise NotYet(hint)
    compiles_first(STEP_KERNEL, body, "step", lambda errors: kernel_mistakes.compile_mistake(body, "raw", errors))
    if hint := kernel_mistakes.uninitialised(body):
        raise NotYet(hint)
    if barrier := barrier_mistake(STEP_KERNEL, body, "outside the grid (if (row >= rows || col >= cols) return;)",
                                  "This kernel needs no barrier: each thread reads u and v and writes its own cell") or \
            unsynchronised_tile(body, "The template returns the threads outside the grid before your code, so no barrier "
                                      "can wait for them all: read u and v themselves, u[r * cols + c] (no shared memory)"):
        raise NotYet(barrier)
    if _on_the_cpu():
        _checked_on_the_cpu("your RawKernel", _cpu_step(STEP_KERNEL.replace("BODY", body), "launch(dim3((cols + 15) / 16, "
                            "(rows + 7) / 8), dim3(16, 8), false, false, [&] { step(u, v, u_next, v_next, rows, cols, "
                            "SCALARS); })", (body, "raw")))
        return None
    cupy = _gpu_cupy("your RawKernel")
    if cupy is None:
        return None
    from ..backends.cuda_steps import launch_step, scalars

    trial_in_a_child("gs_course.lessons.cupy_check:_trial", body)
    kernel = cupy.RawKernel(STEP_KERNEL.replace("BODY", body), "step")

    def launch(u, v, u_next, v_next, p):
        launch_step(u, v, u_next, v_next, scalars(p, *u.shape), kernel)

    guards = []

    def to_device(a):
        view, buffer, inside = _guarded(cupy, a, _OUTSIDE)
        guards.append((buffer, inside, _OUTSIDE))
        return view

    def one_step(u, v, p):
        outputs = [_guarded(cupy, np.full(u.shape, np.nan, np.float32), np.nan) for _ in range(2)]  # unwritten: NaN
        (u_next, *_), (v_next, *_) = outputs
        launch(u, v, u_next, v_next, p)
        with _checkers_own_copies():  # the checker's look at the guards is no round trip of the student's
            if _outside_touched(cupy, guards + [(buffer, inside, np.nan) for _, buffer, inside in outputs]):
                raise NotYet("your kernel wrote outside its arrays: write only u_next[cell] and v_next[cell]")
            got = [a.get() for a in (u_next, v_next)]
            if any(np.isnan(g).any() for g in got):  # written NaN, or left unwritten: the outputs started as 0 tell
                again = [cupy.zeros(u.shape, np.float32) for _ in range(2)]
                launch(u, v, *again, p)
                if hint := computed_nan(body, got, [a.get() for a in again]):
                    raise NotYet(hint)
            if hint := read_outside_everywhere(body, u.shape):
                raise NotYet(hint)
            _named_mistake(body, "raw", p, u.get(), v.get(), *got)
            _read_outside(got)
            if hint := unseen_read_outside(body, got, _probed(cupy, launch, guards, u, v, p)):
                raise NotYet(hint)
        return u_next, v_next

    with _gpu_errors_as_hints(cupy), _compile_mistakes_named(cupy, body, "raw"):
        _checked_step(one_step, cupy.ndarray, to_device)
    return launch


#: A kernel that holds its stream until released through pinned host memory (or for `timeout_ns`):
#: work queued behind it on the stream cannot start before the checker has looked.
_HOLD_KERNEL = r"""extern "C" __global__ void hold(unsigned long long release, long long timeout_ns)
{
    const volatile int* flag = (const volatile int*) release;
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (*flag == 0 && now - start < (unsigned long long) timeout_ns);
}"""

_HOLD_S = 3.0


@checks("fetch(v, stream)")
def pinned_fetch(student) -> None:
    """`student(v, stream)` must return V in a host array of pinned (page-locked) memory, the copy
    queued on `stream`, without waiting for it. Each V given is complete before the call (the
    checker waits for its upload): the student orders nothing. Checked twice: once plainly (type,
    memory, values), once with `stream` held busy: a fetch that waits for the copy returns late; a
    copy queued elsewhere than on `stream` (the default stream) fills the array while `stream` is
    still held. Whether `stream` was still held when the array was looked at is read from an event
    queued behind the hold: where it was not (a hold that did not hold), which stream copied is not
    told, and the line says so, so that a right answer is never refused."""
    cupy = _gpu_cupy("your pinned fetch")
    if cupy is None:
        _refuse_the_placeholder(student)  # without a GPU, this much (its signature read before)
        return
    import cupyx

    rng = np.random.default_rng()
    shape = _grid(rng)
    stream = cupy.cuda.Stream(non_blocking=True)

    def upload():
        # Made on the device from other values: cupy.asarray stages its host array in a block of
        # CuPy's pinned pool, which an empty_pinned of the same size gets back still holding them,
        # so a fetch that copied nothing would seem to hold V if V were uploaded as it is.
        v = cupy.asarray(rng.random(shape, dtype=np.float32)) + 1
        want = v.get()  # into pageable memory, outside the pinned pool
        cupy.cuda.get_current_stream().synchronize()  # made before the student's stream reads v
        return v, want

    v, want = upload()
    got = _called(student, (v, stream), "fetch(v, stream)")
    cupy.cuda.Device().synchronize()
    if not isinstance(got, np.ndarray):
        raise NotYet(f"your fetch returned a {type(got).__module__}.{type(got).__name__}: return a NumPy array "
                     "in pinned memory (cupyx.empty_pinned) that the copy filled")
    attributes = cupy.cuda.runtime.pointerGetAttributes(got.ctypes.data)
    if getattr(attributes, "type", getattr(attributes, "memoryType", None)) != _CUDA_MEMORY_TYPE_HOST:
        raise NotYet("your array is in ordinary (pageable) memory: allocate it with cupyx.empty_pinned, "
                     "then copy into it (out=...)")
    compare(got, want, "your fetched V", 0.0)

    del got  # its pinned block goes back to CuPy's pool: the next fetch reuses it, allocating nothing
    v, want = upload()
    release = cupyx.zeros_pinned((1,), np.int32)
    hold = cupy.RawKernel(_HOLD_KERNEL, "hold")
    held = cupy.cuda.Event(disable_timing=True)
    with stream:
        hold((1,), (1,), (np.uint64(release.ctypes.data), np.int64(_HOLD_S * 1e9)))
        held.record(stream)  # done once the hold ends: anything queued on `stream` behind it has not run before
    try:
        started = time.perf_counter()
        got = _called(student, (v, stream), "fetch(v, stream)")
        waited = time.perf_counter() - started > _HOLD_S / 2
        copied_while_held = False
        while not waited and isinstance(got, np.ndarray) and time.perf_counter() - started < _HOLD_S / 3:
            if got.shape == want.shape and np.array_equal(got, want) and not held.done:
                copied_while_held = True
                break
            time.sleep(0.01)
        still_held = not held.done
    finally:
        release[0] = 1
        cupy.cuda.Device().synchronize()
    if waited:
        raise NotYet("your fetch waits for the copy (blocking=True, or a synchronize): queue it on the stream with "
                     "blocking=False and return at once; whoever needs the values waits for the stream")
    if copied_while_held:
        raise NotYet("your copy ran while `stream` was busy, so it was not queued on `stream` (the default stream?): "
                     "pass stream=stream, blocking=False, so that it runs after the work queued before it")
    compare(got, want, "your fetched V (a second time, with the stream busy)", 0.0)
    if not still_held:
        ok("pinned fetch: V in page-locked memory with the right values, and your fetch returned without waiting. "
           "Not checked: which stream did the copy (the checker's hold on the stream ended too early to tell)")
        return
    ok("pinned fetch: V in page-locked memory with the right values, copied on `stream` after the work queued "
       "before it, and your fetch returned without waiting")
