"""JAX on several devices: the grid split in bands of rows, one band per device.

Four formulations of the same stacked step (`jax_one_device.stacked_step`):

- `sharded-auto` only places U and V in row bands (`NamedSharding`) and leaves the rest to XLA,
  which works out by itself what each device needs from the others;
- `sharded` runs the whole time loop inside `jax.shard_map`: each device receives one row from
  each neighbour per step (`lax.ppermute`), the halo the 3 x 3 window needs, and steps its band
  with those rows in place of the zero padding: the simplest exchange, the tutorial's exercise,
  but slow (XLA copies the band with its halo rows into a new array every step, and every step
  waits for the other devices);
- `sharded-overlap` tries to hide the exchange instead: each device steps its whole band as if
  there were zeros beyond it (which needs nothing from the others, so it can run while the halo
  rows travel), then adds the halo's diffusion to its first and last rows; compiled with XLA's
  latency-hiding scheduler. Exact too (the step is linear in the window sum), but it rewrites the
  band's border rows in a second pass.
- `sharded-deep` exchanges less often: each device keeps its band with `DEPTH` extra rows of its
  neighbours' above and below (ghost rows), receives those rows at the start of each call and
  once every `DEPTH` steps after, and in between steps the whole extended band like one device's
  grid, with no communication. Each step leaves one more ghost row stale, counted from the outside
  in, so after `DEPTH` steps the band itself is still exact: the exchange's latency is paid once
  every `DEPTH` steps, and a step is the one-device kernel, at the price of `2 x DEPTH` rows
  computed twice. The one that scales (BENCHMARKS.md, "JAX on two GPUs").

Zeros beyond the grid's edges are the model's rule (neighbours outside the grid left out): the
first band receives nothing from above, the last nothing from below, and `ppermute` fills what no
device sends with zeros.
"""

from __future__ import annotations

import dataclasses
import functools
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding
from jax.experimental import multihost_utils
from jax.sharding import PartitionSpec as P

from ..distributed import uneven_bands
from ..model import initial_state, window_count_factors
from ..parameters import Parameters
from . import BackendError
from .base import Simulation, is_positive_integer
from .jax_one_device import JaxStacked, stacked_step

#: The mesh's one axis: the bands of rows.
AXIS = "rows"
#: U and V stacked as (2, rows, cols): rows split over the mesh, the rest whole on each device.
STATE_SPEC = P(None, AXIS, None)


def band_mesh(rows: int, devices=None) -> Mesh:
    """A one-axis mesh, one band of rows per device. `devices` given: those, or a BackendError
    that says which row counts would do. Default: all of JAX's default platform (every process's,
    where several run the program: `gs_course.distributed`), or in one process as many of them as
    split the rows evenly, said in one line (down to one device: a prime row count)."""
    chosen = list(jax.devices() if devices is None else devices)
    n = len(chosen)
    if rows % n:
        usable = max(d for d in range(1, n) if rows % d == 0)
        if jax.process_count() > 1:  # every process holds bands: none can be left out
            raise BackendError(uneven_bands(rows, n, jax.process_count()))
        problem = f"{rows} rows do not split into {n} equal bands, one per device"
        divisible = f"a row count divisible by {n}, such as {rows - rows % n} or {rows - rows % n + n},"
        if devices is not None:
            raise BackendError(f"{problem}: use {divisible} or run on {usable} of the {n} devices")
        print(f"{problem}: running on {usable} of the {n} devices ({divisible} uses them all)", file=sys.stderr)
        chosen = chosen[:usable]
    return Mesh(np.array(chosen), (AXIS,))


def to_host(x) -> np.ndarray:
    """A NumPy copy of a whole array, where other processes hold some of its bands too: gathered
    from all of them (`process_allgather`, a collective: every process must call it)."""
    return np.asarray(x) if x.is_fully_addressable else multihost_utils.process_allgather(x, tiled=True)


