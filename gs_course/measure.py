"""One measurement layer: the course's workloads, a timer that returns samples, and result files
that say where they came from.

- `Workload` and the grids (`FULL`, `HALF`, `QUARTER`, `SMALL`): the course's run is defined here
  once, for the command line, the benchmark, the transfer demo and the notebooks.
- `timed(fn, repeats, warmup, synchronize)`: wall-clock samples of a call that may return before
  the device is done (`synchronize` is where the clock stops: `Simulation.synchronize`,
  `Simulation.fetch_v`, a CUDA stream's); the warm-up calls (compilation, first allocations) are
  timed apart. `Samples` keeps every repeat, so a table can show the median and the range.
- `provenance()`: what ran, where and when (commit, date, host, GPU, driver, library versions,
  command), written into every result file by `write(kind, payload, path)`; `load(path, kind)`
  reads a file back only when its kind and schema are the ones asked for.
- `results_dir()`: `results/<machine>/`, one current file per measurement; a rerun overwrites it
  and git's history keeps the earlier ones.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from importlib import metadata
from pathlib import Path

from . import __version__

# --- the workloads ------------------------------------------------------------------------------

#: Bytes of one float32 cell.
CELL_BYTES = 4
#: A step reads U and V and writes them: four float32 arrays of the grid cross the GPU's memory.
ARRAYS_MOVED_PER_STEP = 4


@dataclasses.dataclass(frozen=True)
class Workload:
    """A Gray-Scott run: a rows x cols float32 grid, `images` images `steps_per_image` steps apart."""

    rows: int
    cols: int
    images: int
    steps_per_image: int
    name: str = "custom"

    @property
    def steps(self) -> int:
        return self.images * self.steps_per_image

    @property
    def frame_bytes(self) -> int:
        """One float32 field of the grid (one V image)."""
        return self.rows * self.cols * CELL_BYTES

    @property
    def bytes_moved_per_step(self) -> int:
        """The least memory traffic of one step: U and V read, U and V written."""
        return ARRAYS_MOVED_PER_STEP * self.frame_bytes

    @property
    def grid(self) -> str:
        return f"{self.rows} x {self.cols}"

    def describe(self) -> str:
        return f"{self.grid} float32, {self.images} images x {self.steps_per_image} steps = {self.steps:,} steps"

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, fields: dict) -> Workload:
        return cls(**fields)

    def same_run(self, other: Workload | dict) -> bool:
        """The same grid and steps, whatever the names."""
        other = other if isinstance(other, Workload) else Workload.from_dict(other)
        return (self.rows, self.cols, self.images, self.steps_per_image) == (
            other.rows, other.cols, other.images, other.steps_per_image)


#: The school's run: 1080 x 1920, 1000 images 32 steps apart (the original course's benchmark).
FULL = Workload(1080, 1920, 1000, 32, "full")
#: Half the side (a quarter of the cells), then a quarter of it: GPUs with too little memory free.
HALF = Workload(540, 960, 1000, 32, "half")
QUARTER = Workload(270, 480, 1000, 32, "quarter")
#: An eighth of the side, 50 images: machines without a GPU (every notebook cell finishes in
#: seconds on a laptop) and `gs-course bench --quick`.
SMALL = Workload(135, 240, 50, 32, "small")
#: Largest first: a GPU runs the first one that fits in its free memory (`course.size()`).
GRIDS = (FULL, HALF, QUARTER, SMALL)


def grid(name: str) -> Workload:
    """The grid called `name` (full, half, quarter or small); one line naming them otherwise."""
    for workload in GRIDS:
        if workload.name == name.lower():
            return workload
    raise ValueError(f"no grid {name!r}: choose one of {', '.join(w.name for w in GRIDS)}")


# --- timing -------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Samples:
    """Repeated timings of one thing, in seconds, and the warm-up's apart (compilation, first
    allocations: `compile_s`, None when there was no warm-up)."""

    seconds: tuple[float, ...]
    compile_s: float | None = None

    def __post_init__(self):
        if not self.seconds:
            raise ValueError("no samples: time at least one repeat")

    @classmethod
    def of(cls, seconds: Iterable[float], compile_s: float | None = None) -> Samples:
        """Samples timed by other means (CUDA events, say)."""
        return cls(tuple(float(s) for s in seconds), compile_s)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def min(self) -> float:
        return min(self.seconds)

    @property
    def max(self) -> float:
        return max(self.seconds)

    @property
    def spread(self) -> float:
        """(max - min) / median: 0.05 means the repeats lay within 5 % of the median's size."""
        return (self.max - self.min) / self.median if self.median > 0 else 0.0

    def scaled(self, factor: float) -> Samples:
        """Every sample times `factor` (a part of a workload timed, the whole extrapolated)."""
        return Samples(tuple(s * factor for s in self.seconds), self.compile_s)

    def as_dict(self) -> dict:
        """What a result file stores: the median, the range and every repeat."""
        return {"median_s": self.median, "min_s": self.min, "max_s": self.max, "repeats": len(self.seconds),
                "samples_s": list(self.seconds), "compile_s": self.compile_s}

    @classmethod
    def from_dict(cls, stored: dict) -> Samples:
        return cls(tuple(stored["samples_s"]), stored.get("compile_s"))

    def __str__(self) -> str:
        return format_range(self.median, self.min, self.max)


