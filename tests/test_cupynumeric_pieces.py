"""cuPyNumeric with its arrays split between processors, as on several GPUs, tested on CPUs.

Legate on `--cpus 2` or `--cpus 3` splits arrays between the processors (`--min-cpu-chunk 1` makes
it split even these small grids), so every formulation meets the seams between pieces, and our
task's halos (`bloat`) are what keeps it right there. LEGATE_CONFIG is read once per process:
each processor count runs in a child process of its own.
"""

import json
import os
import subprocess
import sys

import pytest

from gs_course import backends
from gs_course.model import PARITY_ATOL

pytestmark = pytest.mark.skipif(not backends.probe("cupynumeric").ok, reason="cupynumeric not available")

MARKER = "gs-course-pieces: "

#: In the child: every formulation from a random state (structure everywhere, so that a seam
#: anywhere shows) on odd non-square grids with dt != 1, against the float64 reference; then our
#: task with halos one cell narrower than the steps it runs, which must go wrong at the seams.
CHILD = r"""
import json
import numpy as np
from gs_course.backends import cupynumeric_backend as cn_backend
from gs_course.model import reference_step
from gs_course.parameters import Parameters
import cupynumeric

prefetches = []
prefetch = cn_backend.CupynumericTask._prefetch_halos
cn_backend.CupynumericTask._prefetch_halos = lambda sim: (prefetches.append(1), prefetch(sim))
params = Parameters(feed=0.03, kill=0.06, dt=0.7)
steps = 12
cases = [("slices", {}), ("convolve", {}), ("task", {}), ("task", {"steps_per_task": 1}),
         ("task", {"steps_per_task": 5})]
errors = {}
for rows, cols in ((37, 53), (29, 18)):
    rng = np.random.default_rng(rows)
    u0, v0 = (rng.random((rows, cols), dtype=np.float32) for _ in range(2))
    want = u0.astype(np.float64), v0.astype(np.float64)
    for _ in range(steps):
        want = reference_step(*want, params)
    for formulation, options in cases:
        cls = cn_backend.FORMULATIONS[formulation]
        sim = cls(params, rows, cols, cls.options(options)) if options else cls(params, rows, cols)
        sim.set_state(u0, v0)
        sim.advance(steps)
        got = sim.fetch()
        name = f"{formulation}{options.get('steps_per_task', '')} {rows}x{cols}"
        errors[name] = max(float(np.abs(g - w).max()) for g, w in zip(got, want))
    too_narrow = cn_backend.steps_task(1)
    uv = cupynumeric.array(np.stack([u0, v0]))
    for _ in range(steps // 3):
        out = cupynumeric.empty_like(uv)
        too_narrow(uv, out, 3, params.du, params.dv, params.feed, params.kill, params.dt)
        uv = out
    errors[f"halo too narrow {rows}x{cols}"] = max(float(np.abs(g - w).max()) for g, w in zip(np.asarray(uv), want))
errors["halo prefetches"] = len(prefetches)
print(MARKER + json.dumps(errors))
"""


def _run_on(cpus: int) -> dict[str, float]:
    env = {**os.environ, "LEGATE_CONFIG": f"--cpus {cpus} --gpus 0 --sysmem 2000 --min-cpu-chunk 1"}
    done = subprocess.run([sys.executable, "-c", f"MARKER = {MARKER!r}\n" + CHILD], env=env,
                          capture_output=True, text=True, timeout=900)
    answers = [line for line in done.stdout.splitlines() if line.startswith(MARKER)]
    assert answers, f"the child failed (exit {done.returncode}): {done.stderr[-2000:]}"
    return json.loads(answers[-1][len(MARKER):])


@pytest.fixture(scope="module", params=[2, 3], ids=lambda n: f"{n}cpus")
def errors(request):
    return _run_on(request.param)


def test_every_formulation_matches_the_reference_when_split(errors):
    right = {name: error for name, error in errors.items() if not name.startswith("halo")}
    assert len(right) == 10
    assert all(error < PARITY_ATOL for error in right.values()), json.dumps(right)


