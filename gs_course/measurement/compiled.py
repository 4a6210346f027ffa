"""What XLA compiles for JAX's formulations, read from the compiled program: the kernels a step
launches and what each one's loop body reads, so that a JAX time can be explained, not only given.

A step that is one kernel reading and writing the whole state crosses memory once a step: it can
approach one pass through memory, never beat it. Going below takes several steps in one kernel,
which XLA's fusion does not do across the iterations of a loop (each iteration's fusion ends where
the loop's state is written). `report()` counts, in the optimised HLO of `steps` steps:

- `kernels_per_step`: the fusions and custom calls (a Pallas kernel is a Triton custom call on a
  GPU) of the loop body, over the steps the body holds (the unrolling);
- `bytes_per_step`: XLA's own estimate of the bytes accessed, over the steps (a loop's body counted
  once a trip), where it gives one (None for a Pallas kernel, which it does not count);
- for a Pallas formulation, `block_reads_per_block`: the blocks of input its kernel reads for each
  block it writes (from the kernel's jaxpr), against 2 for a kernel that reads U and V once.

    python -m gs_course.measurement.compiled [--out FOLDER] [--steps N]   # stacked, pallas, slices
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from .. import backends
from ..parameters import Parameters
from ..workload import FULL
from . import records

KIND = "jax-compiled"
FORMULATIONS = ("slices", "stacked", "pallas")
_KERNEL = re.compile(r"= [^=]*\b(fusion|custom-call)\(")
_COMPUTATION = re.compile(r"^(?:ENTRY )?%?([\w.-]+) .*\{$", re.M)


def _while_bodies(text: str) -> list[str]:
    """The bodies of the program's while loops, by the names `body=` gives."""
    names = set(re.findall(r"body=%?([\w.-]+)", text))
    bodies, current, lines = [], None, []
    for line in text.splitlines():
        header = _COMPUTATION.match(line)
        if header:
            current, lines = header.group(1), []
            continue
        if line.startswith("}"):
            if current in names:
                bodies.append("\n".join(lines))
            current = None
            continue
        if current is not None:
            lines.append(line)
    return bodies


def kernels_in(hlo: str) -> int:
    """Kernels (fusions and custom calls) an iteration of the program's loop launches, or of the
    whole program where it has no loop."""
    bodies = _while_bodies(hlo)
    scope = bodies[0] if len(bodies) == 1 else hlo
    return sum(1 for line in scope.splitlines() if _KERNEL.search(line))


def equations(jaxpr):
    """Every equation of a jaxpr, those of the jaxprs inside it too (jit, loops, calls, kernels):
    how the course reads a program (here, and the checkers of JAX's exercises)."""
    for equation in jaxpr.eqns:
        yield equation
        for value in equation.params.values():
            for inner in value if isinstance(value, (tuple, list)) else (value,):
                inner = getattr(inner, "jaxpr", inner)
                if hasattr(inner, "eqns"):
                    yield from equations(inner)


def pallas_block_reads(sim) -> int | None:
    """Blocks of input the Pallas kernel reads for each block it writes (the reads of a ref in
    its kernel's jaxpr), or None where the formulation has no Pallas kernel."""
    import jax

    function, arguments = sim.compiled_loop(1)
    closed = jax.make_jaxpr(lambda u, v: function(u, v, *arguments[2:]))(*arguments[:2])
    for equation in equations(closed.jaxpr):
        if equation.primitive.name == "pallas_call":
            kernel = equation.params["jaxpr"]
            return sum(1 for inner in equations(kernel) if inner.primitive.name == "get")
    return None


def report(formulation: str, rows: int, cols: int, steps: int) -> dict:
    sim = backends.create("jax", Parameters(), rows, cols, formulation)
    compiled = sim.lowered(steps).compile()
    hlo = compiled.as_text()
    cost = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, list) else cost or {}
    unroll = sim.unroll(steps)
    per_iteration = kernels_in(hlo)
    accessed = cost.get("bytes accessed")
    # XLA's estimate counts a loop's body once, not once a trip; a custom call (Pallas) it does not count
    if accessed and _while_bodies(hlo):
        accessed = None if "custom-call(" in hlo else accessed * steps / unroll
    return {"formulation": formulation, "rows": rows, "cols": cols, "steps": steps, "unroll": unroll,
            "kernels_per_iteration": per_iteration, "kernels_per_step": per_iteration / unroll,
            "bytes_per_step": accessed / steps if accessed else None,
            "state_bytes": 2 * rows * cols * 4,
            "block_reads_per_block": pallas_block_reads(sim) if formulation == "pallas" else None}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gs_course.measurement.compiled", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="write jax-compiled.json (a record) into this folder")
    parser.add_argument("--steps", type=int, default=FULL.steps_per_image)
    parser.add_argument("--rows", type=int, default=FULL.rows)
    parser.add_argument("--cols", type=int, default=FULL.cols)
    args = parser.parse_args(argv)
    found = [report(f, args.rows, args.cols, args.steps) for f in FORMULATIONS]
    for entry in found:
        reads = f", {entry['block_reads_per_block']} blocks read a block written" if entry["block_reads_per_block"] else ""
        moved = (f", XLA's estimate {entry['bytes_per_step'] / entry['state_bytes']:.1f} x the state a step"
                 if entry["bytes_per_step"] else "")
        print(f"jax/{entry['formulation']}: {entry['kernels_per_step']:g} kernels a step{moved}{reads}")
    if args.out:
        path = records.write(KIND, {"formulations": found}, args.out / "jax-compiled.json")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
