"""A notebook handed out before gs_course had layers still runs: every import line and every name
its cells took from gs_course's modules (tests/data/imports-before-the-layers.json, read from the
student notebooks of that commit) resolve through gs_course._aliases."""

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from gs_course import _aliases

BEFORE = json.loads((Path(__file__).parent / "data" / "imports-before-the-layers.json").read_text())


def _needs_cupy(statement: str) -> bool:
    return "cupy_backend" in statement


def test_every_import_line_of_an_old_notebook_runs_in_a_fresh_interpreter():
    lines = [line for line in BEFORE["imports"] if not _needs_cupy(line)]
    attributes = [(module, name) for module, name in BEFORE["attributes"]]
    program = "\n".join([*lines, "import gs_course",
                         *(f"getattr(gs_course.{module}, {name!r})" for module, name in attributes)])
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


def test_an_old_module_answers_with_the_new_modules_names():
    measure = importlib.import_module("gs_course.measure")
    from gs_course import paths, workload
    from gs_course.measurement import records, timer

    assert measure.FULL is workload.FULL and measure.RESULTS == paths.RESULTS
    assert measure.load is records.load and measure.format_seconds is timer.format_seconds
    with pytest.raises(AttributeError, match="gs_course.measure has no 'no_such_name'"):
        measure.no_such_name
    from gs_course import check
    from gs_course.lessons import checkers

    assert check is checkers


def test_names_that_left_a_module_still_there_are_found():
    from gs_course import devices, sizing

    assert devices.default_legate_config is sizing.default_legate_config
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        devices.nothing
    assert set(_aliases.MOVED_NAMES["gs_course.backends.cupy_backend"]) >= {"VARIANTS", "step_time_us"}


def _imported(path: Path, package: Path) -> set[str]:
    """Every module and name `path` imports, as absolute dotted names (relative imports resolved;
    `from a import b` gives a.b, a module or a name of a)."""
    parts = path.relative_to(package.parent).with_suffix("").parts
    here = parts[:-1] if parts[-1] != "__init__" else parts  # the package `path` is in
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(here[:len(here) - node.level + 1] + ((node.module,) if node.module else ())) \
                if node.level else node.module
            found |= {base} | {f"{base}.{alias.name}" for alias in node.names}
    return found


def test_nothing_in_the_package_imports_an_old_path():
    """Absolute or relative, at the top or inside a function: no module of the package imports an
    old module (gs_course.measure, `from .. import check`) or a name from where it used to be."""
    old = {f"gs_course.{name}" for name in _aliases.MODULES}
    old |= {f"{module}.{name}" for module, names in _aliases.MOVED_NAMES.items() for name in names}
    package = Path(_aliases.__file__).parent
    for path in package.rglob("*.py"):
        if path.name != "_aliases.py":
            assert not _imported(path, package) & old, path
