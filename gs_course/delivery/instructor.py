"""The instructor check (`gs-course instructor-check`): before a session, on the GPU node the
students will use, doctor, then each solved notebook through nbval (outputs compared) at the
chosen size while nvidia-smi samples the GPU's memory, then a summary table.

The run is a record (kind "instructor-check": per notebook its name, pass or fail, seconds and
peak GPU memory; the size and the free-memory limit of the run), written by `--out FOLDER` as
`instructor-check.json` (`small-gpu-<B>gb.json` with `--free-gb B`): the current
`results/<machine>/` file when an instructor commits it. The table and the Markdown summary
(`--summary FILE`) are rendered from that record.

`--free-gb B` rehearses a small GPU on a big one: a helper process (CuPy) holds all but B GB of
the GPU's memory, so that every library, and the course's choice of grid (`--size auto`), sees
B GB free as on a small card.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time
from pathlib import Path

from .. import sizing
from ..lessons import notebooks
from ..devices import GpuMemoryPeak, gpus
from ..measurement import records
from .. import paths
from .doctor import doctor
from .processes import sigterm_as_ctrl_c, stop_tree, wait_counting_cpu

KIND, SCHEMA = "instructor-check", 1


class NotebookError(ValueError):
    """A notebook named that is not one of solutions/ (one line, with the list)."""


@dataclasses.dataclass(frozen=True)
class Row:
    notebook: str
    passed: bool
    seconds: float
    peak_mib: int | None  # above what was in use when the notebook started; None: not measured
    cpu_s: float | None = None  # CPU seconds of nbval and its kernel; None: stopped before its end


def solved_notebooks(root: Path = paths.ROOT) -> list[Path]:
    found = sorted((root / "solutions").glob("*.ipynb"))
    if not found:
        raise NotebookError(f"no notebooks in {root / 'solutions'}: run this from a clone of the course repository")
    return found


def select_notebooks(solved: list[Path], wanted: list[str]) -> list[Path]:
    """The notebooks named by file name, with or without .ipynb, or by their number ("1"), in the
    order given; a path to a notebook file elsewhere is taken as it is."""
    chosen = []
    for name in wanted:
        found = [Path(name)] if name.endswith(".ipynb") and Path(name).is_file() else notebooks.named(solved, name)
        if len(found) != 1:
            names = ", ".join(path.name for path in solved)
            raise NotebookError(f"no single notebook {name!r} in solutions/; the notebooks are {names}")
        chosen += [path for path in found if path not in chosen]
    return chosen


def nbval_command(notebook: Path, root: Path = paths.ROOT, *options: str) -> list[str]:
    """The child pytest that runs `notebook` through nbval with the course's settings (those of
    the clone's pyproject.toml, wherever the notebook lies)."""
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", str(root / "pyproject.toml"),
            "--rootdir", str(root), *options, str(notebook)]


def sized_environment(size: str, **settings: str) -> dict[str, str]:
    """This process's environment with `settings`, for notebooks at `size` (auto: the grid the GPU
    memory free allows, as a student gets it)."""
    env = {**os.environ, **settings, "GS_COURSE_SIZE": size}
    if size == "auto":
        del env["GS_COURSE_SIZE"]
    return env


def run_notebook(notebook: Path, size: str, root: Path = paths.ROOT, timeout_s: float | None = None) -> Row:
    """One notebook through nbval in a child pytest, the GPU's memory sampled meanwhile; past
    `timeout_s` (or at Ctrl-C, re-raised) the child and its kernels are stopped, and it fails."""
    print(f"\nrunning {notebook.name} ({size} size) ...", flush=True)
    start = time.perf_counter()
    with GpuMemoryPeak() as memory:
        # A session of its own: the terminal's Ctrl-C reaches this process, which stops the whole tree.
        child = subprocess.Popen(nbval_command(notebook, root), cwd=root, env=sized_environment(size),
                                 start_new_session=True)
        cpu_s = None
        try:
            cpu_s = wait_counting_cpu(child, timeout_s)
        except subprocess.TimeoutExpired:
            stop_tree(child.pid)
            child.wait()
            print(f"\n{notebook.name}: stopped after {timeout_s:.0f} s: the notebook's time limit (--timeout)", flush=True)
        except KeyboardInterrupt:
            stop_tree(child.pid)
            child.wait()
            raise
    return Row(notebook.name, child.returncode == 0, time.perf_counter() - start, memory.mib, cpu_s)


def cpu_time(seconds: float | None) -> str:
    """A notebook's CPU seconds as its tables print them ("-": not measured, or stopped)."""
    return "-" if seconds is None else f"{seconds:,.0f} s"


def _peak(row: dict, on_gpu: bool) -> str:
    return f"{row['peak_mib']:,} MiB" if row["peak_mib"] is not None else "not measured" if on_gpu else "no GPU"


def table(record: dict) -> str:
    """The summary table of a record: one line per notebook."""
    prov = record["provenance"]
    gpu = prov["gpu"] or "none (CPU)"
    lines = ["| notebook | result | run time | CPU time | GPU | peak GPU memory |", "|---|---|---|---|---|---|"]
    for row in record["notebooks"]:
        lines.append(f"| {row['notebook']} | {'pass' if row['passed'] else 'FAIL'} | {row['seconds']:.0f} s | "
                     f"{cpu_time(row.get('cpu_s'))} | {gpu} | {_peak(row, bool(prov['gpu']))} |")
    return "\n".join(lines)


def markdown(record: dict) -> str:
    """The summary file: provenance, the run's limits, then the table."""
    title = f"Instructor check, {record['size']} size"
    if record["free_gb"] is not None:
        title += f", {record['free_gb']:g} GB of GPU memory left free"
    lines = [records.header(record["provenance"], title)]
    if record["free_gb"] is not None:
        lines += [f"A helper process held {record['held_bytes']:,} bytes of the GPU's memory; the grid chosen: "
                  f"{record['grid']}.", ""]
    return "\n".join(lines + [table(record), ""])


