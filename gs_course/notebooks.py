"""Student notebooks from the solved ones: `solutions/*.ipynb` is the one source.

Solution code sits between `### BEGIN SOLUTION` and `### END SOLUTION` (nbgrader's markers) in
code cells. The student version keeps everything else, replaces each marked block with a line
that raises a "your turn" error, and drops every output.

    python -m gs_course.notebooks          # write notebooks/ from solutions/
    python -m gs_course.notebooks --check  # exit 1 if notebooks/ is out of date
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
YOUR_TURN_MESSAGE = "Your turn: replace this line with your code, then run the cell again"
YOUR_TURN = f'raise NotImplementedError("{YOUR_TURN_MESSAGE}")'
ROOT = Path(__file__).resolve().parent.parent


def _strip_solution(source: str) -> str:
    """Each BEGIN..END block becomes one your-turn line, at the block's indentation."""
    pattern = re.compile(rf"^([ \t]*){re.escape(BEGIN)}\n.*?^[ \t]*{re.escape(END)}[ \t]*$", re.S | re.M)
    stripped = pattern.sub(lambda m: f"{m.group(1)}{YOUR_TURN}", source)
    if BEGIN in stripped or END in stripped:
        raise ValueError(f"unbalanced solution markers in cell:\n{source}")
    return stripped


def student_version(solution: dict) -> dict:
    """The notebook without solutions, outputs, execution counts or execution times."""
    cells = []
    for cell in solution["cells"]:
        cell = dict(cell)
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if cell["cell_type"] == "code":
            source = _strip_solution(source)
            cell["outputs"] = []
            cell["execution_count"] = None
        cell["source"] = source.splitlines(keepends=True)
        cell["metadata"] = {k: v for k, v in cell.get("metadata", {}).items() if k != "execution"}
        cell.pop("id", None)
        cells.append(cell)
    return {**solution, "cells": cells, "nbformat": 4, "nbformat_minor": 4}


def render(notebook: dict) -> str:
    return json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"


def pairs(root: Path = ROOT) -> list[tuple[Path, Path]]:
    return [(path, root / "notebooks" / path.name) for path in sorted((root / "solutions").glob("*.ipynb"))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gs_course.notebooks", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check that notebooks/ is up to date")
    args = parser.parse_args(argv)
    stale = []
    for solution, student in pairs():
        wanted = render(student_version(json.loads(solution.read_text())))
        if student.exists() and student.read_text() == wanted:
            continue
        stale.append(student)
        if not args.check:
            student.write_text(wanted)
            print(f"wrote {student.relative_to(ROOT)}")
    if args.check and stale:
        names = ", ".join(str(p.relative_to(ROOT)) for p in stale)
        print(f"out of date with solutions/: {names}; run python -m gs_course.notebooks", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