def exchange(band, bands: int):
    """(the row just above `band`, the row just below it), from the neighbouring devices.

    Every device sends its last row to the device below and its first row to the one above. No
    device sends to the first band from above or to the last from below: they receive zeros, the
    model's border.
    """
    down = [(i, i + 1) for i in range(bands - 1)]
    up = [(i + 1, i) for i in range(bands - 1)]
    above = lax.ppermute(band[-1:], AXIS, down)
    below = lax.ppermute(band[:1], AXIS, up)
    return above, below


def halo_rows(uv, bands: int, exchange=exchange):
    """(the rows just above, the rows just below) a device's band of the stacked U, V, each
    (2, 1, cols). `exchange`: a function of one field's band like this module's (the tutorial
    passes the student's), applied to U and V at once by `vmap` (one ppermute each way for both)."""
    return jax.vmap(lambda field: exchange(field, bands))(uv)


def band_step(uv, counts, p: Parameters, bands: int, exchange=exchange):
    """One step of a device's band of the stacked U, V, the rows beyond it received from the
    neighbours (`halo_rows`)."""
    if bands == 1:
        return stacked_step(uv, counts, p)
    return stacked_step(uv, counts, p, *halo_rows(uv, bands, exchange))


def row_window_sums(row):
    """Each cell's sum over the three cells of `row` at columns j - 1, j, j + 1 (zero beyond the grid)."""
    padded = jnp.pad(row, [(0, 0)] * (row.ndim - 1) + [(1, 1)])
    return padded[..., :-2] + padded[..., 1:-1] + padded[..., 2:]


def band_step_overlapped(uv, counts, p: Parameters, bands: int, exchange=exchange):
    """`band_step` reordered so that the exchange can overlap the stepping: the whole band
    stepped with zeros beyond it, then the halo rows' diffusion added to its first and last rows."""
    new = stacked_step(uv, counts, p)
    if bands == 1:
        return new
    above, below = halo_rows(uv, bands, exchange)
    diffusion = (p.dt * jnp.array([p.du, p.dv], uv.dtype)).reshape(2, 1, 1)
    last = uv.shape[1] - 1
    # Updates in place (dynamic_update_slice), where `.at[].add` would become a scatter.
    new = lax.dynamic_update_slice_in_dim(new, new[:, :1] + diffusion * row_window_sums(above), 0, axis=1)
    return lax.dynamic_update_slice_in_dim(new, new[:, last:] + diffusion * row_window_sums(below), last, axis=1)


def _advance_bands(uv, count_factors, p: Parameters, steps: int, unroll: int, mesh: Mesh, exchange=exchange,
                   step=band_step):
    """`steps` steps, the whole loop inside one `shard_map`: each device loops over its band and
    talks to its neighbours only through `exchange`, with no host between two steps."""
    bands = mesh.shape[AXIS]

    def run(band, per_row, per_col):
        body = lambda _, state: step(state, per_row * per_col, p, bands, exchange)  # noqa: E731
        return lax.fori_loop(0, steps, body, band, unroll=unroll)

    sharded = jax.shard_map(run, mesh=mesh, in_specs=(STATE_SPEC, P(AXIS, None), P()), out_specs=STATE_SPEC)
    return sharded(uv, *count_factors)


_STATIC = ("p", "steps", "unroll", "mesh", "exchange", "step")
#: Compiled with XLA's default schedule.
advance_bands = jax.jit(_advance_bands, static_argnames=_STATIC)
#: The reordered step, compiled with XLA's latency-hiding scheduler, off by default on GPUs (JAX's
#: GPU performance tips): it is what schedules the exchange to run while the band is stepped.
advance_bands_overlapped = jax.jit(functools.partial(_advance_bands, step=band_step_overlapped),
                                   static_argnames=_STATIC,
                                   compiler_options={"xla_gpu_enable_latency_hiding_scheduler": True})


