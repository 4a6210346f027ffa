"""JAX on one device: NumPy's interface compiled by XLA; the whole time loop runs on the device as one program.

(`import gs_course` has already set JAX's environment for a shared GPU, or for no GPU.)
"""

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ..model import initial_state, window_count_factors
from ..parameters import Parameters
from . import jax_pallas
from .base import WINDOW_OFFSETS, Probe, Simulation

NAME = "jax"


def probe() -> Probe:
    device = jax.devices()[0]
    if device.platform == "gpu":
        return Probe(NAME, True, jax.__version__, device.device_kind, on_gpu=True)
    return Probe(NAME, True, jax.__version__, "CPU")


def free_memory() -> int | None:
    """Bytes XLA can still allocate on this process's first device (None on the CPU, which reports
    none); where several processes run the program, the others' devices report nothing here."""
    stats = jax.local_devices()[0].memory_stats()
    if not stats or "bytes_limit" not in stats:
        return None
    return stats["bytes_limit"] - stats["bytes_in_use"]


ON_GPU = jax.devices()[0].platform == "gpu"


def to_host(x, pinned: bool = ON_GPU) -> np.ndarray:
    """A NumPy copy of a device array. `pinned`: through JAX's pinned host memory, one direct copy
    by the GPU, which on an H200 took 0.6 ms for one 1080 x 1920 image against 2.3 ms for
    `np.asarray` alone (results/h200/logs/fetch.txt): it counts when every image is
    saved. Off on a CPU, where it would only add a copy."""
    if pinned:
        x = jax.device_put(x, x.sharding.with_memory_kind("pinned_host"))
    return np.asarray(x)


def slices_laplacian(a, counts):
    """L(a) = window sum with zeros outside the grid - in-grid window cells * a, from nine slices."""
    rows, cols = a.shape
    padded = jnp.pad(a, 1)
    window_sum = sum(padded[i : i + rows, j : j + cols] for i, j in WINDOW_OFFSETS)
    return window_sum - counts * a


def conv_laplacian(a, counts):
    """The same through XLA's generic convolution ('SAME' pads with zeros). HIGHEST precision:
    on GPUs the default lets float32 convolutions run in TF32, ten bits of mantissa."""
    window = jnp.ones((1, 1, 3, 3), a.dtype)
    window_sum = lax.conv_general_dilated(a[None, None], window, (1, 1), "SAME", precision=lax.Precision.HIGHEST)
    return window_sum[0, 0] - counts * a


def step(u, v, counts, p: Parameters, laplacian=slices_laplacian):
    """One explicit Euler step; dt multiplies every term."""
    uvv = u * v * v
    du = p.du * laplacian(u, counts) - uvv + p.feed * (1 - u)
    dv = p.dv * laplacian(v, counts) + uvv - (p.feed + p.kill) * v
    return u + p.dt * du, v + p.dt * dv


def stacked_step(uv, counts, p: Parameters, above=None, below=None):
    """One step of U and V held together as one (2, rows, cols) array: XLA then computes both
    fields in one fused kernel that reads each once, instead of kernels that each read both.

    `above` and `below` (each (2, 1, cols)): the rows just beyond the first and last, where the
    array is a band of a larger grid (`jax_sharded`); zeros, the model's border, where not given.
    Concatenated with the band: on a GPU XLA compiles that concatenation as a kernel of its own, a
    copy of the band every step (results/h200-x2/logs/jax-kernels.txt), which is why `jax_sharded`'s
    fast formulation steps bands with ghost rows instead."""
    _, rows, cols = uv.shape
    if (above is None) != (below is None):
        raise ValueError("stacked_step takes both halo rows, above and below, or neither")
    if above is None:
        padded = jnp.pad(uv, ((0, 0), (1, 1), (1, 1)))
    else:
        padded = jnp.pad(jnp.concatenate((above, uv, below), axis=1), ((0, 0), (0, 0), (1, 1)))
    window_sum = sum(padded[:, i : i + rows, j : j + cols] for i, j in WINDOW_OFFSETS)
    lu, lv = window_sum - counts * uv
    u, v = uv
    uvv = u * v * v
    du = p.du * lu - uvv + p.feed * (1 - u)
    dv = p.dv * lv + uvv - (p.feed + p.kill) * v
    return uv + p.dt * jnp.stack((du, dv))


@partial(jax.jit, static_argnames=("p", "steps", "unroll", "laplacian"))
def advance(u, v, count_factors, p: Parameters, steps: int, unroll: int = 1, laplacian=slices_laplacian):
    """`steps` steps fused into one compiled loop: no Python, no host round trip between steps.

    The window counts are multiplied out inside each step from their factors (a column and a
    row, see `model.window_count_factors`): XLA fuses the product into the step's kernel, which
    then reads U and V only, not a third array as large."""
    body = lambda _, uv: step(*uv, jnp.multiply(*count_factors), p, laplacian)  # noqa: E731
    return lax.fori_loop(0, steps, body, (u, v), unroll=unroll)


@partial(jax.jit, static_argnames=("p", "steps", "unroll"))
def advance_stacked(uv, count_factors, p: Parameters, steps: int, unroll: int = 1):
    """`advance` for the stacked state."""
    body = lambda _, state: stacked_step(state, jnp.multiply(*count_factors), p)  # noqa: E731
    return lax.fori_loop(0, steps, body, uv, unroll=unroll)


