"""A notebook handed out before gs_course had layers still runs: every import line and every name
its cells took from gs_course's modules (tests/data/imports-before-the-layers.json, read from the
student notebooks of that commit) resolve through gs_course._aliases."""

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


def test_nothing_in_the_package_imports_an_old_path():
    old = {f"gs_course.{name}" for name in _aliases.MODULES}
    package = Path(_aliases.__file__).parent
    for path in package.rglob("*.py"):
        if path.name == "_aliases.py":
            continue
        text = path.read_text()
        for name in old:
            assert f"from {name} import" not in text and f"import {name}\n" not in text, f"{path}: {name}"