class JaxSharded(JaxStacked):
    """The stacked formulation with U and V split in row bands over all the devices JAX sees,
    the halo exchanged explicitly inside the compiled loop (see the module's docstring).
    `devices`: the mesh's (default: all of JAX's default platform, see `band_mesh`); `exchange`:
    see `band_step`."""

    formulation = "sharded"
    advance_bands = staticmethod(advance_bands)
    #: Its bands may lie on the devices of several processes (`gs_course.distributed`).
    spans_processes = True

    def __init__(self, params: Parameters, rows: int, cols: int, devices=None, exchange=exchange):
        # Not JaxStacked.__init__: that one puts the whole state on one device.
        Simulation.__init__(self, params, rows, cols)
        self.mesh = band_mesh(rows, devices)
        self.exchange = exchange
        per_row, per_col = window_count_factors(rows, cols)
        self._count_factors = (self._place(per_row, P(AXIS, None)), self._place(per_col, P()))
        self.set_state(*initial_state(rows, cols))

    def _place(self, host: np.ndarray, spec: P):
        """`host` on the mesh: each process puts only the bands its own devices hold."""
        return jax.make_array_from_callback(host.shape, NamedSharding(self.mesh, spec), lambda index: host[index])

    @property
    def devices(self) -> int:
        return self.mesh.size

    def unroll(self, steps: int) -> int:
        # Unrolling pays on a GPU only (see jax_one_device's FASTEST).
        return super().unroll(steps) if self.mesh.devices.flat[0].platform == "gpu" else 1

    def _advance(self, steps: int) -> None:
        if steps:
            self._uv = self.advance_bands(self._uv, self._count_factors, self.params, steps, self.unroll(steps),
                                          self.mesh, self.exchange)

    def fetch(self) -> tuple[np.ndarray, np.ndarray]:
        u, v = to_host(self._uv)
        return u, v

    def fetch_v(self) -> np.ndarray:
        return to_host(self._uv[1])

    def set_state(self, u: np.ndarray, v: np.ndarray) -> None:
        self._uv = self._place(np.stack((u, v)).astype(np.float32), STATE_SPEC)


class JaxShardedOverlap(JaxSharded):
    """The reordered step, compiled so that each step's exchange may overlap the stepping of the band."""

    formulation = "sharded-overlap"
    advance_bands = staticmethod(advance_bands_overlapped)


#: Ghost rows on each side of a band in `sharded-deep`, and so the steps between two exchanges:
#: on two H200s 16 and 32 timed the same, 8 slower (results/h200-x2/logs/jax-profile.txt).
DEPTH = 32


def ghost_row_factors(rows: int, bands: int, depth: int) -> np.ndarray:
    """The window-count factor of each row (`model.window_count_factors`) of every band extended
    by `depth` rows on each side, the bands one after the other: ((rows / bands + 2 depth) x bands, 1).
    Rows beyond the grid get 0, which is also how `deep_step` knows to keep them at zero."""
    per_row = np.pad(window_count_factors(rows, 1)[0], ((depth, depth), (0, 0)))
    height = rows // bands
    return np.concatenate([per_row[band * height : (band + 1) * height + 2 * depth] for band in range(bands)])


def deep_step(uv, per_row, per_col, p: Parameters):
    """One step of an extended band: rows beyond the grid (factor 0) are kept at zero, the model's
    border, where the step alone would let them grow (the feed term)."""
    return jnp.where(per_row > 0, stacked_step(uv, per_row * per_col, p), 0)


def exchange_ghost_rows(uv, bands: int, depth: int):
    """The extended band with its ghost rows received: the neighbour above's last `depth` band rows
    above, the neighbour below's first `depth` below (zeros beyond the grid's edges, as `exchange`).
    `depth` is at most a band's rows: the rows come from the next band only."""
    height = uv.shape[1] - 2 * depth
    down = [(i, i + 1) for i in range(bands - 1)]
    up = [(i + 1, i) for i in range(bands - 1)]
    above = lax.ppermute(uv[:, height : height + depth], AXIS, down)
    below = lax.ppermute(uv[:, depth : 2 * depth], AXIS, up)
    uv = lax.dynamic_update_slice_in_dim(uv, above, 0, axis=1)
    return lax.dynamic_update_slice_in_dim(uv, below, height + depth, axis=1)


