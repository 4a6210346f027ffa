"""Where the course's folders are: the clone's, or the package's own links to them in an installed
course (the container image carries results, solutions and notebooks as package data)."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

def course_folder(name: str) -> Path:
    """The course's folder `name` (results, solutions, notebooks): the link inside the package,
    `gs_course/_name`, which an installed course (the container image) carries as package data, or
    the clone's folder where the link is not there."""
    linked = Path(__file__).resolve().parent / f"_{name}"
    return linked if linked.is_dir() else ROOT / name


#: The recorded results the notebooks show.
RESULTS = course_folder("results")


def output_folder_problem(option: str, folder: str | Path) -> str | None:
    """Make the folder an option names for a command's output where only it is missing (as `mkdir`
    would), before anything runs, so that a long run is not lost at its end; None when it is there
    and writable, else the one line that says what to do."""
    path = Path(folder)
    if path.exists() and not path.is_dir():
        return f"{option} {folder} is a file, not a folder: give a folder"
    if not path.exists():
        if not path.parent.is_dir():
            return f"{option} {folder}: no such folder, nor {path.parent}: make it first (mkdir -p {folder})"
        try:
            path.mkdir()
        except OSError as err:
            return f"{option} {folder} cannot be made ({err.strerror}): give a folder you can write"
    if not os.access(path, os.W_OK):
        return f"{option} {folder} cannot be written (read-only or not yours): give a folder you can write"
    return None
