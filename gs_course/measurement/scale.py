"""`gs-course scale`: one backend's formulation on 1, 2, ... N devices, strong and weak scaling.

- *strong*: the same grid on every device count: ideally N devices take 1/N of the time;
- *weak*: the grid's rows grow with the device count (rows x N), so that each device keeps the same
  share: ideally the time per step stays that of one device.

Each point runs in a fresh child process (`python -m gs_course.measurement.scale --worker SPEC`): libraries
read their device settings once, at import (Legate's LEGATE_CONFIG, XLA's flags), so a count of
devices is a process. The child gets `device_env()` and prints its answer as one JSON line behind
`MARKER` (Legate prints its own lines on standard output). Without a GPU the devices are CPU
processors: Legate's `--cpus N` (`--min-cpu-chunk 1`, so that small test grids split too) and
XLA's host platform with N devices, so the whole path runs, small, in CI.

A backend plugs in with an entry in `ENVIRONMENTS` (the variables that give it N devices); the
worker only calls `backends.create(...)`, `advance` and `synchronize`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from .. import backends, paths
from ..devices import gpus
from ..parameters import Parameters
from . import records
from . import timer

MARKER = "gs-course-scale: "
KIND = "scale"
MODES = ("strong", "weak")


class ScaleError(ValueError):
    """Bad input: one line for the user."""


class PointFailed(RuntimeError):
    """A point whose child process gave no answer: its last line of errors says why."""


# --- the environment of N devices ------------------------------------------------------------


def _legate(devices: int, on_gpu: bool) -> dict[str, str]:
    """Legate's processors: N GPUs with most of their memory, or N CPU processors that split
    even small arrays (without --min-cpu-chunk Legate keeps a small array whole)."""
    if on_gpu:
        free_mib = min(g.memory_free for g in gpus()[:devices]) // 2**20
        return {"LEGATE_CONFIG": f"--gpus {devices} --cpus 2 --sysmem 4000 --fbmem {min(40000, free_mib * 3 // 4)}"}
    return {"LEGATE_CONFIG": f"--cpus {devices} --gpus 0 --sysmem 2000 --min-cpu-chunk 1"}


def _jax(devices: int, on_gpu: bool) -> dict[str, str]:
    """JAX sees the GPUs CUDA shows it; on the CPU, XLA's host platform split into N devices."""
    if on_gpu:
        return {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}
    flags = os.environ.get("XLA_FLAGS", "")
    return {"JAX_PLATFORMS": "cpu", "XLA_FLAGS": f"{flags} --xla_force_host_platform_device_count={devices}".strip()}


#: Backend -> the variables (beyond CUDA_VISIBLE_DEVICES) that give it `devices` devices.
ENVIRONMENTS: dict[str, Callable[[int, bool], dict[str, str]]] = {"cupynumeric": _legate, "jax": _jax}


def device_env(backend: str, devices: int, on_gpu: bool | None = None) -> dict[str, str]:
    """The variables a child needs to run `backend` on `devices` devices (GPUs where there are)."""
    on_gpu = bool(gpus()) if on_gpu is None else on_gpu
    if on_gpu and devices > len(gpus()):
        raise ScaleError(f"{devices} GPUs asked for, {len(gpus())} here")
    env = {"CUDA_VISIBLE_DEVICES": ",".join(str(i) for i in range(devices))} if on_gpu else {}
    if backend in ENVIRONMENTS:
        env.update(ENVIRONMENTS[backend](devices, on_gpu))
    elif devices > 1:
        raise ScaleError(f"backend {backend} has no setting for several devices; scale runs "
                         f"{', '.join(ENVIRONMENTS)}")
    return env


# --- one point, in its own process -----------------------------------------------------------


def worker(spec: dict) -> dict:
    """Make the simulation, run one call of `steps` steps to warm up, then time `repeats` calls by
    the library's timer (the clock stops when the device is done, as the benchmark's does)."""
    params = Parameters(**spec.get("params", {}))
    sim = backends.create(spec["backend"], params, spec["rows"], spec["cols"], spec["formulation"],
                          **spec.get("options", {}))
    samples = timer.for_library(sim.backend).time(lambda: sim.advance(spec["steps"]), repeats=spec["repeats"],
                                                 warmup=1, on=sim)
    return {"device": backends.probe(sim.backend).describe(), "formulation": sim.formulation,
            "steps_per_call": spec["steps"], "timing": samples.as_dict(),
            "step_s": samples.median / spec["steps"]}