def test_a_halo_narrower_than_the_steps_goes_wrong_at_the_seams(errors):
    """Proves that the arrays were split: whole, the narrow halo would not matter."""
    wrong = {name: error for name, error in errors.items() if name.startswith("halo too narrow")}
    assert len(wrong) == 2
    assert all(error > 100 * PARITY_ATOL for error in wrong.values()), wrong


def test_the_task_prefetches_its_halos_where_the_grid_is_in_pieces(errors):
    """Each call of the task (2 grids x 3 task cases, 12 steps: 1 + 12 + 3 calls a grid) prefetched."""
    assert errors["halo prefetches"] == 2 * (1 + 12 + 3)


def test_one_processor_has_one_piece_and_no_halo_prefetch(monkeypatch):
    """The prefetch blocks without letting go of Python's lock (it hung the H200's benchmark while
    a task, a Python function, waited for that lock): on one processor there is no halo to fetch."""
    from gs_course.backends import cupynumeric_backend as cn_backend
    from gs_course.parameters import Parameters

    if cn_backend._processors() != 1:
        pytest.skip(f"Legate has {cn_backend._processors()} processors here")
    prefetches = []
    monkeypatch.setattr(cn_backend.CupynumericTask, "_prefetch_halos", lambda sim: prefetches.append(1))
    sim = backends.create("cupynumeric", Parameters(), 17, 23, "task", steps_per_task=4)
    sim.advance(12)
    sim.synchronize()
    assert sim.steps_done == 12 and prefetches == []


def test_each_task_is_launched_after_a_blocking_fence(monkeypatch):
    """Launching the task can keep Python's lock while the task before it, a Python function, waits
    for that lock (the H200's benchmark hung so, on one GPU): every launch waits for the tasks before."""
    from gs_course.backends import cupynumeric_backend as cn_backend
    from gs_course.parameters import Parameters

    events = []
    fence = cn_backend._wait_for_legate
    monkeypatch.setattr(cn_backend, "_wait_for_legate", lambda: (events.append("fence"), fence()))
    launch = cn_backend.steps_task(4)
    monkeypatch.setattr(cn_backend, "steps_task", lambda steps: lambda *args: (events.append("launch"), launch(*args)))
    sim = backends.create("cupynumeric", Parameters(), 17, 23, "task", steps_per_task=4)
    events.clear()
    sim.advance(12)
    sim.synchronize()
    launches = [i for i, event in enumerate(events) if event == "launch"]
    assert len(launches) == 3 and all(events[i - 1] == "fence" for i in launches), events


def test_the_cuda_runtime_of_pips_cuda12_wheels_is_loaded_before_legate(tmp_path):
    """The CUDA 12 image could not import cuPyNumeric ("libcudart.so.12: cannot open shared object
    file"): pip puts the runtime in site-packages/nvidia/cuda_runtime/lib, off the loader's path.
    A stand-in package with a real shared library there must end up loaded into the process."""
    import shutil

    if not shutil.which("gcc"):
        pytest.skip("needs gcc to build the stand-in library")
    lib = tmp_path / "nvidia" / "cuda_runtime" / "lib"
    lib.mkdir(parents=True)
    (tmp_path / "nvidia" / "cuda_runtime" / "__init__.py").write_text("")
    (tmp_path / "stand_in.c").write_text("int gs_course_stand_in(void) { return 12; }\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(lib / "libcudart.so.12"), str(tmp_path / "stand_in.c")],
                   check=True)
    code = ("import sys; sys.path.insert(0, sys.argv[1]); "
            "from gs_course.backends.cupynumeric_backend import load_pip_cuda_runtime; load_pip_cuda_runtime(); "
            "print(sys.argv[1] + '/nvidia/cuda_runtime/lib/libcudart.so.12' in open('/proc/self/maps').read())")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert done.stdout.strip().splitlines()[-1] == "True", done.stdout + done.stderr[-2000:]
