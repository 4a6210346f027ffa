"""One way of timing, for every measurement of the course (the benchmark, scaling, the transfer demo,
the explorer, the notebooks' timings).

A GPU library returns from a call before its device has finished, so a clock read right after the
call measures the queuing, not the work. Each library gets a `Timer` that knows how to wait for its
device (the model is cuPyNumeric's `examples/_benchmark/timer.py`):

- `wall_s`: the host's clock from before the call to after the device has finished: what a
  person waits. Every `Samples.seconds` is this.
- `device_s`: the device's own clock around the call's work (CUDA events on the current stream
  for CuPy), which leaves Python's launch overhead out; None where the library has no such clock.
- The warm-up calls (compilation, first allocations) are timed apart, as `compile_s`.

A step timed by the benchmark and by `gs-course scale` is the same quantity: the clock stops when
the device has finished the steps asked for, nothing fetched.
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from collections.abc import Callable, Iterable


@dataclasses.dataclass(frozen=True)
class Samples:
    """Repeated timings of one thing: wall-clock seconds, the device's own where it has a clock
    (`device_s`, same length), and the warm-up's apart (`compile_s`, None without a warm-up)."""

    seconds: tuple[float, ...]
    compile_s: float | None = None
    device_s: tuple[float, ...] | None = None

    def __post_init__(self):
        if not self.seconds:
            raise ValueError("no samples: time at least one repeat")
        if self.device_s is not None and len(self.device_s) != len(self.seconds):
            raise ValueError("device_s needs one sample per wall-clock sample")

    @classmethod
    def of(cls, seconds: Iterable[float], compile_s: float | None = None) -> Samples:
        """Samples timed by other means (a child process's record, say)."""
        return cls(tuple(float(s) for s in seconds), compile_s)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def device_median(self) -> float | None:
        return statistics.median(self.device_s) if self.device_s else None

    @property
    def min(self) -> float:
        return min(self.seconds)

    @property
    def max(self) -> float:
        return max(self.seconds)

    @property
    def spread(self) -> float:
        """(max - min) / median: 0.05 means the repeats lay within 5 % of the median's size."""
        return (self.max - self.min) / self.median if self.median > 0 else 0.0

    def scaled(self, factor: float) -> Samples:
        """Every sample times `factor` (a part of a workload timed, the whole extrapolated)."""
        device = tuple(s * factor for s in self.device_s) if self.device_s else None
        return Samples(tuple(s * factor for s in self.seconds), self.compile_s, device)

    def as_dict(self) -> dict:
        """What a result file stores: the median, the range and every repeat."""
        stored = {"median_s": self.median, "min_s": self.min, "max_s": self.max, "repeats": len(self.seconds),
                  "samples_s": list(self.seconds), "compile_s": self.compile_s}
        if self.device_s:
            stored["device_samples_s"] = list(self.device_s)
        return stored

    @classmethod
    def from_dict(cls, stored: dict) -> Samples:
        device = stored.get("device_samples_s")
        return cls(tuple(stored["samples_s"]), stored.get("compile_s"), tuple(device) if device else None)

    def __str__(self) -> str:
        return format_range(self.median, self.min, self.max)