def measure_point(spec: dict, timeout_s: float = 600) -> dict:
    """`spec` run by a child process in `device_env`; its answer, or PointFailed saying why not."""
    env = {**os.environ, **device_env(spec["backend"], spec["devices"], spec.get("on_gpu"))}
    command = [sys.executable, "-m", "gs_course.measurement.scale", "--worker", json.dumps(spec)]
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise PointFailed(f"{_name(spec)}: no answer after {timeout_s:.0f} s") from None
    answer = records.child_answer(done, MARKER)
    if answer is None:
        raise PointFailed(f"{_name(spec)} failed: {records.child_failure(done)}")
    return answer


def _name(spec: dict) -> str:
    return f"{spec['backend']}/{spec['formulation']} on {spec['devices']} device(s), {spec['rows']} x {spec['cols']}"


# --- a sweep ---------------------------------------------------------------------------------


def sweep(backend: str, formulation: str, devices: list[int], rows: int, cols: int, modes=MODES,
          steps: int = 32, repeats: int = 5, options: dict | None = None, on_gpu: bool | None = None,
          log: Callable[[str], object] = print) -> dict:
    """Every (mode, device count) point; weak scaling multiplies the rows by the device count."""
    on_gpu = bool(gpus()) if on_gpu is None else on_gpu
    _check_devices(devices)
    unknown = set(modes) - set(MODES)
    if unknown:
        raise ScaleError(f"unknown mode {sorted(unknown)[0]!r}; the modes are {', '.join(MODES)}")
    points = []
    for mode in modes:
        for n in sorted(set(devices)):
            spec = {"backend": backend, "formulation": formulation, "devices": n, "on_gpu": on_gpu,
                    "rows": rows * n if mode == "weak" else rows, "cols": cols, "steps": steps,
                    "repeats": repeats, "options": options or {}}
            log(f"  {mode:6} {_name(spec)} ...")
            point = {"mode": mode, **spec, **measure_point(spec)}
            log(f"         {point['step_s'] * 1e3:.3f} ms a step ({point['device']})")
            points.append(point)
    return {"backend": backend, "formulation": formulation, "rows": rows, "cols": cols,
            "on_gpu": on_gpu, "points": points}


def speedups(result: dict) -> list[dict]:
    """Each point with its ratio to the same mode's one-device (or fewest-device) point: the
    speed-up for strong scaling, the efficiency (time on few / time on many) for weak scaling."""
    rows = []
    for mode in MODES:
        points = sorted((p for p in result["points"] if p["mode"] == mode), key=lambda p: p["devices"])
        if not points:
            continue
        base = points[0]
        for p in points:
            ratio = base["step_s"] / p["step_s"]
            ideal = p["devices"] / base["devices"] if mode == "strong" else 1.0
            rows.append({**p, "ratio": ratio, "of_ideal": ratio / ideal})
    return rows


def table(result: dict) -> str:
    head = f"{result['backend']}/{result['formulation']}, {'GPUs' if result['on_gpu'] else 'CPU processors'}"
    lines = [head, "| mode | devices | grid | ms a step (median, range) | ratio to fewest | of ideal |",
             "|---|---|---|---|---|---|"]
    for p in speedups(result):
        timing = p["timing"]
        per_step = [timing[key] / p["steps_per_call"] * 1e3 for key in ("median_s", "min_s", "max_s")]
        what = "speed-up" if p["mode"] == "strong" else "efficiency"
        lines.append(f"| {p['mode']} | {p['devices']} | {p['rows']} x {p['cols']} | {per_step[0]:.3f} "
                     f"({per_step[1]:.3f}-{per_step[2]:.3f}) | {p['ratio']:.2f} ({what}) | {p['of_ideal']:.0%} |")
    return "\n".join(lines)


