"""Student notebooks from the solved ones: `solutions/*.ipynb` is the one source.

Solution code sits between `### BEGIN SOLUTION` and `### END SOLUTION` (nbgrader's markers) in
code cells. The student version keeps everything else, replaces each marked block with a line
that raises a "your turn" error, and drops every output.

A stuck student catches up from the same source: the notebooks' setup cell calls
`enable_catch_up(name)`, and `%catch_up N` typed in exercise N's cell replaces the cell with that
exercise's solved cell (as IPython's `%load` does), to run and go on. The solved notebooks travel
with the package (`gs_course/_solutions` links to `solutions/`; pyproject's package data), so
this works from a clone and from an installed course alike.

    python -m gs_course.lessons.notebooks          # write notebooks/ from solutions/
    python -m gs_course.lessons.notebooks 1 3      # only tutorials 1 and 3 (the ones whose lock you hold)
    python -m gs_course.lessons.notebooks --check  # exit 1 if notebooks/ is out of date

It never overwrites a student notebook a person edited: one it may replace is the version committed
in git or one it wrote itself (its fingerprint is in `.cache/generated-notebooks.json`, outside
git); any other is first kept as NAME.edited-TIME.ipynb beside it.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import re
import subprocess
import sys
import time
from pathlib import Path

from ..paths import ROOT, course_folder

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
YOUR_TURN_MESSAGE = "Your turn: replace this line with your code, then run the cell again"
YOUR_TURN = f'raise NotImplementedError("{YOUR_TURN_MESSAGE}")'
CATCH_UP_HINT = "  # stuck? %catch_up {number} in this cell loads the answer"
#: The solved notebooks (`measure.course_folder`: a wheel carries them too).
SOLUTIONS = course_folder("solutions")


def _strip_solution(source: str, number: int) -> str:
    """Each BEGIN..END block becomes one your-turn line, at the block's indentation, that names
    the catch-up of exercise `number` (the traceback shows the line, comment included)."""
    pattern = re.compile(rf"^([ \t]*){re.escape(BEGIN)}\n.*?^[ \t]*{re.escape(END)}[ \t]*$", re.S | re.M)
    stripped = pattern.sub(lambda m: f"{m.group(1)}{YOUR_TURN}{CATCH_UP_HINT.format(number=number)}", source)
    if BEGIN in stripped or END in stripped:
        raise ValueError(f"unbalanced solution markers in cell:\n{source}")
    return stripped


def _source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def _exercise_cells(solution: dict) -> list[dict]:
    """The exercises' code cells, in order (exercise N is the N-th): those with a solution."""
    return [c for c in solution["cells"] if c["cell_type"] == "code" and BEGIN in _source(c)]


def exercises(solution: dict) -> list[str]:
    """The solved cells of the exercises, in order (exercise N is the N-th), markers removed."""
    return [re.sub(rf"^[ \t]*(?:{re.escape(BEGIN)}|{re.escape(END)})[ \t]*\n", "", _source(c), flags=re.M)
            for c in _exercise_cells(solution)]


def enable_catch_up(name: str) -> None:
    """Register `%catch_up N` in this IPython kernel, for the tutorial `name` (the notebook's file
    name without `.ipynb`): it replaces the cell it is typed in with exercise N's solved cell."""
    from IPython import get_ipython
    from IPython.core.magic import register_line_magic

    path = SOLUTIONS / f"{name}.ipynb"
    if not path.is_file():
        raise FileNotFoundError(f"no solved notebook {path}")

    @register_line_magic
    def catch_up(line: str) -> None:
        notebook = json.loads(path.read_text())
        solved = exercises(notebook)
        typed = line.split("#")[0].strip()  # %catch_up 2  # stuck? ...: the stub's comment copied along
        number = int(typed) if typed.isdigit() else 0
        if not 1 <= number <= len(solved):
            print(f"%catch_up N, with N the exercise's number, 1 to {len(solved)}")
            return
        shell = get_ipython()
        elsewhere = _defined_in_another_cell(shell)
        if elsewhere:  # a function of an earlier cell, typed in there and never run again: this cell is not its
            raise StopCell(f"your {elsewhere} still holds %catch_up {number}: run exercise {number}'s cell again "
                           "(it holds the answer now), then this one")
        cell = _running_cell(shell)
        here = _exercise_here(shell, cell, notebook, solved)
        if here not in (None, number):
            said = (f"This cell is exercise {here}'s: %catch_up {here} loads its answer here "
                    f"(exercise {number}'s answer goes in exercise {number}'s cell)")
        else:
            shell.set_next_input(solved[number - 1], replace=True)
            said = f"Exercise {number}'s answer is now in this cell: run the cell to go on."
        if not _typed_alone(shell, cell):
            raise StopCell(said)  # the rest of the cell (the stub kept, its checker) would fail on the old code
        print(said)


