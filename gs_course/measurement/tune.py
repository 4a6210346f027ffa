"""`gs-course tune`: the sweep of the kernel shapes that run several steps a launch (issue 32), on a GPU.

- CuPy's `multistep` formulation: the fused kernel's tile, halo, depth and threads
  (`temporal_blocking.Blocking`); first tile and halo (depth = halo), then, around the fastest,
  the depth and the threads.
- JAX's `pallas` formulation: the kernel's block (rows, cols).

Each shape is first checked against the float64 reference (`bench.check_simulation`, the
benchmark's own check): a shape whose error exceeds `model.PARITY_ATOL` is timed but never the
best. Each is then timed on the benchmark's grid (`workload.FULL`) with its library's `Timer`
(CUDA events for CuPy), compilation apart, the median of the repeats; for CuPy with the compiler's
report (registers, local and shared memory, blocks an SM).

The sweep is the record "multistep-sweep" (`--out`: multistep-sweep.json, written after each part,
so that a sweep cut short keeps what it measured). `--apply-best` writes the change that makes the
fastest shapes the defaults (`temporal_blocking.BLOCKING`, `jax_pallas.BLOCK`) as a diff beside
it: nothing the course runs rewrites its own source; a person applies the diff (`patch -p1`).
"""

from __future__ import annotations

import dataclasses
import difflib
import re
import statistics
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from .. import backends, paths
from ..backends import jax_pallas, temporal_blocking
from ..backends.temporal_blocking import Blocking
from ..model import PARITY_ATOL
from ..parameters import Parameters
from ..workload import FULL
from . import bench, records, timer

KIND, SCHEMA = "multistep-sweep", 1
#: The sweeps, by the library they need on a GPU.
SWEEPS = {"cupy": "cupy", "jax": "jax"}
#: The Pallas blocks tried, the likeliest first.
PALLAS_BLOCKS = ((16, 128), (8, 128), (32, 128), (16, 256), (8, 256), (32, 64), (64, 64), (64, 128), (16, 64))
#: Steps a timed call, and repeats of it.
STEPS, REPEATS = 320, 5


class TuneError(RuntimeError):
    """A sweep that cannot run here (one line: why)."""


def cupy_candidates() -> Iterable[Blocking]:
    """Tiles whose region is 64, 128 or 256 cells wide and 32 to 128 rows high, halos 2 to 16,
    the likeliest halos first (should time run out); those that need more shared memory than a
    block may have are left out."""
    for halo in (8, 4, 6, 12, 2, 16):
        for width in (64, 128, 256):
            for height in (32, 64, 96, 128):
                tile = (width - 2 * halo, height - 2 * halo)
                if min(tile) < 8:
                    continue
                try:
                    yield Blocking(*tile, halo, threads=(min(width, 128), 4))
                except ValueError:
                    continue


