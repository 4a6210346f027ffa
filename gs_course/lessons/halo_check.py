"""The checker of the JAX tutorial's halo exchange: a grid split in bands of rows over several
devices, each band's neighbouring rows sent with `lax.ppermute` (the notebook calls it through
`gs_course.lessons.checkers`)."""

from __future__ import annotations

import itertools

import numpy as np

from .check_core import NotYet, _equations, _grid, _jaxpr, _to_numpy, ok
from .jax_programs import pairs_left_out, permutation_mistake
from .rounding import rounded_to


def _several_devices():
    """Two GPUs or more where there are; else the CPU's devices, of which the notebook's setup
    asks JAX for four (XLA_FLAGS, read once when JAX starts)."""
    import jax

    for devices in (jax.devices(), jax.devices("cpu")):
        if len(devices) >= 2:
            return devices
    raise NotYet("JAX sees one device here and an exchange needs two: run the notebook's first cell "
                 "(it sets XLA_FLAGS=--xla_force_host_platform_device_count=4) in a fresh kernel, "
                 "before anything imports jax")


def _row_name(grid: np.ndarray, row: np.ndarray, height: int) -> str:
    """Which row of the grid `row` is: 'row r (row i of band b)', 'zeros' or 'no row of the grid'."""
    if not row.any():
        return "zeros"
    same = np.flatnonzero((grid == row).all(axis=1))
    if not same.size:
        rounded = next(((r, name) for r in range(grid.shape[0]) if (name := rounded_to(row, grid[r]))), None)
        if rounded:
            return f"row {rounded[0]} rounded to {rounded[1]} (an astype on the way: send the row as it is)"
        return "no row of the grid"
    r = int(same[0])
    return f"row {r} (row {r % height} of band {r // height})"


def _exchange_mistakes(grid: np.ndarray, got: dict, bands: int) -> list[str]:
    """One line per band whose row above or below is not its neighbour's border row (zeros
    beyond the grid's edges), naming the row it got instead."""
    height = grid.shape[0] // bands
    mistakes = []
    for b in range(bands):
        for side, neighbour, r in (("above", b - 1, b * height - 1), ("below", b + 1, (b + 1) * height)):
            received = got[side][b]
            if 0 <= neighbour < bands:
                if np.array_equal(received, grid[r]):
                    continue
                want = f"row {r}, the {'last' if side == 'above' else 'first'} row of band {neighbour}"
            else:
                if not received.any():
                    continue
                want = "zeros (the grid's edge)"
            mistakes.append(f"band {b}'s row {side} is {_row_name(grid, received, height)}, expected {want}")
    return mistakes


def _sent(grid: np.ndarray, bands: int, row: str, direction: str, wrap: bool) -> np.ndarray:
    """What each band receives when every band sends its `row` ("first" or "last") `direction`
    ("down": band i to i + 1, "up": i + 1 to i), the pairs wrapping around the grid's edges or not."""
    height = grid.shape[0] // bands
    sent = grid[height - 1 :: height] if row == "last" else grid[::height]
    received = np.zeros((bands, grid.shape[1]), grid.dtype)
    for b in range(bands):
        source = b - 1 if direction == "down" else b + 1
        if wrap or 0 <= source < bands:
            received[b] = sent[source % bands]
    return received


def _one_row(shape: tuple, band_rows: int) -> str:
    """What a row of the wrong shape is: a row that lost its dimension, the whole band, or other."""
    if len(shape) == 1:
        return "one row, kept two-dimensional (band[-1:], not band[-1])"
    if shape[0] == band_rows:
        return ("it is the whole band: send one row, band[-1:] (its last) for the row above the next band, band[:1] "
                "(its first) for the row below the one before")
    return "one row of the band, kept two-dimensional (band[-1:] or band[:1])"


#: What each side must receive: (the row its neighbour sends, the direction it is sent).
_WANTED = {"above": ("last", "down"), "below": ("first", "up")}
_DIRECTIONS = {"down": "down (band i to band i + 1)", "up": "up (band i + 1 to band i)"}


def _side_mistake(grid: np.ndarray, received: np.ndarray, bands: int, side: str) -> str | None:
    """What the row `side` of every band is, where it is a neighbour's row sent the wrong way:
    which row, which direction, whether the pairs wrap around."""
    row_wanted, direction_wanted = _WANTED[side]
    # the fewest differences first: with 2 bands the pairs that wrap around send the same rows both ways
    for row, direction, wrap in sorted(itertools.product(("last", "first"), ("down", "up"), (False, True)),
                                       key=lambda c: (c[0] != row_wanted) + (c[1] != direction_wanted) + c[2]):
        if (row, direction, wrap) == (row_wanted, direction_wanted, False) or \
                not np.array_equal(received, _sent(grid, bands, row, direction, wrap)):
            continue
        parts = []
        if row != row_wanted:
            parts.append(f"it is each band's {row} row where the {row_wanted} row of the band {side} belongs")
        if direction != direction_wanted:
            parts.append(f"it is sent {_DIRECTIONS[direction]}, but the row {side} a band comes from the band {side} "
                         f"it, sent {_DIRECTIONS[direction_wanted]}")
        if wrap:
            parts.append("nothing lies beyond the grid's edges: leave the pairs that wrap around (last band to first, "
                         "first to last) out of the permutations")
        return f"your row {side}: " + "; ".join(parts)
    return None