class StopCell(BaseException):
    """Stops the cell in which `%catch_up N` was typed beside other code (in the stub's function, whose
    checker calls it): its line is shown alone (IPython's `_render_traceback_`), and no checker takes it
    for the function's own error (they catch Exception), so the old code's hint never follows it."""

    def _render_traceback_(self) -> list[str]:
        return [str(self)]


def _running_cell(shell) -> str:
    """The text of the cell being run (IPython stores it before it runs), "" where it is not stored."""
    history = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None) or [""]
    return history[-1]


def _exercise_here(shell, cell: str, notebook: dict, solved: list[str]) -> int | None:
    """The number of the exercise whose cell is running, else None (a cell of the student's own): by
    the cell's id, which JupyterLab sends with its code and the course's notebooks share with the solved
    ones (a cell replaced whole by %catch_up keeps it); else by what the cell still holds of the stub, its
    your-turn comment or its checker's call."""
    with contextlib.suppress(AttributeError, KeyError, TypeError):
        cell_id = shell.kernel.get_parent("shell")["metadata"]["cellId"]
        found = next((n for n, c in enumerate(_exercise_cells(notebook), 1) if c.get("id") == cell_id), None)
        if found:
            return found
    named = re.findall(r"%catch_up (\d+) in this cell", cell)
    if named:
        return int(named[0])
    calls = [n for n, answer in enumerate(solved, 1) if answer.strip().splitlines()[-1].strip() in cell]
    return calls[0] if len(calls) == 1 else None


def _user_frames(shell) -> list:
    """The frames of the notebook's own code running the magic, innermost first: the function it was typed
    in (where it was), out to the running cell's top level."""
    frames, frame = [], sys._getframe(2)
    while frame is not None:
        if frame.f_globals is shell.user_ns:
            frames.append(frame)
        frame = frame.f_back
    return frames


def _defined_in_another_cell(shell) -> str | None:
    """The name of the function the magic was typed in, where that function was defined by another cell
    than the one running (IPython compiles each cell under a file name of its own), else None: its
    answer belongs in that cell, and loading it here would replace the student's own code."""
    frames = _user_frames(shell)
    if len(frames) > 1 and frames[0].f_code.co_filename != frames[-1].f_code.co_filename:
        return frames[0].f_code.co_name
    return None


def _typed_alone(shell, cell: str) -> bool:
    """Whether `%catch_up` is the cell's only code (comments aside), run at the cell's top level, not from a
    function it was typed in."""
    frames = _user_frames(shell)
    if frames and frames[0].f_code.co_name != "<module>":
        return False
    code = [text for text in (line.split("#")[0].strip() for line in cell.splitlines()) if text]
    return len(code) <= 1


def named(paths: list[Path], name: str) -> list[Path]:
    """The notebooks among `paths` that `name` names: by file name, with or without .ipynb, by its
    first words ("1_Python") or by its number ("1")."""
    stem = Path(name).name.removesuffix(".ipynb")
    return [path for path in paths if path.stem == stem or path.stem.startswith(stem + "_")]


#: What a student notebook keeps of the solved one's metadata: the rest (the widgets' saved state,
#: the record of a run on the GPU host) is output too.
STUDENT_METADATA = ("kernelspec", "language_info")


