"""Course-wide settings for the notebooks: one place decides how big the runs are.

On a machine with an NVIDIA GPU the notebooks run the school's full grid; without one, a grid a
sixty-fourth the size, so that every cell still finishes in seconds on a laptop. GS_COURSE_SIZE=full
or =small overrides the choice (the instructor check forces full).
"""

from __future__ import annotations

import dataclasses
import os

from .devices import gpus


@dataclasses.dataclass(frozen=True)
class Size:
    rows: int
    cols: int
    images: int
    steps_per_image: int
    name: str


FULL = Size(1080, 1920, 1000, 32, "full")
SMALL = Size(135, 240, 50, 32, "small")


def size() -> Size:
    """FULL where there is a GPU, SMALL otherwise, unless GS_COURSE_SIZE says which."""
    chosen = os.environ.get("GS_COURSE_SIZE", "").lower()
    if chosen not in ("", "full", "small"):
        raise ValueError(f"GS_COURSE_SIZE must be 'full' or 'small', got {chosen!r}")
    if chosen:
        return FULL if chosen == "full" else SMALL
    return FULL if gpus() else SMALL
