"""Where the course's folders are: the clone's, or the package's own links to them in an installed
course (the container image carries results, solutions and notebooks as package data)."""

from __future__ import annotations

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