class JaxSlices(Simulation):
    """Pad, sum nine slices, update: XLA fuses the arithmetic of a step into a few kernels; the
    time loop is an XLA while loop, which checks its condition on the host every step."""

    backend = NAME
    formulation = "slices"
    arrays_per_cell = 10
    laplacian = staticmethod(slices_laplacian)

    def __init__(self, params: Parameters, rows: int, cols: int):
        super().__init__(params, rows, cols)
        u0, v0 = initial_state(rows, cols)
        self._u, self._v = jnp.asarray(u0), jnp.asarray(v0)
        self._count_factors = tuple(jnp.asarray(f) for f in window_count_factors(rows, cols))

    def unroll(self, steps: int) -> int:
        """Steps the compiled loop's body holds, for a call of `steps` steps."""
        return 1

    def compiled_loop(self, steps: int):
        """The compiled function that runs `steps` steps, and its arguments from the current state."""
        return advance, (self._u, self._v, self._count_factors, self.params, steps, self.unroll(steps), self.laplacian)

    def _advance(self, steps: int) -> None:
        if steps:
            function, arguments = self.compiled_loop(steps)
            self._u, self._v = function(*arguments)

    def lowered(self, steps: int):
        """What XLA compiles for `steps` steps from the current state (JAX's `Lowered`: `.compile()`
        gives the program, its kernels and XLA's cost estimate): how the course reads why a
        formulation runs at the speed it does (gs_course.measurement.compiled)."""
        function, arguments = self.compiled_loop(steps)
        return function.lower(*arguments)

    def fetch(self) -> tuple[np.ndarray, np.ndarray]:
        return np.asarray(self._u), np.asarray(self._v)

    def fetch_v(self) -> np.ndarray:
        return to_host(self._v)

    def synchronize(self) -> None:
        jax.block_until_ready((self._u, self._v))

    def set_state(self, u: np.ndarray, v: np.ndarray) -> None:
        # jnp.array copies: on the CPU jnp.asarray may alias the caller's buffer, whose later writes
        # would then change the state
        self._u, self._v = jnp.array(u, jnp.float32), jnp.array(v, jnp.float32)


class JaxConv(JaxSlices):
    """The generic formulation: any stencil is a convolution; XLA calls a convolution kernel."""

    formulation = "conv"
    laplacian = staticmethod(conv_laplacian)


class JaxUnrolled(JaxSlices):
    """The slices, with the loop over the steps of an image fully unrolled (up to 64 steps):
    straight-line code, no loop condition to bring back to the host between steps."""

    formulation = "unrolled"
    max_unroll = 64

    def unroll(self, steps: int) -> int:
        return steps if steps <= self.max_unroll else 8


class JaxStacked(JaxUnrolled):
    """The unrolled slices, with U and V stacked in one array (see `stacked_step`): on an H200,
    11.8 us a step against 14.2 for two arrays (results/h200/logs/tune.txt)."""

    formulation = "stacked"

    def __init__(self, params: Parameters, rows: int, cols: int):
        super().__init__(params, rows, cols)
        self._uv = jnp.stack((self._u, self._v))
        del self._u, self._v

    def compiled_loop(self, steps: int):
        return advance_stacked, (self._uv, self._count_factors, self.params, steps, self.unroll(steps))

    def _advance(self, steps: int) -> None:
        if steps:
            function, arguments = self.compiled_loop(steps)
            self._uv = function(*arguments)

    def fetch(self) -> tuple[np.ndarray, np.ndarray]:
        u, v = np.asarray(self._uv)
        return u, v

    def fetch_v(self) -> np.ndarray:
        return to_host(self._uv[1])

    def synchronize(self) -> None:
        jax.block_until_ready(self._uv)

    def set_state(self, u: np.ndarray, v: np.ndarray) -> None:
        self._uv = jnp.asarray(np.stack((u, v)), jnp.float32)


class JaxPallas(JaxUnrolled):
    """One step a kernel of our own, written in Pallas (jax_pallas.py), the loop over the steps
    unrolled 8 times: Triton compiles the kernel on a GPU; on a CPU Pallas interprets it, unrolled
    nowhere (compiling the interpreted steps unrolled takes far longer)."""

    formulation = "pallas"
    arrays_per_cell = 6  # U, V, their next values, and the margins of the layout
    max_unroll = 8  # each unrolled step is a kernel of its own for Triton to compile
    Options = jax_pallas.PallasOptions

    def __init__(self, params: Parameters, rows: int, cols: int,
                 options: jax_pallas.PallasOptions = jax_pallas.PallasOptions()):
        self.block = options.block
        super().__init__(params, rows, cols)
        self.set_state(self._u, self._v)

    def unroll(self, steps: int) -> int:
        return super().unroll(steps) if ON_GPU else 1

    def compiled_loop(self, steps: int):
        return jax_pallas.advance, (self._u, self._v, self.params, self.rows, self.cols, steps, self.block,
                                    not ON_GPU, self.unroll(steps))

    def _grid(self, a):
        return jax_pallas.from_layout(a, self.rows, self.cols, self.block)

    def fetch(self) -> tuple[np.ndarray, np.ndarray]:
        return np.asarray(self._grid(self._u)), np.asarray(self._grid(self._v))

    def fetch_v(self) -> np.ndarray:
        return to_host(self._grid(self._v))

    def set_state(self, u, v) -> None:
        self._u, self._v = (jnp.asarray(jax_pallas.to_layout(np.asarray(a, np.float32), self.block)) for a in (u, v))


FORMULATIONS = {cls.formulation: cls for cls in (JaxConv, JaxSlices, JaxUnrolled, JaxStacked, JaxPallas)}
# Unrolling (which `stacked` does too) pays on a GPU; XLA's CPU backend compiles the unrolled loop
# into far slower code (measured: 100 times slower on a 270 x 480 grid).
DEFAULT_FORMULATION = FASTEST = "stacked" if ON_GPU else "slices"
