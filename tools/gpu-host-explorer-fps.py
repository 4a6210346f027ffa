#!/usr/bin/env python3
"""Frames per second of the explorer's loop (gs_course.lessons.view.Explorer.frame: 32 steps on the device,
V fetched, coloured and encoded as PNG) at 512 x 512, for CuPy and JAX, on the GPU host.

    OUT=/some/folder python3 tools/gpu-host-explorer-fps.py

Writes $OUT/explorer-fps.json and prints a table; about a minute. The frame time is split into
the steps (advance + synchronize) and the rest (fetch, colour, PNG), so that a slow result says
which side to work on. The browser's own drawing is not included.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gs_course import __version__, backends
from gs_course.devices import gpus
from gs_course.lessons.view import Explorer

ROWS = COLS = 512
STEPS_PER_FRAME = 32
FRAMES = 300


def measure(name: str) -> dict:
    found = backends.probe(name)
    if not found.on_gpu:
        return {"backend": name, "status": f"not on a GPU here: {found.reason or found.device}"}
    explorer = Explorer(ROWS, COLS, backend=name, steps_per_frame=STEPS_PER_FRAME)
    for _ in range(10):  # compilation, graph capture, pools
        explorer.frame()
    frames = []
    start = time.perf_counter()
    for _ in range(FRAMES):
        begin = time.perf_counter()
        explorer.frame()
        frames.append(time.perf_counter() - begin)
    total = time.perf_counter() - start
    steps = []
    for _ in range(50):
        begin = time.perf_counter()
        explorer.sim.advance(STEPS_PER_FRAME)
        explorer.sim.synchronize()
        steps.append(time.perf_counter() - begin)
    return {
        "backend": name,
        "formulation": explorer.sim.formulation,
        "device": found.device,
        "status": "ok",
        "frames_per_s": FRAMES / total,
        "median_frame_ms": statistics.median(frames) * 1e3,
        "median_steps_ms": statistics.median(steps) * 1e3,
        "median_rest_ms": (statistics.median(frames) - statistics.median(steps)) * 1e3,
    }


def main() -> int:
    out = Path(os.environ.get("OUT", "."))
    results = {
        "what": f"gs_course.lessons.view.Explorer.frame at {ROWS} x {COLS}, {STEPS_PER_FRAME} steps a frame, {FRAMES} frames",
        "recorded": time.strftime("%Y-%m-%d %H:%M:%S"),
        "gs_course": __version__,
        "python": platform.python_version(),
        "gpu": ", ".join(g.name for g in gpus()) or None,
        "results": [measure(name) for name in ("cupy", "jax")],
    }
    for r in results["results"]:
        if r["status"] == "ok":
            print(f"{r['backend']:<5} {r['formulation']:<9} {r['frames_per_s']:6.1f} frames/s  frame "
                  f"{r['median_frame_ms']:.2f} ms = steps {r['median_steps_ms']:.2f} ms + fetch, colour, PNG "
                  f"{r['median_rest_ms']:.2f} ms")
        else:
            print(f"{r['backend']:<5} {r['status']}")
    (out / "explorer-fps.json").write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {out / 'explorer-fps.json'}")
    return 0 if all(r["status"] == "ok" for r in results["results"]) else 1


if __name__ == "__main__":
    sys.exit(main())
