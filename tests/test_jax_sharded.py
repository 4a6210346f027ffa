"""JAX on several devices (gs_course.backends.jax_sharded), on the CPU: XLA_FLAGS gives JAX four
CPU devices, which it reads once when it starts, so the runs happen in a child process.

Each grid is split in odd bands of rows (23, 15 and 11 rows), with the pattern run long enough to
cross every border between two bands (asserted), and dt != 1. One device is the fallback; the
in-process parity tests of tests/test_backends.py cover it too.
"""

import functools
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from gs_course.model import PARITY_ATOL, reference_run
from gs_course.parameters import Parameters

PARAMS = Parameters(feed=0.03, kill=0.06, dt=0.7)
STEPS = 500
COLS = 37
#: Rows for each device count: divisible by it, a band of odd height each.
ROWS = {1: 45, 2: 46, 3: 45, 4: 44}
FORMULATIONS = ("sharded", "sharded-overlap", "sharded-deep", "sharded-auto")

CHILD = """
import contextlib, io, json, sys
import gs_course
import jax
import numpy as np
from jax import lax
from gs_course import backends, check
from gs_course.backends import jax_sharded
from gs_course.parameters import Parameters

params = Parameters(**json.loads(sys.argv[1]))
out = {"devices": len(jax.devices()), "runs": {}, "hints": {}, "deep": {}}
for formulation in %(formulations)r:
    cls = backends.formulation_class("jax", formulation)
    for n, rows in %(rows)r.items():
        sim = cls(params, rows, %(cols)d, devices=jax.devices()[:n])
        for steps in (1, 0, 199, %(steps)d - 200):
            sim.advance(steps)
        u, v = sim.fetch()
        out["runs"][f"{formulation} {n}"] = {
            "bands": sim.mesh.size, "shards": len(sim._uv.addressable_shards), "steps": sim.steps_done,
            "u": u.tolist(), "v": v.tolist(), "v_alone": sim.fetch_v().tolist()}
for depth in (1, 3, 50):  # calls of 1, 199 and 300 steps: 1, 1 and 0 left after the last full block of 3;
    # 50 is more than a band's rows
    sim = jax_sharded.JaxShardedDeep(params, %(rows_on_4)d, %(cols)d, jax_sharded.DeepOptions(depth),
                                     devices=jax.devices())
    for steps in (1, 0, 199, %(steps)d - 200):
        sim.advance(steps)
    u, v = sim.fetch()
    sim.set_state(v, u)  # swapped: a state no run makes, read back through the ghost-row layout
    back_u, back_v = sim.fetch()
    out["deep"][depth] = {"depth": sim.depth, "v": v.tolist(),
                          "round_trip": bool((back_u == v).all() and (back_v == u).all())}
try:
    backends.create("jax", params, %(rows_on_4)d, %(cols)d, "sharded-deep", depth=0)
except backends.BackendError as err:
    out["depth_0"] = str(err)
try:
    jax_sharded.JaxSharded(params, 53, %(cols)d, devices=jax.devices())
except backends.BackendError as err:
    out["indivisible"] = str(err)
told = io.StringIO()
with contextlib.redirect_stderr(told):
    sim = backends.create("jax", params, %(rows_on_3)d, %(cols)d, "sharded")
sim.advance(%(steps)d)
out["fewer"] = {"told": told.getvalue(), "bands": sim.mesh.size, "v": sim.fetch_v().tolist()}

def wraps_around(band, bands):
    down = [(i, (i + 1) %% bands) for i in range(bands)]
    return lax.ppermute(band[-1:], "rows", down), lax.ppermute(band[:1], "rows", [(b, a) for a, b in down])

def off_by_one(band, bands):
    above, below = jax_sharded.exchange(band[:-1], bands)
    return above, jax_sharded.exchange(band, bands)[1]

for name, student in (("right", jax_sharded.exchange), ("wraps around", wraps_around), ("off by one", off_by_one)):
    try:
        check.halo_exchange(student)
        out["hints"][name] = None
    except check.NotYet as err:
        out["hints"][name] = str(err)
print(json.dumps(out))
"""