def cupy_neighbours(best: Blocking) -> list[Blocking]:
    """The second part of the CuPy sweep: the fastest tile with other depths, then other threads."""
    depths = sorted({1, 2, best.halo // 2, best.halo - 1} - {0, best.halo})
    threads = [(32, 8), (64, 4), (64, 8), (128, 2), (128, 8), (256, 2), (256, 4), (32, 16)]
    return ([dataclasses.replace(best, depth=d) for d in depths]
            + [dataclasses.replace(best, threads=t) for t in threads if t != best.threads])


def describe_blocking(b: Blocking) -> str:
    return f"tile {b.tile_cols} x {b.tile_rows}, halo {b.halo}, depth {b.depth}, threads {b.threads}"


def _timed(call: Callable[[], object], sim, library: str, steps: int, repeats: int) -> dict:
    """us a step of `call` (`steps` steps of `sim`), on the device's clock where the library has
    one, and the first call's time (compilation, graph capture) apart."""
    samples = timer.for_library(library).time(call, repeats=repeats, warmup=1, on=sim)
    us = [s * 1e6 / steps for s in (samples.device_s or samples.seconds)]
    return {"us_per_step": statistics.median(us), "min_us": min(us), "max_us": max(us), "compile_s": samples.compile_s}


def measure_cupy(blocking: Blocking, steps: int = STEPS, repeats: int = REPEATS) -> dict:
    """One shape of the fused kernel: its check error, its time a step, the compiler's report."""
    shape = dataclasses.asdict(blocking)  # the formulation's options, field by field
    error = bench.check_simulation(backends.create("cupy", bench.CHECK_PARAMS, *bench.CHECK_GRID, "multistep", **shape))
    sim = backends.create("cupy", Parameters(), FULL.rows, FULL.cols, "multistep", **shape)
    row = {"blocking": dataclasses.asdict(blocking), **_timed(lambda: sim.advance(steps), sim, "cupy", steps, repeats),
           "check_error": error}
    return row | compiler_report(blocking)


def compiler_report(blocking: Blocking) -> dict:
    """What the compiler made of the fused kernel for `blocking` (the CuPy backend's
    `kernel_report`), and the cells computed a cell advanced."""
    return backends.load("cupy").kernel_report(blocking) | {"recomputed": blocking.recomputed()}


def measure_pallas(block: tuple[int, int], steps: int = STEPS, repeats: int = REPEATS) -> dict:
    """One block of the Pallas kernel: its check error and its time a step (calls of one image's
    steps, the loop the formulation compiles)."""
    error = bench.check_simulation(backends.create("jax", bench.CHECK_PARAMS, *bench.CHECK_GRID, "pallas", block=block))
    sim = backends.create("jax", Parameters(), FULL.rows, FULL.cols, "pallas", block=block)
    calls = steps // FULL.steps_per_image

    def images():
        for _ in range(calls):
            sim.advance(FULL.steps_per_image)

    timed = _timed(images, sim, "jax", calls * FULL.steps_per_image, repeats)
    return {"block": list(block), **timed, "check_error": error}


def sweep(candidates: Iterable, measure: Callable[[object], dict], budget_s: float, describe: Callable[[object], str],
          log=print, clock=time.monotonic) -> list[dict]:
    """Each candidate measured in turn until `budget_s` has passed; a candidate that fails is a
    row saying why, so that it hides none of the others."""
    rows, until = [], clock() + budget_s
    for candidate in candidates:
        if clock() > until:
            log(f"time's up: the remaining candidates not measured (after {len(rows)})")
            break
        try:
            row = measure(candidate)
        except Exception as err:  # noqa: BLE001 (one shape that fails must not hide the others)
            row = {"candidate": describe(candidate), "failed": f"{type(err).__name__}: {str(err)[:300]}"}
        rows.append(row)
        log(f"{describe(candidate):<60} " + (row.get("failed") or
            f"{row['us_per_step']:6.2f} us a step ({row['min_us']:.2f}-{row['max_us']:.2f}), error {row['check_error']:.1e}"))
    return rows


def best(rows: list[dict]) -> dict | None:
    """The fastest row that passed the check, None where none did."""
    good = [r for r in rows if "failed" not in r and r["check_error"] <= PARITY_ATOL]
    return min(good, key=lambda r: r["us_per_step"]) if good else None


def run(only: Iterable[str], budget_s: float, out: Path | None, log=print) -> dict:
    """The sweeps of `only` ('cupy', 'jax') within `budget_s` in all: the record's payload, saved
    to `out`/multistep-sweep.json after each part where `out` is given."""
    only = list(only)
    for name in only:
        if not backends.probe(SWEEPS[name]).on_gpu:
            raise TuneError(f"the {name} sweep needs {SWEEPS[name]} on a GPU, which is not here "
                            f"({backends.probe(SWEEPS[name]).reason or 'it runs on the CPU'}): run it on the GPU node")
    found = {"cupy_shapes": [], "cupy_tuned": [], "cupy_best": None, "pallas_blocks": [], "pallas_best": None}
    share = budget_s / len(only) if only else 0

    def save():
        if out is not None:
            records.write(KIND, found, out / f"{KIND}.json", schema=SCHEMA)

    if "cupy" in only:
        log("## CuPy multistep: tile and halo (depth = halo, 128 x 4 threads or fewer)")
        shapes = sweep(list(cupy_candidates()), measure_cupy, 0.7 * share, describe_blocking, log)
        first = best(shapes)
        tuned = []
        if first:
            around = _blocking(first)
            log(f"## CuPy multistep: depth and threads for {describe_blocking(around)}")
            tuned = sweep(cupy_neighbours(around), measure_cupy, 0.3 * share, describe_blocking, log)
        found.update(cupy_shapes=shapes, cupy_tuned=tuned, cupy_best=best(shapes + tuned))
        save()
    if "jax" in only:
        log("## JAX pallas: block (rows, cols)")
        blocks = sweep(PALLAS_BLOCKS, measure_pallas, share, str, log)
        found.update(pallas_blocks=blocks, pallas_best=best(blocks))
        save()
    log(f"best: cupy/multistep {found['cupy_best'] and describe_blocking(_blocking(found['cupy_best']))}; "
        f"jax/pallas {found['pallas_best'] and tuple(found['pallas_best']['block'])}")
    return found


def _blocking(row: dict) -> Blocking:
    return Blocking(**row["blocking"])


def _source(module) -> Path:
    return Path(module.__file__)


def defaults_diff(found: dict, root: Path = paths.ROOT) -> str:
    """The unified diff (paths from the clone's root) that makes the sweep's fastest shapes the
    defaults; empty where the sweep found none or they are the defaults already."""
    changes = []
    if found.get("cupy_best"):
        b = found["cupy_best"]["blocking"]
        changes.append((_source(temporal_blocking), r"^BLOCKING = Blocking\(.*\)$",
                        f"BLOCKING = Blocking(tile_cols={b['tile_cols']}, tile_rows={b['tile_rows']}, halo={b['halo']}, "
                        f"depth={b['depth']}, threads=({b['threads'][0]}, {b['threads'][1]}))"))
    if found.get("pallas_best"):
        rows, cols = found["pallas_best"]["block"]
        changes.append((_source(jax_pallas), r"^BLOCK = \(\d+, \d+\)$", f"BLOCK = ({rows}, {cols})"))
    diff = []
    for path, pattern, line in changes:
        before = path.read_text()
        after, count = re.subn(pattern, line, before, count=1, flags=re.MULTILINE)
        if count != 1:
            raise TuneError(f"{path}: no line matches {pattern}: its default cannot be set from the sweep")
        name = path.resolve().relative_to(root.resolve()).as_posix()
        diff += difflib.unified_diff(before.splitlines(True), after.splitlines(True), f"a/{name}", f"b/{name}")
    return "".join(diff)


def write_defaults_diff(found: dict, path: Path) -> str:
    """`defaults_diff` written to `path`; what to say about it."""
    diff = defaults_diff(found)
    path.write_text(diff)
    if not diff:
        return f"{path}: empty, the defaults are the sweep's fastest already (or it found none)"
    return f"{diff}\nsaved {path}: apply it with patch -p1 < {path} (from the clone's root)"


def load(path: str | Path) -> dict:
    return records.load(path, KIND, SCHEMA)