def format_seconds(seconds: float) -> str:
    """Seconds in the unit that suits them: 8.5 us, 730 us, 271 ms, 1.12 s, 377 s."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale or unit == "us":
            value = seconds / scale
            return f"{value:.3g} {unit}" if value < 100 else f"{value:.0f} {unit}"
    raise AssertionError("unreachable")


def format_range(median: float, low: float | None, high: float | None) -> str:
    """'271 ms (270-275)': the median, then the range of the repeats in the same unit; the
    median alone where there is no range (one repeat, or a file that kept none)."""
    text = format_seconds(median)
    if low is None or high is None or low == high:
        return text
    unit = text.split()[1]
    scale = {"s": 1.0, "ms": 1e-3, "us": 1e-6}[unit]
    return f"{text} ({low / scale:.3g}-{high / scale:.3g})"


def timed(fn: Callable[[], object], repeats: int = 5, warmup: int = 1,
          synchronize: Callable[[], object] | None = None, after: Callable[[], object] | None = None) -> Samples:
    """Call `fn` `warmup` times, then `repeats` times on the clock, and return the samples.

    Each call is timed from before `fn()` to after `synchronize()` (when given): libraries that
    queue work on the device return from `fn` early, and the clock must stop where the work is
    done. `after()` runs after each call off the clock (to time how long a call blocks, and
    only then wait for its work). The warm-up calls are timed together as `compile_s`.
    """
    if repeats < 1 or warmup < 0:
        raise ValueError(f"repeats must be >= 1 and warmup >= 0, got {repeats} and {warmup}")
    wait = synchronize or (lambda: None)
    settle = after or (lambda: None)
    compile_s = None
    if warmup:
        start = time.perf_counter()
        for _ in range(warmup):
            fn()
            wait()
        compile_s = time.perf_counter() - start
        settle()
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        wait()
        seconds.append(time.perf_counter() - start)
        settle()
    return Samples(tuple(seconds), compile_s)


class Stopwatch:
    """Elapsed wall-clock seconds since it was made, read where the device has finished (a run
    timed once, with its progress shown, as `gs-course run` does)."""

    def __init__(self):
        self.start = time.perf_counter()

    def elapsed(self, synchronize: Callable[[], object] | None = None) -> float:
        if synchronize is not None:
            synchronize()
        return time.perf_counter() - self.start


# --- answers of child processes -----------------------------------------------------------------

def child_answer(done: subprocess.CompletedProcess, marker: str):
    """The JSON a child process printed behind `marker`, from its last line that starts with it
    (libraries print their own lines on standard output as they start: Legate's cuInit lines), or
    None where it printed none."""
    answers = [line for line in done.stdout.splitlines() if line.startswith(marker)]
    return json.loads(answers[-1][len(marker):]) if answers else None


def child_failure(done: subprocess.CompletedProcess) -> str:
    """Why a child process gave no answer, in one line: the last line of its errors."""
    return (done.stderr.strip().splitlines() or [f"exit code {done.returncode}, no output"])[-1]


# --- provenance ---------------------------------------------------------------------------------

#: The distributions whose versions a result records (read from their metadata: nothing imported,
#: no CUDA context made).
LIBRARIES = ("numpy", "jax", "jaxlib", "cupy-cuda13x", "cupy-cuda12x", "nvidia-cupynumeric", "legate",
             "h5py", "torch")
ROOT = Path(__file__).resolve().parent.parent


def course_folder(name: str) -> Path:
    """The course's folder `name` (results, solutions, notebooks): the link inside the package,
    `gs_course/_name`, which an installed course (the container image) carries as package data, or
    the clone's folder where the link is not there."""
    linked = Path(__file__).resolve().parent / f"_{name}"
    return linked if linked.is_dir() else ROOT / name


#: The recorded results the notebooks show.
RESULTS = course_folder("results")


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def commit() -> str | None:
    """The commit measured: $COMMIT where set (a copy of the tree without git, as on the GPU host),
    else git's HEAD, with '+changes' when the code differs from it; None outside a clone."""
    if os.environ.get("COMMIT"):
        return os.environ["COMMIT"]
    head = _git("rev-parse", "--short=7", "HEAD")
    if head is None:
        return None
    changed = _git("status", "--porcelain", "--untracked-files=no", "--", "gs_course", "tools")
    return head + ("+changes" if changed else "")


def library_versions() -> dict[str, str]:
    found = {}
    for name in LIBRARIES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def _command_line() -> str:
    program = "gs-course" if Path(sys.argv[0]).name in ("gs-course", "cli.py") else Path(sys.argv[0]).name
    return " ".join([program, *sys.argv[1:]])


def provenance(command: str | None = None) -> dict:
    """What a result came from: commit, date, host, GPU, driver, library versions, command."""
    from .devices import gpus

    found = gpus()
    gpu = found[0] if found else None
    return {
        "commit": commit(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "host": platform.node(),
        "cpu": platform.processor() or platform.machine(),
        "gpu": gpu.name if gpu else None,
        "gpu_count": len(found),
        "gpu_memory_total": gpu.memory_total if gpu else None,
        "driver": gpu.driver if gpu else None,
        "cuda_driver": gpu.cuda if gpu else None,
        "python": platform.python_version(),
        "gs_course": __version__,
        "libraries": library_versions(),
        "command": command if command is not None else _command_line(),
    }


def describe(prov: dict) -> str:
    """One line: 'NVIDIA H200 (driver 580.159.04), commit 1c2b331, 2026-11-30 07:47 UTC'."""
    where = f"{prov['gpu']} (driver {prov['driver']})" if prov.get("gpu") else f"no GPU ({prov.get('cpu')})"
    return f"{where}, commit {prov.get('commit') or 'unknown'}, {prov['date']}"


def header(prov: dict, title: str) -> str:
    """The provenance as the head of a text or Markdown result file."""
    libraries = ", ".join(f"{k} {v}" for k, v in prov["libraries"].items())
    gpu = prov["gpu"] or "none"
    if prov.get("gpu"):
        gpu += (f" x {prov['gpu_count']}" if prov.get("gpu_count", 1) > 1 else "")
        gpu += f", driver {prov['driver']}, CUDA {prov['cuda_driver']}"
    return "\n".join([
        f"# {title}", "",
        f"- command: `{prov['command']}`",
        f"- commit: {prov.get('commit') or 'unknown'}; date: {prov['date']}; host: {prov['host']}",
        f"- GPU: {gpu}",
        f"- Python {prov['python']}, gs-course {prov['gs_course']}; {libraries}", "",
    ])


def machine_name(gpu_name: str | None) -> str:
    """The folder of results/ for a machine: 'NVIDIA H200' -> 'h200'; 'cpu' without a GPU."""
    if not gpu_name:
        return "cpu"
    words = gpu_name.strip()
    while True:  # vendor and product-line words name no machine
        shorter = re.sub(r"^(NVIDIA|Tesla|GeForce|Quadro)\s+", "", words, flags=re.I)
        if shorter == words:
            break
        words = shorter
    return re.sub(r"[^a-z0-9]+", "-", words.lower()).strip("-") or "gpu"


def results_dir(gpu_name: str | None = None, root: Path = ROOT) -> Path:
    """results/<machine>/ in the course's clone: this machine's when no GPU name is given."""
    if gpu_name is None:
        from .devices import gpus

        gpu_name = next((g.name for g in gpus()), None)
    return root / "results" / machine_name(gpu_name)


# --- result files -------------------------------------------------------------------------------


class ResultError(ValueError):
    """A file that is not the result asked for: one line says what it is instead."""


def record(kind: str, payload: dict, *, schema: int = 1, prov: dict | None = None,
           command: str | None = None) -> dict:
    """`payload` with its kind, schema and provenance ahead of it: what a result file holds."""
    reserved = {"kind", "schema", "provenance"} & payload.keys()
    if reserved:
        raise ValueError(f"the payload may not set {', '.join(sorted(reserved))}: record() does")
    return {"kind": kind, "schema": schema, "provenance": prov or provenance(command), **payload}


def save(result: dict, path: str | Path) -> Path:
    """Write a `record()` as JSON (its folder made if need be); returns the path."""
    if not {"kind", "schema", "provenance"} <= result.keys():
        raise ValueError("only a measure.record() can be saved: it says what it is and where it came from")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=1) + "\n")
    return path


def write(kind: str, payload: dict, path: str | Path, *, schema: int = 1, prov: dict | None = None,
          command: str | None = None) -> Path:
    """`save(record(...), path)`: the payload written with its kind, schema and provenance."""
    return save(record(kind, payload, schema=schema, prov=prov, command=command), path)


def load(path: str | Path, kind: str, schema: int = 1) -> dict:
    """A result file of `kind` and `schema`; ResultError (one line) for anything else."""
    path = Path(path)
    try:
        record = json.loads(path.read_text())
    except OSError as err:
        raise ResultError(f"cannot read {path}: {err.strerror or err}") from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ResultError(f"{path} is not a gs-course result file (not JSON)") from None
    if not isinstance(record, dict) or "kind" not in record:
        raise ResultError(f"{path} is not a gs-course {kind} result (it names no kind)")
    if record["kind"] != kind:
        raise ResultError(f"{path} is a gs-course {record['kind']} result, not a {kind} result")
    if record.get("schema") != schema:
        raise ResultError(f"{path} is a {kind} result of schema {record.get('schema')}; this gs-course reads "
                          f"schema {schema}: measure it again")
    return record