def _exchange_hint(grid: np.ndarray, got: dict, bands: int) -> str:
    """The usual cause behind the rows `_exchange_mistakes` lists, where it is a common one."""
    height = grid.shape[0] // bands
    received = {side: np.asarray(got[side]).reshape(bands, -1) for side in _WANTED}
    if all(np.array_equal(received[side], _sent(grid, bands, *_WANTED[other], False))
           for side, other in (("above", "below"), ("below", "above"))):
        return ("; above and below are swapped: the row above a band is the last row of the band above it, "
                "sent down")
    sides = [m for m in (_side_mistake(grid, received[side], bands, side) for side in _WANTED) if m]
    causes = {m.split(": ", 1)[1] for m in sides}
    if len(sides) == 2 and len(causes) == 1:  # both sides wrong the same way: said once
        return "; " + causes.pop()
    if sides:
        return "; " + "; ".join(sides)
    if got["above"][0].any() or got["below"][-1].any():
        return ("; nothing lies beyond the grid's edges: leave the pairs that wrap around (last band to "
                "first, first to last) out of the permutations")
    if np.array_equal(got["below"][0], grid[height - 1]) or np.array_equal(got["above"][-1], grid[-height]):
        return "; a band got its own border row back: each device sends its last row down and its first row up"
    return ""


#: A collective given an axis name that the mesh does not have fails with a bare AssertionError.
_EXCHANGE_ERRORS = (
    ((AssertionError, NameError, ValueError), r"^$|axis name|unbound axis",
     "{what} names an axis the mesh does not have: the mesh's one axis is \"rows\", "
     "lax.ppermute(x, \"rows\", pairs)"),
)


#: The mesh axis the exercise names (the sharded formulations name theirs the same).
AXIS = "rows"


def halo_exchange(student) -> None:
    """`student(band, bands)`, run by `jax.shard_map` on every device's band of rows (mesh axis
    "rows", `bands` devices), must return (the row just above its band, the row just below it),
    each of shape (1, cols): its neighbours' border rows, zeros beyond the grid's edges, sent with
    `lax.ppermute`. Checked on 2, 3 and 4 bands where there are enough devices."""
    import jax
    from jax.sharding import Mesh, PartitionSpec

    devices = _several_devices()
    rng = np.random.default_rng()
    cols = _grid(rng)[1]
    counts = sorted({2, min(3, len(devices)), min(4, len(devices))})
    for bands in counts:
        height = int(rng.integers(3, 9))
        grid = rng.random((bands * height, cols), dtype=np.float32)

        def each_band(band, bands=bands):
            rows = student(band, bands)
            if not isinstance(rows, (tuple, list)) or len(rows) != 2:
                raise NotYet("your exchange must return a pair (row above, row below)")
            rows = tuple(rows)  # a list is a pair too
            for side, row in zip(("above", "below"), rows):
                if row.shape != (1, band.shape[1]):
                    raise NotYet(f"your row {side} has shape {row.shape}, expected (1, {band.shape[1]}): "
                                 + _one_row(row.shape, band.shape[0]))
                if row.dtype != band.dtype:  # a row sent in a half precision arrives rounded
                    raise NotYet(f"your row {side} has dtype {row.dtype}, the band's is {band.dtype}: the row is sent "
                                 f"rounded to {row.dtype}. Send it as it is, band[-1:] or band[:1] without astype")
            return rows

        mesh = Mesh(np.array(devices[:bands]), (AXIS,))
        spec = PartitionSpec(AXIS)
        program = jax.jit(jax.shard_map(each_band, mesh=mesh, in_specs=spec, out_specs=(spec, spec)))
        jaxpr = _jaxpr(jax, program, (grid,), "your exchange", _EXCHANGE_ERRORS)
        pairs = permutation_mistake(jaxpr, bands)  # XLA refuses it only when it compiles, with its own traceback
        if pairs:
            raise NotYet(pairs)
        sends = any(eqn.primitive.name == "ppermute" for eqn in _equations(jaxpr.jaxpr))
        got = dict(zip(("above", "below"), (_to_numpy(rows, "your rows", None) for rows in program(grid))))
        mistakes = _exchange_mistakes(grid, got, bands)
        if mistakes and not sends:
            raise NotYet("your exchange sends no row from one device to another: each band's border rows must "
                         "travel to the neighbouring devices, lax.ppermute(row, \"rows\", perm) with the pairs "
                         "(source, destination) of the bands; a band's own rows, or a sum over the bands (psum), "
                         "are not its neighbours'")
        if mistakes and (left_out := pairs_left_out(jaxpr, bands)):
            raise NotYet(left_out)
        if mistakes:
            raise NotYet(f"with {bands} bands of {height} rows: " + "; ".join(mistakes[:4])
                         + (f"; and {len(mistakes) - 4} more" if len(mistakes) > 4 else "")
                         + _exchange_hint(grid, got, bands))
        if not sends:
            raise NotYet("the rows are right, but not sent with lax.ppermute: each device should send "
                         "one row to each neighbour, not gather the other bands")
    ok(f"halo exchange: right on {', '.join(map(str, counts))} bands of {devices[0].platform.upper()} "
        "devices, zeros beyond the grid's edges")
