"""Result records: what ran, where and when, written with every measurement and read back only
when it is the kind asked for.

- `provenance()`: commit, date, host, GPU, driver, library versions, command.
- `write(kind, payload, path)` stores a payload with its kind, schema and provenance: the only
  writer of the JSON files under results/; `load(path, kind)` reads one back, `recorded(kind,
  machine)` finds the one the course keeps for a machine.
- `results_dir()`: `results/<machine>/`, one current file per measurement; a rerun overwrites it
  and git's history keeps the earlier ones.
- `child_answer()`: the record a child process printed (a measurement run in a fresh process).
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from .. import __version__
from ..devices import gpus
from ..paths import RESULTS, ROOT

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
        raise ValueError("only a records.record() can be saved: it says what it is and where it came from")
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


def recorded(kind: str, machine: str, name: str | None = None, schema: int = 1, root: Path | None = None) -> dict:
    """The record of `kind` the course keeps for `machine` (`results/<machine>/<name>.json`, `name`
    the kind where not given): what the notebooks and documents show, without globbing folders."""
    folder = (root or RESULTS) / machine
    return load(folder / f"{name or kind}.json", kind, schema)


def recorded_all(kind: str, machine: str, schema: int = 1, root: Path | None = None) -> list[tuple[str, dict]]:
    """Every record of `kind` the course keeps for `machine`, as (name, record) pairs in the order of
    their names (`name`: the path under results/<machine>/ without `.json`, as `recorded` takes it)."""
    folder = (root or RESULTS) / machine
    found = []
    for path in sorted(folder.rglob("*.json")):
        try:
            found.append((path.relative_to(folder).with_suffix("").as_posix(), load(path, kind, schema)))
        except ResultError:
            continue  # a record of another kind
    return found