def figure(result: dict):
    """Strong scaling's speed-up and weak scaling's efficiency against the device count, with the
    ideal line."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    rows = speedups(result)
    for ax, mode, label, ideal in ((axes[0], "strong", "speed-up", lambda n: n), (axes[1], "weak", "efficiency", lambda n: 1)):
        points = [p for p in rows if p["mode"] == mode]
        if points:
            counts = [p["devices"] for p in points]
            ax.plot(counts, [p["ratio"] for p in points], "o-", label="measured")
            ax.plot(counts, [ideal(n) / ideal(counts[0]) for n in counts], "k--", label="ideal")
            ax.set_xticks(counts)
            grid = f"{points[0]['rows']} x {points[0]['cols']}" + (" per device" if mode == "weak" else "")
            ax.set_title(f"{mode} scaling ({grid})")
            ax.legend()
        ax.set_xlabel("devices")
        ax.set_ylabel(label)
    fig.suptitle(f"{result['backend']}/{result['formulation']} on "
                 f"{'GPUs' if result['on_gpu'] else 'CPU processors'}")
    fig.tight_layout()
    return fig


# --- the command ---------------------------------------------------------------------------------


def add_parser(commands) -> None:
    """The `scale` subcommand of gs-course."""
    scale = commands.add_parser(
        "scale",
        help="one formulation on 1..N GPUs: strong and weak scaling, table, JSON and figure",
        description="Time a backend's formulation on 1, 2, ... N devices, each count in a fresh process: "
        "strong scaling (the same grid) and weak scaling (the rows multiplied by the device count). "
        "Without a GPU the devices are CPU processors (cuPyNumeric) or XLA host devices (JAX).",
    )
    scale.add_argument("--backend", default="cupynumeric", help=f"one of {', '.join(ENVIRONMENTS)} (default cupynumeric)")
    scale.add_argument("--formulation", help="the backend's formulation (default: its fastest)")
    scale.add_argument("--devices", type=int, nargs="+", help="device counts (default: 1 to the GPUs here, 1 2 without)")
    scale.add_argument("-r", "--rows", type=int, default=1080, help="rows on one device (default 1080)")
    scale.add_argument("-c", "--cols", type=int, default=1920, help="columns (default 1920)")
    scale.add_argument("--mode", nargs="+", choices=MODES, default=list(MODES), help="strong, weak or both (default)")
    scale.add_argument("--steps", type=int, default=32, help="steps per timed call (default 32)")
    scale.add_argument("--repeats", type=int, default=5, help="timed calls per point (default 5)")
    scale.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                       help="an option of the formulation, e.g. steps_per_task=8 (cuPyNumeric's task)")
    scale.add_argument("--out", default=".", help="folder for scale-<backend>-<formulation>.{json,md,png} (default .)")


def _check_devices(devices: list[int]) -> None:
    if not devices or min(devices) < 1:
        raise ScaleError(f"device counts must be >= 1, got {devices}")


def _options(pairs: list[str]) -> dict:
    options = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise ScaleError(f"--option wants NAME=VALUE, got {pair!r}")
        try:
            options[name] = json.loads(value)
        except json.JSONDecodeError:
            options[name] = value
    return options


def run_command(args: argparse.Namespace) -> int:
    """`gs-course scale`: measure, print the table, write the JSON, the table and the figure."""
    for name in ("steps", "repeats"):
        if getattr(args, name) < 1:
            raise ScaleError(f"--{name} must be at least 1, got {getattr(args, name)}")
    if args.backend not in ENVIRONMENTS:
        raise ScaleError(f"scale runs {', '.join(ENVIRONMENTS)}, not {args.backend!r}")
    out = Path(args.out)
    problem = paths.output_folder_problem("--out", out)
    if problem:
        raise ScaleError(problem)
    devices = args.devices or list(range(1, max(2, len(gpus())) + 1))
    _check_devices(devices)
    options = _options(args.option)  # input checked before the backend loads: it may not be installed
    backends.require(args.backend)  # not installed: one line that says so
    formulation = args.formulation or backends.load(args.backend).DEFAULT_FORMULATION
    backends.formulation_class(args.backend, formulation)  # an unknown formulation: one line, now
    try:
        result = sweep(args.backend, formulation, devices, args.rows, args.cols, args.mode, args.steps,
                       args.repeats, options)
    except PointFailed as err:
        print(f"gs-course: error: {err}", file=sys.stderr)
        return 1
    text = table(result)
    print("\n" + text)
    stem = out / f"scale-{args.backend}-{formulation}"
    record = records.record(KIND, result)
    records.save(record, stem.with_suffix(".json"))
    stem.with_suffix(".md").write_text(records.header(record["provenance"], "gs-course scale") + "\n" + text + "\n")
    figure(result).savefig(stem.with_suffix(".png"), dpi=120)
    print(f"\nsaved {stem}.json, .md and .png")
    return 0


def _worker_main(argv: list[str]) -> int:
    spec = json.loads(argv[argv.index("--worker") + 1])
    print(MARKER + json.dumps(worker(spec)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_worker_main(sys.argv))
