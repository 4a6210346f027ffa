"""The instructor check (`gs-course instructor-check`): before a session, on the GPU node the
students will use, doctor, then each solved notebook through nbval (outputs compared) at the
chosen size while nvidia-smi samples the GPU's memory, then a summary table.

The summary, with its provenance at the head (`records.header`), is the current
`results/<machine>/instructor-check.md` when an instructor commits it.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time
from pathlib import Path

from ..lessons import notebooks
from ..devices import GpuMemoryPeak, gpus
from ..measurement import records
from .. import paths
from .doctor import doctor


class NotebookError(ValueError):
    """A notebook named that is not one of solutions/ (one line, with the list)."""


@dataclasses.dataclass(frozen=True)
class Row:
    notebook: str
    passed: bool
    seconds: float
    peak_mib: int | None  # above what was in use when the notebook started; None: not measured


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


def run_notebook(notebook: Path, size: str, root: Path = paths.ROOT) -> Row:
    """One notebook through nbval in a child pytest, the GPU's memory sampled meanwhile."""
    print(f"\nrunning {notebook.name} ({size} size) ...", flush=True)
    start = time.perf_counter()
    with GpuMemoryPeak() as memory:
        done = subprocess.run(nbval_command(notebook, root), cwd=root, env=sized_environment(size))
    return Row(notebook.name, done.returncode == 0, time.perf_counter() - start, memory.mib)


def table(rows: list[Row]) -> str:
    gpu = ", ".join(g.name for g in gpus()) or "none (CPU)"
    lines = ["| notebook | result | run time | GPU | peak GPU memory |", "|---|---|---|---|---|"]
    for row in rows:
        peak = f"{row.peak_mib:,} MiB" if row.peak_mib is not None else "not measured" if gpus() else "no GPU"
        lines.append(f"| {row.notebook} | {'pass' if row.passed else 'FAIL'} | {row.seconds:.0f} s | {gpu} | {peak} |")
    return "\n".join(lines)


def summary(rows: list[Row], size: str, prov: dict) -> str:
    """The summary file: provenance, then the table."""
    return records.header(prov, f"Instructor check, {size} size") + "\n" + table(rows) + "\n"


def check(wanted: list[str], size: str, summary_path: str | Path | None = None) -> bool:
    """Doctor, then the notebooks (all of solutions/, or those `wanted`); True when all pass."""
    solved = solved_notebooks()
    if wanted:
        solved = select_notebooks(solved, wanted)
    doctor()
    rows = [run_notebook(notebook, size) for notebook in solved]
    print("\n" + table(rows))
    if summary_path:
        Path(summary_path).write_text(summary(rows, size, records.provenance()))
    return all(row.passed for row in rows)
