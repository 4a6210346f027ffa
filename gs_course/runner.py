"""Run a simulation image by image, timing compilation apart from the steps, saving each image.

The clock is the caller's (`gs_course.measurement.timer`'s `stopwatch()` for the simulation's
library): the engine times nothing on its own, so every figure the course prints comes from one
timer."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from .backends import Simulation
from .output import FrameWriter


@dataclasses.dataclass
class RunReport:
    images: int  # images completed
    steps_per_image: int
    first_image_s: float  # the first image, which includes JIT compilation and warm-up
    total_s: float

    @property
    def steps(self) -> int:
        return self.images * self.steps_per_image

    @property
    def steady_steps_per_s(self) -> float | None:
        """Steps per second after the first image (None when there is only one image)."""
        rest = self.total_s - self.first_image_s
        if self.images < 2 or rest <= 0:
            return None
        return (self.images - 1) * self.steps_per_image / rest


def simulate(
    simulation: Simulation,
    images: int,
    steps_per_image: int,
    writer: FrameWriter | None = None,
    on_image: Callable[[int], None] | None = None,
    stopwatch=None,
) -> RunReport:
    """Advance `images` x `steps_per_image` steps; with a writer, store V after each image.

    Without a writer V stays on the device until the end (the benchmark's compute mode); the
    clock still stops only once the device has finished. `stopwatch`: started by the caller, read
    with `elapsed(simulation)` (which waits for the simulation's device); without one the report's
    times stay 0.
    """
    report = RunReport(0, steps_per_image, 0.0, 0.0)
    for image in range(images):
        simulation.advance(steps_per_image)
        if writer is not None:
            writer.write(simulation.fetch_v())
        ends_a_lap = image == 0 or image == images - 1
        report.images = image + 1
        if stopwatch is not None:
            report.total_s = stopwatch.elapsed(simulation if ends_a_lap else None)
        if image == 0:
            report.first_image_s = report.total_s
        if on_image is not None:
            on_image(image)
    return report
