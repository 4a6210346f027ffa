"""The course's workload, defined once: a grid and a number of steps, and the four grids the
command line, the benchmark, the transfer demo and the notebooks run (`FULL`, the school's run,
down to `SMALL` for a machine without a GPU)."""

from __future__ import annotations

import dataclasses


#: Bytes of one float32 cell.
CELL_BYTES = 4
#: A step reads U and V and writes them: four float32 arrays of the grid cross the GPU's memory.
ARRAYS_MOVED_PER_STEP = 4


@dataclasses.dataclass(frozen=True)
class Workload:
    """A Gray-Scott run: a rows x cols float32 grid, `images` images `steps_per_image` steps apart."""

    rows: int
    cols: int
    images: int
    steps_per_image: int
    name: str = "custom"

    @property
    def steps(self) -> int:
        return self.images * self.steps_per_image

    @property
    def frame_bytes(self) -> int:
        """One float32 field of the grid (one V image)."""
        return self.rows * self.cols * CELL_BYTES

    @property
    def bytes_moved_per_step(self) -> int:
        """The least memory traffic of one step: U and V read, U and V written."""
        return ARRAYS_MOVED_PER_STEP * self.frame_bytes

    @property
    def grid(self) -> str:
        return f"{self.rows} x {self.cols}"

    def describe(self) -> str:
        return f"{self.grid} float32, {self.images} images x {self.steps_per_image} steps = {self.steps:,} steps"

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, fields: dict) -> Workload:
        return cls(**fields)

    def same_run(self, other: Workload | dict) -> bool:
        """The same grid and steps, whatever the names."""
        other = other if isinstance(other, Workload) else Workload.from_dict(other)
        return (self.rows, self.cols, self.images, self.steps_per_image) == (
            other.rows, other.cols, other.images, other.steps_per_image)


#: The school's run: 1080 x 1920, 1000 images 32 steps apart (the original course's benchmark).
FULL = Workload(1080, 1920, 1000, 32, "full")
#: Half the side (a quarter of the cells), then a quarter of it: GPUs with too little memory free.
HALF = Workload(540, 960, 1000, 32, "half")
QUARTER = Workload(270, 480, 1000, 32, "quarter")
#: An eighth of the side, 50 images: machines without a GPU (every notebook cell finishes in
#: seconds on a laptop) and `gs-course bench --quick`.
SMALL = Workload(135, 240, 50, 32, "small")
#: Largest first: a GPU runs the first one that fits in its free memory (`course.size()`).
GRIDS = (FULL, HALF, QUARTER, SMALL)


def grid(name: str) -> Workload:
    """The grid called `name` (full, half, quarter or small); one line naming them otherwise."""
    for workload in GRIDS:
        if workload.name == name.lower():
            return workload
    raise ValueError(f"no grid {name!r}: choose one of {', '.join(w.name for w in GRIDS)}")