def format_seconds(seconds: float) -> str:
    """Seconds in the unit that suits them: 8.5 us, 730 us, 271 ms, 1.12 s, 377 s."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale or unit == "us":
            value = seconds / scale
            return f"{value:.3g} {unit}" if value < 100 else f"{value:.0f} {unit}"
    raise AssertionError("unreachable")


def format_range(median: float, low: float | None, high: float | None) -> str:
    """'271 ms (270-275)': the median, then the range of the repeats in the same unit; the
    median alone where there is no range (one repeat, or a file that kept none)."""
    text = format_seconds(median)
    if low is None or high is None or low == high:
        return text
    unit = text.split()[1]
    scale = {"s": 1.0, "ms": 1e-3, "us": 1e-6}[unit]
    return f"{text} ({low / scale:.3g}-{high / scale:.3g})"


class Timer:
    """The host's clock, for a library whose calls return when their work is done (NumPy), and the
    base of the others: `wait(on)` is where each library waits for its device."""

    library = "numpy"

    def __init__(self, clock: Callable[[], float] = time.perf_counter):
        self.clock = clock

    def wait(self, on=None) -> None:
        """Wait until the work of the call that returned `on` is done. A simulation (anything with
        `synchronize`) waits for its own device, whichever the library."""
        if hasattr(on, "synchronize"):
            on.synchronize()

    def _device_clock(self):
        """A pair of callables (start, stop -> seconds) on the device's clock, or None."""
        return None

    def time(self, fn: Callable[[], object], repeats: int = 5, warmup: int = 1, *,
             on=None, after: Callable[[], object] | None = None) -> Samples:
        """Call `fn` `warmup` times, then `repeats` times on the clock, each call timed from before it
        to after `wait(on)` (`on`: what to wait for; by default what `fn` returned). `after()` runs
        after each call, off the clock (to time how long a call blocks Python, then let its work end)."""
        if repeats < 1 or warmup < 0:
            raise ValueError(f"repeats must be >= 1 and warmup >= 0, got {repeats} and {warmup}")
        settle = after or (lambda: None)
        compile_s = None
        if warmup:
            start = self.clock()
            for _ in range(warmup):
                result = fn()
                self.wait(on if on is not None else result)
            compile_s = self.clock() - start
            settle()
        wall, device = [], []
        for _ in range(repeats):
            device_clock = self._device_clock()
            start = self.clock()
            if device_clock:
                device_clock[0]()
            result = fn()
            if device_clock:
                device.append(device_clock[1]())
            self.wait(on if on is not None else result)
            wall.append(self.clock() - start)
            settle()
        return Samples(tuple(wall), compile_s, tuple(device) if device else None)

    def stopwatch(self) -> Stopwatch:
        """A clock started now and read once the device has finished (a run timed as it goes, with
        its progress shown, as `gs-course run` does)."""
        return Stopwatch(self)


class Stopwatch:
    """Seconds since it was made: read at once, or (given `on`) once the timer's library has
    finished `on`'s work."""

    def __init__(self, timer: Timer):
        self.timer = timer
        self.start = timer.clock()

    def elapsed(self, on=None) -> float:
        if on is not None:
            self.timer.wait(on)
        return self.timer.clock() - self.start


class CupyTimer(Timer):
    """CuPy: waits for the whole device (every stream), and reads CUDA events recorded on the
    current stream around each call as the device's own clock."""

    library = "cupy"

    def wait(self, on=None) -> None:
        import cupy

        cupy.cuda.Device().synchronize()

    def _device_clock(self):
        import cupy

        start, end = cupy.cuda.Event(), cupy.cuda.Event()

        def stop() -> float:
            end.record()
            end.synchronize()
            return cupy.cuda.get_elapsed_time(start, end) / 1e3

        return (start.record, stop)

    def time_graph(self, queue: Callable[[], object], repeats: int = 10) -> Samples:
        """`repeats` replays of the GPU work `queue()` puts on the current stream, captured once as
        a CUDA graph: launched one by one from Python, operations of a few microseconds would
        wait for Python, and the graph leaves that overhead out (read `device_median`). `queue()`
        runs once as it is first (kernels compile and load, which a capture does not allow)."""
        import cupy

        stream = cupy.cuda.Stream(non_blocking=True)  # a capture needs a stream of its own
        with stream:
            queue()
            stream.begin_capture()
            queue()
            graph = stream.end_capture()
            return self.time(lambda: graph.launch(stream), repeats)


class JaxTimer(Timer):
    """JAX: waits for the arrays a call returned (`jax.block_until_ready`), or for a simulation."""

    library = "jax"

    def wait(self, on=None) -> None:
        if hasattr(on, "synchronize"):
            on.synchronize()
        elif on is not None:
            import jax

            jax.block_until_ready(on)


class LegateTimer(Timer):
    """cuPyNumeric: Legate runs calls as deferred tasks; the wait is a blocking execution fence,
    every task issued so far (a simulation's own wait is the same fence)."""

    library = "cupynumeric"

    def wait(self, on=None) -> None:
        from legate.core import get_legate_runtime

        get_legate_runtime().issue_execution_fence(block=True)


class TorchTimer(Timer):
    library = "torch"

    def wait(self, on=None) -> None:
        import torch

        if torch.cuda.is_available():
            torch.cuda.synchronize()


TIMERS = {timer.library: timer for timer in (Timer, CupyTimer, JaxTimer, LegateTimer, TorchTimer)}


def for_library(name: str) -> Timer:
    """The timer of backend `name` (numpy, cupy, jax, cupynumeric, torch)."""
    try:
        return TIMERS[name]()
    except KeyError:
        raise ValueError(f"no timer for {name!r}: one of {', '.join(TIMERS)}") from None
