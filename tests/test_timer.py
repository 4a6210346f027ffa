"""The one timer: against a fake clock, each library's timer stops the clock only once its device
has finished, keeps the warm-up apart, and names wall time and the device's own time apart."""

import json
import sys
import time
import types

import numpy as np
import pytest

from gs_course import backends
from gs_course.backends.numpy_backend import NumpySlices
from gs_course.measurement import timer
from gs_course.parameters import Parameters


class FakeClock:
    """Seconds that pass only when the test says so."""

    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class FakeSimulation:
    """A call that queues 1 s of work; `synchronize` waits it out (the clock moves then)."""

    def __init__(self, clock: FakeClock):
        self.clock, self.queued = clock, 0.0

    def advance(self, steps: int) -> None:
        self.clock.advance(0.001)  # the call itself returns at once
        self.queued += steps

    def synchronize(self) -> None:
        self.clock.advance(self.queued)
        self.queued = 0.0


def test_the_clock_stops_once_the_simulation_has_finished_and_the_warm_up_is_apart():
    clock = FakeClock()
    sim = FakeSimulation(clock)
    samples = timer.Timer(clock).time(lambda: sim.advance(2), repeats=3, warmup=2, on=sim)
    assert samples.seconds == pytest.approx((2.001,) * 3), "queued work counts: the clock waits for it"
    assert samples.compile_s == pytest.approx(4.002), "both warm-up calls, waited for"
    assert samples.device_s is None, "NumPy has no device clock"


def test_a_call_that_returns_a_simulation_is_waited_for_without_being_told():
    clock = FakeClock()
    sim = FakeSimulation(clock)

    def step():
        sim.advance(1)
        return sim

    assert timer.Timer(clock).time(step, repeats=2, warmup=0).seconds == pytest.approx((1.001, 1.001))


def test_after_runs_off_the_clock_and_a_stopwatch_waits_only_when_told():
    clock = FakeClock()
    sim = FakeSimulation(clock)
    samples = timer.Timer(clock).time(lambda: sim.advance(5), repeats=2, warmup=0, after=sim.synchronize)
    assert samples.seconds == pytest.approx((0.001, 0.001)), "how long the call blocks; its work ends off the clock"
    stopwatch = timer.Timer(clock).stopwatch()
    sim.advance(3)
    assert stopwatch.elapsed() == pytest.approx(0.001), "no wait unless asked"
    assert stopwatch.elapsed(sim) == pytest.approx(3.001)


def test_jax_waits_for_the_arrays_a_call_returned(monkeypatch):
    waited = []
    monkeypatch.setitem(sys.modules, "jax", types.SimpleNamespace(block_until_ready=waited.append))
    result = np.ones(3)
    timer.JaxTimer().time(lambda: result, repeats=2, warmup=1)
    assert len(waited) == 3 and all(r is result for r in waited)


def test_cupy_waits_for_the_whole_device_and_reads_its_own_clock(monkeypatch):
    clock, log = FakeClock(), []

    class Event:
        def record(self, stream=None):
            log.append(("record", clock()))
            self.at = clock()

        def synchronize(self):
            pass

    fake_cupy = types.SimpleNamespace(cuda=types.SimpleNamespace(
        Event=Event, Device=lambda: types.SimpleNamespace(synchronize=lambda: clock.advance(0.5)),
        get_elapsed_time=lambda start, end: (end.at - start.at) * 1e3))
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy)
    samples = timer.CupyTimer(clock).time(lambda: clock.advance(0.25), repeats=2, warmup=0)
    assert samples.seconds == pytest.approx((0.75, 0.75)), "wall time: the call, then the device's wait"
    assert samples.device_s == pytest.approx((0.25, 0.25)), "the device's own time around the call"
    assert samples.device_median == pytest.approx(0.25)
    stored = json.loads(json.dumps(samples.as_dict()))
    assert timer.Samples.from_dict(stored) == samples


def test_each_library_has_its_timer_and_a_real_simulation_is_timed():
    assert {name: type(timer.for_library(name)).__name__ for name in ("numpy", "cupy", "jax", "cupynumeric")} == {
        "numpy": "Timer", "cupy": "CupyTimer", "jax": "JaxTimer", "cupynumeric": "LegateTimer"}
    with pytest.raises(ValueError, match="no timer for 'tpu'"):
        timer.for_library("tpu")
    sim = NumpySlices(Parameters(), 17, 23)
    samples = timer.for_library(sim.backend).time(lambda: sim.advance(4), repeats=2, warmup=1, on=sim)
    assert len(samples.seconds) == 2 and samples.compile_s > 0 and min(samples.seconds) > 0


def test_samples_statistics_and_their_round_trip():
    samples = timer.Samples.of([0.30, 0.25, 0.27, 0.28], compile_s=1.5)
    assert samples.median == pytest.approx(0.275) and samples.min == 0.25 and samples.max == 0.30
    assert samples.spread == pytest.approx(0.05 / 0.275)
    stored = json.loads(json.dumps(samples.as_dict()))
    assert timer.Samples.from_dict(stored) == samples and stored["repeats"] == 4
    assert samples.scaled(10).median == pytest.approx(2.75) and samples.scaled(10).compile_s == 1.5
    assert str(samples) == "275 ms (250-300)"
    assert timer.format_range(8.5e-6, 8.4e-6, 8.9e-6) == "8.5 us (8.4-8.9)"
    assert timer.format_range(2.7, None, None) == timer.format_range(2.7, 2.7, 2.7) == "2.7 s", \
        "no range: one repeat, or a file that kept none"
    with pytest.raises(ValueError):
        timer.Samples.of([])
    with pytest.raises(ValueError):
        timer.Timer().time(lambda: None, repeats=0)
    with pytest.raises(ValueError, match="one sample per"):
        timer.Samples((1.0, 2.0), device_s=(1.0,))


@pytest.mark.skipif(not backends.probe("cupynumeric").ok, reason="cupynumeric not available")
def test_legate_waits_until_the_tasks_issued_have_run():
    """The clock stops at a blocking fence, once Legate has run every task: V fetched after it
    comes at once (without the wait, the fetch would wait for the steps)."""
    sim = backends.create("cupynumeric", Parameters(), 135, 240, "task", steps_per_task=8)
    sim.advance(8)
    sim.fetch_v()
    stopwatch = timer.LegateTimer().stopwatch()
    sim.advance(96)
    waited = stopwatch.elapsed(on=sim)
    start = time.perf_counter()
    sim.fetch_v()
    assert time.perf_counter() - start < 0.2 * waited