@functools.cache
def child_results() -> dict:
    env = dict(os.environ, JAX_PLATFORMS="cpu",
               XLA_FLAGS=(os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4").strip())
    code = CHILD % {"formulations": FORMULATIONS, "rows": ROWS, "cols": COLS, "steps": STEPS, "rows_on_3": ROWS[3],
                     "rows_on_4": ROWS[4]}
    params = json.dumps({"feed": PARAMS.feed, "kill": PARAMS.kill, "dt": PARAMS.dt})
    done = subprocess.run([sys.executable, "-c", code, params], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@functools.cache
def reference(rows: int):
    return reference_run(rows, COLS, STEPS, PARAMS)


def test_the_child_has_four_devices():
    assert child_results()["devices"] == 4


@pytest.mark.parametrize("devices", sorted(ROWS))
def test_the_pattern_crosses_every_border_between_bands(devices):
    """Without this the tests below could pass with a broken exchange: V has grown on both sides
    of every border between two bands."""
    _, v = reference(ROWS[devices])
    height = ROWS[devices] // devices
    for border in range(height, ROWS[devices], height):
        assert v[border - 1].max() > 0.05 and v[border].max() > 0.05, border


@pytest.mark.parametrize("formulation", FORMULATIONS)
@pytest.mark.parametrize("devices", sorted(ROWS))
def test_sharded_matches_the_reference(formulation, devices):
    run = child_results()["runs"][f"{formulation} {devices}"]
    assert run["bands"] == run["shards"] == devices
    assert run["steps"] == STEPS
    ref_u, ref_v = reference(ROWS[devices])
    u, v = np.array(run["u"], np.float32), np.array(run["v"], np.float32)
    assert u.shape == v.shape == (ROWS[devices], COLS)
    np.testing.assert_allclose(u, ref_u, rtol=0, atol=PARITY_ATOL)
    np.testing.assert_allclose(v, ref_v, rtol=0, atol=PARITY_ATOL)
    np.testing.assert_array_equal(np.array(run["v_alone"], np.float32), v)


@pytest.mark.parametrize("depth, used", [(1, 1), (3, 3), (50, ROWS[4] // 4)])
def test_ghost_rows_of_any_depth_up_to_a_band_match_the_reference(depth, used):
    """sharded-deep with an exchange every step, every 3 steps (calls of 1 and 199 steps end with
    a shorter block) and a depth asked for beyond a band's rows (capped at them), on 4 devices; and
    set_state then fetch gives back what was set."""
    run = child_results()["deep"][str(depth)]
    assert run["depth"] == used
    np.testing.assert_allclose(np.array(run["v"], np.float32), reference(ROWS[4])[1], rtol=0, atol=PARITY_ATOL)
    assert run["round_trip"]


def test_a_depth_below_one_is_refused_in_one_line():
    assert child_results()["depth_0"] == "ghost rows: depth 0 is not a row count; use 1 or more (default 32)"


def test_ghost_row_factors_are_each_bands_rows_and_its_neighbours_with_zeros_beyond_the_grid():
    from gs_course.backends import jax_sharded

    factors = jax_sharded.ghost_row_factors(6, 2, 2)[:, 0]
    np.testing.assert_array_equal(factors, [0, 0, 2, 3, 3, 3, 3] + [3, 3, 3, 3, 2, 0, 0])


def test_devices_asked_for_that_do_not_split_the_rows_are_refused_in_one_line():
    message = child_results()["indivisible"]
    assert message == ("53 rows do not split into 4 equal bands, one per device: use a row count divisible "
                       "by 4, such as 52 or 56, or run on 1 of the 4 devices")


def test_by_default_it_runs_on_as_many_devices_as_split_the_rows_and_says_so():
    fewer = child_results()["fewer"]
    assert fewer["told"] == (f"{ROWS[3]} rows do not split into 4 equal bands, one per device: running on 3 of "
                             "the 4 devices (a row count divisible by 4, such as 44 or 48, uses them all)\n")
    assert fewer["bands"] == 3
    np.testing.assert_allclose(np.array(fewer["v"], np.float32), reference(ROWS[3])[1], rtol=0, atol=PARITY_ATOL)


def test_the_checker_accepts_the_exchange_and_names_the_wrong_rows():
    hints = child_results()["hints"]
    assert hints["right"] is None
    assert "band 0's row above is row" in hints["wraps around"]
    assert "expected zeros (the grid's edge)" in hints["wraps around"]
    assert "leave the pairs that wrap around" in hints["wraps around"]
    assert "band 1's row above is row" in hints["off by one"] and "the last row of band 0" in hints["off by one"]
