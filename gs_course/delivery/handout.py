"""The student notebooks, handed out into a student's own folder and kept up to date there.

On a JupyterHub the course's code comes from the image and the student's work lives in their home:
`gs-course notebooks` copies the student notebooks there, and, run again during the school, brings
in new and corrected notebooks without touching one the student has changed. It knows which by a
small record in the folder (`.gs-course-handout.json`: the fingerprint of each notebook as it was
handed out): a notebook that still matches its record is the student's untouched copy and is
replaced; one that does not is the student's work and stays, with the course's new version beside
it (`NAME.updated.ipynb`).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from pathlib import Path

from ..paths import course_folder
from ..lessons.notebooks import named

#: The student notebooks.
SOURCE = course_folder("notebooks")
RECORD = ".gs-course-handout.json"
DEFAULT_FOLDER = Path("~/gs-course-notebooks")


class HandoutError(RuntimeError):
    """A folder that cannot be written, or a notebook the course does not have: one line says which."""


def _fingerprint(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def course_files(source: Path = SOURCE) -> list[Path]:
    """What a student needs in their folder: the notebooks, the folder's README and the glossary
    the notebooks link (not the copies kept beside a notebook, NAME.edited-TIME.ipynb and the like:
    a course notebook's name has no dot)."""
    return sorted(p for p in source.iterdir()
                  if p.is_file() and ((p.suffix == ".ipynb" and "." not in p.stem) or p.name in ("README.md", "glossary.md")))


def _read_record(folder: Path) -> dict[str, str]:
    try:
        return json.loads((folder / RECORD).read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return {}


def _writable(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".{RECORD}.probe"
        probe.write_text("")
        probe.unlink()
    except OSError as err:
        raise HandoutError(f"cannot write to {folder} ({err.strerror}): give a folder of your own, "
                           "for example gs-course notebooks ~/gs-course-notebooks") from None


def sync(folder: Path, source: Path = SOURCE) -> list[str]:
    """Copy new notebooks into `folder`, replace those the student has not changed, and put the
    course's new version beside each one the student has changed. Returns one line per change."""
    folder = folder.expanduser()
    _writable(folder)
    record = _read_record(folder)
    said = []
    for course_file in course_files(source):
        name, theirs = course_file.name, folder / course_file.name
        new = _fingerprint(course_file)
        if not theirs.exists():
            shutil.copyfile(course_file, theirs)
            said.append(f"new: {name}")
        elif _fingerprint(theirs) == new:
            pass  # already the course's version, whoever put it there
        elif _fingerprint(theirs) == record.get(name):
            shutil.copyfile(course_file, theirs)
            said.append(f"updated: {name}")
        elif record.get(name) != new:  # the student's work, and the course has changed it since
            beside = theirs.with_name(f"{theirs.stem}.updated{theirs.suffix}")
            if not beside.exists() or _fingerprint(beside) != new:
                shutil.copyfile(course_file, beside)
                said.append(f"kept your {name} (you changed it); the course's new version is beside it: {beside.name}")
            continue  # their copy still answers to the version they started from
        record[name] = new
    (folder / RECORD).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    return said


def find(notebook: str, source: Path = SOURCE) -> Path:
    """A course notebook by file name, name without .ipynb, or tutorial number."""
    notebooks = [p for p in course_files(source) if p.suffix == ".ipynb"]
    found = named(notebooks, notebook)
    if len(found) == 1:
        return found[0]
    names = ", ".join(p.name for p in notebooks)
    raise HandoutError(f"no course notebook {notebook!r}; the notebooks are {names}")


def reset(folder: Path, notebook: str, source: Path = SOURCE) -> list[str]:
    """A fresh copy of one notebook; the student's own is kept as NAME.backup-TIME.ipynb."""
    folder = folder.expanduser()
    course_file = find(notebook, source)
    _writable(folder)
    theirs = folder / course_file.name
    said = []
    if theirs.exists():
        backup = theirs.with_name(f"{theirs.stem}.backup-{time.strftime('%Y%m%d-%H%M%S')}{theirs.suffix}")
        theirs.rename(backup)
        said.append(f"your {theirs.name} is kept as {backup.name}")
    shutil.copyfile(course_file, theirs)
    record = _read_record(folder)
    record[theirs.name] = _fingerprint(course_file)
    (folder / RECORD).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    said.append(f"fresh: {theirs.name}")
    return said