def student_version(solution: dict) -> dict:
    """The notebook without solutions, outputs, execution counts or execution times."""
    cells = []
    number = 0
    for cell in solution["cells"]:
        cell = dict(cell)
        source = _source(cell)
        if cell["cell_type"] == "code":
            number += BEGIN in source
            source = _strip_solution(source, number)
            cell["outputs"] = []
            cell["execution_count"] = None
        cell["source"] = source.splitlines(keepends=True)
        cell["metadata"] = {k: v for k, v in cell.get("metadata", {}).items() if k != "execution"}
        cells.append(cell)  # its id kept: %catch_up knows an exercise's cell by it (JupyterLab sends it)
    metadata = {k: v for k, v in solution["metadata"].items() if k in STUDENT_METADATA}
    return {**solution, "metadata": metadata, "cells": cells, "nbformat": 4, "nbformat_minor": 5}


def render(notebook: dict) -> str:
    return json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"


def pairs(root: Path = ROOT) -> list[tuple[Path, Path]]:
    return [(path, root / "notebooks" / path.name) for path in sorted((root / "solutions").glob("*.ipynb"))]


#: The fingerprints of the student notebooks this module wrote, by path (outside git).
GENERATED = ROOT / ".cache" / "generated-notebooks.json"


def _fingerprint(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _generated() -> dict[str, str]:
    try:
        return json.loads(GENERATED.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return {}


def _as_committed(path: Path) -> bool:
    """True when git has `path` committed exactly as it is now (overwriting it loses nothing)."""
    try:
        tracked = subprocess.run(["git", "ls-files", "--error-unmatch", path.name], cwd=path.parent, capture_output=True)
        changed = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", path.name], cwd=path.parent, capture_output=True)
    except OSError:
        return False
    return tracked.returncode == 0 and changed.returncode == 0


def keep_if_edited(student: Path) -> Path | None:
    """Before `student` is rewritten: where it is neither what this module last wrote nor what git
    has, a person edited it; it is renamed NAME.edited-TIME.ipynb, and the new name returned."""
    if not student.exists() or _generated().get(str(student.resolve())) == _fingerprint(student.read_text()):
        return None
    if _as_committed(student):
        return None
    kept = student.with_name(f"{student.stem}.edited-{time.strftime('%Y%m%d-%H%M%S')}{student.suffix}")
    student.rename(kept)
    return kept


def write_generated(student: Path, text: str) -> None:
    """Write a student notebook and record its fingerprint (so that a later run may replace it)."""
    student.write_text(text)
    record = {**_generated(), str(student.resolve()): _fingerprint(text)}
    GENERATED.parent.mkdir(parents=True, exist_ok=True)
    GENERATED.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gs_course.lessons.notebooks", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check that notebooks/ is up to date")
    parser.add_argument("tutorials", nargs="*", help="tutorial numbers or names (default: all)")
    args = parser.parse_args(argv)
    every = pairs()
    solved = [s for s, _ in every]
    asked = [named(solved, n) for n in args.tutorials]
    unknown = [n for n, found in zip(args.tutorials, asked) if not found]
    if unknown:
        parser.error(f"no tutorial {' '.join(unknown)} in solutions/: {', '.join(s.stem for s in solved)}")
    chosen = [(s, t) for s, t in every if not args.tutorials or any(s in found for found in asked)]
    stale = []
    for solution, student in chosen:
        wanted = render(student_version(json.loads(solution.read_text())))
        if student.exists() and student.read_text() == wanted:
            continue
        stale.append(student)
        if not args.check:
            kept = keep_if_edited(student)
            if kept:
                print(f"kept your edited {student.relative_to(ROOT)} as {kept.relative_to(ROOT)}")
            write_generated(student, wanted)
            print(f"wrote {student.relative_to(ROOT)}")
    if args.check and stale:
        names = ", ".join(str(p.relative_to(ROOT)) for p in stale)
        print(f"out of date with solutions/: {names}; run python -m gs_course.lessons.notebooks", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