def record_name(free_gb: float | None) -> str:
    """The record's file name under results/<machine>/, without .json."""
    return "instructor-check" if free_gb is None else f"small-gpu-{free_gb:g}gb"


class FreeMemoryError(RuntimeError):
    """The helper could not hold the GPU's memory (one line: why)."""


#: The helper of `--free-gb`: holds all but argv[1] bytes of the GPU's free memory (allocated,
#: never written: the driver maps it all), says how much, then waits for its standard input to close.
HOLDER = """
import sys
import cupy
free, _ = cupy.cuda.runtime.memGetInfo()
held = cupy.empty(max(0, free - int(sys.argv[1])), dtype=cupy.uint8)
print("held", held.nbytes, flush=True)
sys.stdin.read()
"""


class FreeMemoryHolder:
    """`with FreeMemoryHolder(keep_bytes) as holder:` a helper process holds all of the GPU's free
    memory but `keep_bytes` while the block runs; `holder.held` is the bytes it holds. The helper
    ends with the block (its standard input closed), or with this process."""

    def __init__(self, keep_bytes: int, program: str = HOLDER, timeout_s: float = 120.0):
        self.keep_bytes, self.program, self.timeout_s = keep_bytes, program, timeout_s
        self.held: int | None = None
        self._proc: subprocess.Popen | None = None

    def __enter__(self) -> FreeMemoryHolder:
        self._proc = subprocess.Popen([sys.executable, "-c", self.program, str(self.keep_bytes)], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self._proc.stdout.readline().split()
        if len(line) != 2 or line[0] != "held":
            self._proc.stdin.close()
            self._proc.wait(self.timeout_s)
            why = (self._proc.stderr.read().strip().splitlines() or [f"exit code {self._proc.returncode}"])[-1]
            raise FreeMemoryError(f"--free-gb: the helper holding the GPU's memory failed: {why}")
        self.held = int(line[1])
        gpus.cache_clear()  # the memory free now, with the helper's taken
        return self

    def __exit__(self, *exc_info) -> None:
        self._proc.stdin.close()
        try:
            self._proc.wait(30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        gpus.cache_clear()


def kernel_settings() -> dict:
    """What the notebooks' kernels start Legate with, here (set, or the course's default for the
    cores this process may use), and those cores: two runs of the same command differ by these."""
    return {"cores": sizing.visible_cores(), "LEGATE_CONFIG": os.environ.get("LEGATE_CONFIG") or sizing.default_legate_config(),
            "REALM_DEFAULT_ARGS": sizing.kernel_realm_args()}


def payload(rows: list[Row], size: str, free_gb: float | None, held: int | None) -> dict:
    """The record's payload: the run's size and free-memory limit, the kernels' settings, then one
    entry per notebook."""
    return {"size": size, "free_gb": free_gb, "held_bytes": held, "grid": sizing.choose(sizing.free_memory(), "" if size == "auto" else size).line,
            "settings": kernel_settings(), "notebooks": [dataclasses.asdict(row) for row in rows]}


def run_all(solved: list[Path], size: str, free_gb: float | None, timeout_s: float | None = None) -> dict:
    """Doctor, then each notebook; the payload. With `free_gb`, all else of the GPU held meanwhile."""
    if free_gb is None:
        doctor()
        return payload([run_notebook(notebook, size, timeout_s=timeout_s) for notebook in solved], size, None, None)
    with FreeMemoryHolder(int(free_gb * 1e9)) as holder:
        print(f"a helper holds {holder.held:,} bytes of the GPU's memory: {free_gb:g} GB are left free")
        doctor()
        return payload([run_notebook(notebook, size, timeout_s=timeout_s) for notebook in solved], size, free_gb,
                       holder.held)


def check(wanted: list[str], size: str, summary_path: str | Path | None = None, out: Path | None = None,
          free_gb: float | None = None, timeout_s: float | None = None) -> bool:
    """Doctor, then the notebooks (all of solutions/, or those `wanted`), each stopped past
    `timeout_s`; True when all pass. The record goes to `out` (a folder), its Markdown summary to
    `summary_path`. SIGTERM stops it as Ctrl-C does, the running notebook's kernels with it."""
    solved = solved_notebooks()
    if wanted:
        solved = select_notebooks(solved, wanted)
    with sigterm_as_ctrl_c():
        result = records.record(KIND, run_all(solved, size, free_gb, timeout_s), schema=SCHEMA)
    print("\n" + table(result))
    if out is not None:
        path = records.save(result, out / f"{record_name(free_gb)}.json")
        print(f"saved {path}")
    if summary_path:
        Path(summary_path).write_text(markdown(result))
    return all(row["passed"] for row in result["notebooks"])


def load(path: str | Path) -> dict:
    return records.load(path, KIND, SCHEMA)


def peak_memory(command: list[str]) -> int:
    """`gs-course peak-memory COMMAND...`: run COMMAND while `GpuMemoryPeak` samples the GPU's used
    memory, then say its peak, to show what a smaller card would need; COMMAND's exit code."""
    with GpuMemoryPeak() as peak:
        code = subprocess.run(command).returncode
    if peak.mib is None:
        print("GPU memory used: not measured (no GPU, or nvidia-smi gave no samples)")
    else:
        print(f"GPU memory used: peak {peak.start_mib + peak.mib:,} MiB, {peak.mib:,} MiB above the "
              f"{peak.start_mib:,} MiB in use at the start (nvidia-smi every 200 ms)")
    return code
