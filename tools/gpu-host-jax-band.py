"""What keeps `sharded-deep` under 2x on two GPUs at 8192 x 8192 (issue 18): a GPU's band there is
4,096 rows (4,160 with the ghost rows), and two GPUs took more than half the one-GPU time a step
(BENCHMARKS.md). This times the same one-device program on the band's size and on the whole
grid, each on one GPU, then the band's size on both GPUs at once in two independent processes (no
exchange between them; both compile and warm up, then start timing together): if the band alone
on one GPU already costs more a row, the step does not scale down linearly; if only the two at
once do, running two GPUs side by side costs it. Then
the two-device program itself, with its exchanges and without them (its values then wrong: the
timing only).

    python3 tools/gpu-host-jax-band.py            (the 2 x H200 host; about a minute)

Writes $OUT/jax-band.txt. On a CPU: JAX_PLATFORMS=cpu XLA_FLAGS=--xla_force_host_platform_device_count=2 COLS=64 ROWS="64 32"
python3 tools/gpu-host-jax-band.py
"""

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COLS = int(os.environ.get("COLS", 8192))
ROWS = [int(r) for r in os.environ.get("ROWS", "8192 4096").split()]
STEPS = 64
CHILD = """
import json, sys
import jax
from gs_course import measure
from gs_course.backends import jax_sharded
from gs_course.parameters import Parameters
import os, time
from gs_course.measurement import records
from gs_course.measurement import timer
rows, cols, steps, devices, exchange = (int(a) for a in sys.argv[1:6])
barrier = sys.argv[6]  # "-": none; else a file whose existence starts the timing, once this one has written NAME.ready
if not exchange:  # timing only: the bands never hear from each other, the values are wrong
    jax_sharded.exchange_ghost_rows = lambda uv, bands, depth: uv
sim = jax_sharded.JaxShardedDeep(Parameters(dt=0.9), rows, cols, devices=jax.devices()[:devices])
if barrier != "-":
    sim.advance(steps)  # compiled and warm before waiting for the other process
    sim.synchronize()
    open(barrier + "." + os.environ["CUDA_VISIBLE_DEVICES"] + ".ready", "w").close()
    while not os.path.exists(barrier):
        time.sleep(0.001)
samples = timer.timed(lambda: sim.advance(steps), repeats=10, warmup=2, synchronize=sim.synchronize)
print(json.dumps({"rows": rows // devices, "cols": cols, "depth": sim.depth, "device": ", ".join(map(str, sim.mesh.devices.flat)),
                  "median_ms_a_step": samples.median * 1e3 / steps,
                  "range_ms_a_step": [min(samples.seconds) * 1e3 / steps, max(samples.seconds) * 1e3 / steps]}))
"""


def start(rows: int, gpu: str, exchange: bool = True, barrier: str = "-") -> subprocess.Popen:
    """`rows` split over the GPUs listed in `gpu` ("0" or "0,1"); `barrier`: see CHILD."""
    env = dict(os.environ, CUDA_VISIBLE_DEVICES=gpu, XLA_PYTHON_CLIENT_PREALLOCATE="false")
    devices = len(gpu.split(","))
    return subprocess.Popen([sys.executable, "-c", CHILD, str(rows), str(COLS), str(STEPS), str(devices),
                             str(int(exchange)), barrier], env=env,
                            stdout=subprocess.PIPE, text=True)


def result(child: subprocess.Popen) -> dict:
    out, _ = child.communicate(timeout=300)
    return json.loads(out.strip().splitlines()[-1])


def line(label: str, r: dict) -> str:
    rows = r["rows"] + 2 * r["depth"]
    return (f"{label}: {r['rows']} x {r['cols']} a device (+{r['depth']} ghost rows a side) on {r['device']}: "
            f"{r['median_ms_a_step']:.3f} ms a step ({r['range_ms_a_step'][0]:.3f}-{r['range_ms_a_step'][1]:.3f}), "
            f"{r['median_ms_a_step'] * 1e6 / rows:.1f} ns a row (ghost rows counted)")


def main() -> int:

    made = records.provenance(command="tools/gpu-host-jax-band.py")
    lines = [f"# sharded-deep, {STEPS} steps a call, median (range) of 10; commit "
             f"{made['commit']}, {made['date']}"]
    for rows in ROWS:
        lines.append(line("alone on GPU 0", result(start(rows, "0"))))
    barrier = Path(tempfile.mkdtemp()) / "go"
    both = [start(ROWS[-1], gpu, barrier=str(barrier)) for gpu in ("0", "1")]
    while not all(Path(f"{barrier}.{gpu}.ready").exists() for gpu in ("0", "1")):
        if any(child.poll() is not None for child in both):
            break  # one failed: its result() says why
        time.sleep(0.01)
    barrier.touch()
    for gpu, child in zip(("0", "1"), both):
        lines.append(line(f"both GPUs at once, GPU {gpu}", result(child)))
    lines.append(line("one program on both GPUs", result(start(ROWS[0], "0,1"))))
    lines.append(line("the same without its exchanges (values wrong)", result(start(ROWS[0], "0,1", exchange=False))))
    print(*lines, sep="\n")
    out = Path(os.environ.get("OUT", "gpu-results"))
    out.mkdir(parents=True, exist_ok=True)
    (out / "jax-band.txt").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