@functools.partial(jax.jit, static_argnames=("p", "steps", "depth", "mesh"))
def advance_deep(uv, count_factors, p: Parameters, steps: int, depth: int, mesh: Mesh):
    """`steps` steps of the extended bands, in blocks of `depth` steps and a last shorter one: each
    block an exchange, then its steps with none (so every call begins with an exchange)."""
    bands = mesh.shape[AXIS]

    def run(band, per_row, per_col):
        def block(band, count):
            if bands > 1:
                band = exchange_ghost_rows(band, bands, depth)
            for _ in range(count):
                band = deep_step(band, per_row, per_col, p)
            return band

        blocks, rest = divmod(steps, depth)
        band = lax.fori_loop(0, blocks, lambda _, band: block(band, depth), band)
        return block(band, rest) if rest else band

    sharded = jax.shard_map(run, mesh=mesh, in_specs=(STATE_SPEC, P(AXIS, None), P()), out_specs=STATE_SPEC)
    return sharded(uv, *count_factors)


@dataclasses.dataclass(frozen=True)
class DeepOptions:
    """Ghost rows each side of a band (`DEPTH` by default), hence steps between exchanges; capped
    at a band's rows."""

    depth: int = DEPTH

    def __post_init__(self):
        if not is_positive_integer(self.depth):
            raise ValueError(f"ghost rows: depth {self.depth!r} is not a row count; use 1 or more (default {DEPTH})")


class JaxShardedDeep(JaxSharded):
    """Each band with `depth` ghost rows each side, exchanged at the start of every call to
    `advance` and every `depth` steps after (see the module's docstring; `depth`: 1 or more, capped
    at a band's rows, `DEPTH` by default)."""

    formulation = "sharded-deep"
    Options = DeepOptions

    def __init__(self, params: Parameters, rows: int, cols: int, options: DeepOptions = DeepOptions(), devices=None):
        Simulation.__init__(self, params, rows, cols)
        self.mesh = band_mesh(rows, devices)
        self.depth = min(options.depth, rows // self.mesh.size)
        per_row = ghost_row_factors(rows, self.mesh.size, self.depth)
        self._count_factors = (self._place(per_row, P(AXIS, None)), self._place(window_count_factors(rows, cols)[1], P()))
        self.set_state(*initial_state(rows, cols))

    def _advance(self, steps: int) -> None:
        if steps:
            self._uv = advance_deep(self._uv, self._count_factors, self.params, steps, self.depth, self.mesh)

    def _bands(self, uv):
        """(2, rows, cols) from the extended bands: their ghost rows left out."""
        height = self.rows // self.mesh.size
        extended = uv.reshape(2, self.mesh.size, height + 2 * self.depth, self.cols)
        return extended[:, :, self.depth : self.depth + height].reshape(2, self.rows, self.cols)

    def fetch(self) -> tuple[np.ndarray, np.ndarray]:
        u, v = to_host(self._bands(self._uv))
        return u, v

    def fetch_v(self) -> np.ndarray:
        return to_host(self._bands(self._uv)[1])  # V alone leaves the devices

    def set_state(self, u: np.ndarray, v: np.ndarray) -> None:
        # Ghost rows start at zero: every run of steps begins with an exchange that fills them.
        bands = np.stack((u, v)).astype(np.float32).reshape(2, self.mesh.size, -1, self.cols)
        extended = np.pad(bands, ((0, 0), (0, 0), (self.depth, self.depth), (0, 0)))
        self._uv = self._place(extended.reshape(2, -1, self.cols), STATE_SPEC)


class JaxShardedAuto(JaxSharded):
    """The naive way: U and V placed in row bands with `NamedSharding`, the single-device loop
    (`jax_one_device.advance_stacked`, through `JaxStacked._advance`) compiled as it is, and XLA
    left to insert the communication."""

    formulation = "sharded-auto"
    _advance = JaxStacked._advance


#: The formulations on several devices: `jax_backend.FORMULATIONS` lists them beside those on one.
FORMULATIONS = {cls.formulation: cls for cls in (JaxSharded, JaxShardedOverlap, JaxShardedDeep, JaxShardedAuto)}
