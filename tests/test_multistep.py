"""Several steps per launch: CuPy's `multistep` (temporal blocking in shared memory) and JAX's
`pallas`, against the model, on odd non-square grids with dt != 1 and every depth, including
depths that do not divide the steps.

CuPy's `persistent` (one cooperative launch, tiles kept on chip, borders exchanged at grid
barriers) is tested the same way.

Without a GPU, four things still run: the NumPy emulation of the fused kernel's tiles and halos
(temporal_blocking.py), the fused and the persistent CUDA kernels themselves compiled as C++ with
threads on the CPU (cuda_threads_on_cpu.h; for the persistent kernel, every thread of every block
at once, with a grid barrier), the persistent kernel's choice of tiles, and the Pallas kernel in
Pallas's interpreter.
"""

import dataclasses
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from gs_course import backends
from gs_course.backends import jax_pallas, persistent_tiles, temporal_blocking
from gs_course.backends.persistent_tiles import NotOnChip, OnChip
from gs_course.lessons import cuda_on_cpu
from gs_course.backends.temporal_blocking import Blocking, emulate, launch_depths, strip_of
from gs_course.model import PARITY_ATOL, reference_step
from gs_course.parameters import Parameters
from gs_course.measurement import records

PARAMS = Parameters(feed=0.03, kill=0.06, dt=0.7)
GRID = (23, 31)


def _random_state(rows, cols, seed=0):
    """U and V random in [0, 1): unlike the school's initial state, uniform nowhere, so that a
    halo one cell too thin or a wrong border shows at once, wherever it falls."""
    rng = np.random.default_rng(seed)
    return rng.random((rows, cols)).astype(np.float32), rng.random((rows, cols)).astype(np.float32)


def _model(u, v, steps):
    u, v = u.astype(np.float64), v.astype(np.float64)
    for _ in range(steps):
        u, v = reference_step(u, v, PARAMS)
    return u, v


def _assert_model(got, start, steps):
    for a, want in zip(got, _model(*start, steps)):
        np.testing.assert_allclose(a, want, rtol=0, atol=PARITY_ATOL)


# Tiles smaller than the halo, tiles that do not divide the grid, one thread a block and several.
BLOCKINGS = [Blocking(8, 5, 3, threads=(4, 2)), Blocking(7, 4, 2, 2, threads=(3, 3)),
             Blocking(11, 9, 4, 3, threads=(8, 1)), Blocking(30, 22, 1, threads=(1, 1))]


@pytest.mark.parametrize("blocking", BLOCKINGS, ids=str)
def test_emulated_tiles_and_halos_match_the_model(blocking):
    start = _random_state(*GRID)
    steps = 2 * blocking.depth + 1 if blocking.depth > 1 else 3  # a shorter last launch
    _assert_model(emulate(*start, PARAMS, blocking, steps), start, steps)


def test_the_default_blocking_matches_the_model_where_its_tiles_meet():
    blocking = temporal_blocking.BLOCKING
    grid = (2 * blocking.tile_rows + 35, 2 * blocking.tile_cols + 26)  # three tiles each way, the last cut
    start = _random_state(*grid, seed=5)
    steps = blocking.depth + 3
    _assert_model(emulate(*start, PARAMS, blocking, steps), start, steps)


def test_every_depth_of_one_halo_matches_the_model():
    start = _random_state(*GRID, seed=1)
    for depth in range(1, 5):
        _assert_model(emulate(*start, PARAMS, Blocking(6, 7, 4, depth), 5), start, 5)


def test_launch_depths_end_with_the_rest():
    assert launch_depths(32, 8) == [8] * 4
    assert launch_depths(32, 5) == [5] * 6 + [2]
    assert launch_depths(3, 5) == [3]
    assert launch_depths(0, 4) == []


def test_strips_cover_the_rows_once():
    for first, end, threads in [(1, 30, 4), (3, 4, 4), (2, 19, 1), (0, 7, 8)]:
        covered = [r for t in range(threads) for r in range(*strip_of(first, end, threads, t))]
        assert covered == list(range(first, end))


def test_a_launch_recomputes_the_halo():
    """Step 1 of 2 computes the 8 x 8 tile and a ring of one cell (10 x 10), step 2 the tile."""
    assert Blocking(8, 8, 2).recomputed() == (10 * 10 + 8 * 8) / (2 * 8 * 8)
    assert Blocking(8, 8, 2, 1).recomputed() == Blocking(8, 8, 1).recomputed() == 1
    assert Blocking(112, 48, 8).recomputed() > Blocking(112, 48, 8, 4).recomputed() > 1


def test_deeper_launches_cross_memory_less_often():
    """One step a launch on a 8 x 8 tile with its one-cell ring: 100 cells read, 64 written, over
    the 64 + 64 of one pass; four steps: a 16 x 16 region read once for four steps."""
    assert Blocking(8, 8, 4, 1).traffic() == (100 / 64 + 1) / 2
    assert Blocking(8, 8, 4).traffic() == (256 / 64 + 1) / 8


def test_blockings_are_validated():
    with pytest.raises(ValueError, match="fuses 1 to halo = 4 steps, not 5"):
        Blocking(8, 8, 4, 5)
    with pytest.raises(ValueError, match="at most 1024 threads"):
        Blocking(threads=(64, 32))
    with pytest.raises(ValueError, match="more than the 232448 a block may have"):
        Blocking(200, 100, 8)


# --- the CUDA kernel on the CPU --------------------------------------------------------------

_MAIN = r"""
#include "cuda_threads_on_cpu.h"
#include "gray_scott.cu"
// argv: rows cols grid_x grid_y threads_x threads_y du dv feed kill dt, then each launch's steps;
// U then V (float32) on stdin, U then V after the launches on stdout.
int main(int argc, char** argv)
{
    const int rows = atoi(argv[1]), cols = atoi(argv[2]);
    const dim3 grid = {(unsigned) atoi(argv[3]), (unsigned) atoi(argv[4]), 1};
    const dim3 block = {(unsigned) atoi(argv[5]), (unsigned) atoi(argv[6]), 1};
    float p[5];
    for (int k = 0; k < 5; ++k) p[k] = (float) atof(argv[7 + k]);
    return launches_from_stdin(rows * cols, argc - 12, argv + 12, [&](float* u, float* v, float* u_next, float* v_next, int steps) {
        launch(grid, block, [&] { gray_scott_fused(u, v, u_next, v_next, rows, cols, p[0], p[1], p[2], p[3], p[4], steps); });
    });
}
"""


def _fused_kernel_on_cpu(tmp_path: Path, blocking: Blocking, u, v, steps: int):
    source = Path(temporal_blocking.__file__).parent
    main = tmp_path / "main.cpp"
    main.write_text(_MAIN)
    program = tmp_path / "fused"
    subprocess.run(["g++", "-O1", "-std=c++17", "-w", "-pthread", f"-I{source}", f"-I{Path(__file__).parent}",
                    *blocking.compile_options(), str(main), "-o", str(program)], check=True, timeout=120)
    rows, cols = u.shape
    p = PARAMS
    arguments = [rows, cols, *blocking.grid(rows, cols), *blocking.threads, p.du, p.dv, p.feed, p.kill, p.dt,
                 *launch_depths(steps, blocking.depth)]
    done = subprocess.run([str(program), *map(str, arguments)], input=np.concatenate((u, v)).tobytes(),
                          capture_output=True, check=True, timeout=120)
    return np.frombuffer(done.stdout, np.float32).reshape(2, rows, cols)


@pytest.mark.skipif(shutil.which("g++") is None, reason="no C++ compiler (g++) to run the CUDA kernel on the CPU")
@pytest.mark.parametrize("blocking", BLOCKINGS[:3], ids=str)
def test_the_fused_cuda_kernel_on_the_cpu_matches_the_model(tmp_path, blocking):
    start = _random_state(*GRID, seed=2)
    steps = 2 * blocking.depth + 1
    _assert_model(_fused_kernel_on_cpu(tmp_path, blocking, *start, steps), start, steps)


# --- the persistent kernel on the CPU ---------------------------------------------------------

_PERSISTENT_MAIN = r"""
#include "cuda_threads_on_cpu.h"
#include "gray_scott.cu"
#include "persistent_on_cpu.cu"
// argv: rows cols tile_rows tile_cols halo depth strip du dv feed kill dt, then each launch's steps;
// U then V (float32) on stdin, U then V after the launches on stdout.
int main(int argc, char** argv)
{
    const int rows = atoi(argv[1]), cols = atoi(argv[2]);
    const int tile_rows = atoi(argv[3]), tile_cols = atoi(argv[4]), halo = atoi(argv[5]), depth = atoi(argv[6]);
    const int strip = atoi(argv[7]);
    const dim3 grid = {(unsigned) ((cols + tile_cols - 1) / tile_cols), (unsigned) ((rows + tile_rows - 1) / tile_rows), 1};
    const size_t shared = 2 * (tile_rows + 2 * halo) * (tile_cols + 2 * halo);
    float p[5];
    for (int k = 0; k < 5; ++k) p[k] = (float) atof(argv[8 + k]);
    return launches_from_stdin(rows * cols, argc - 13, argv + 13, [&](float* u, float* v, float* u_next, float* v_next, int steps) {
        launch_cooperative(grid, {PERSISTENT_THREADS, 1, 1}, shared, [&] {
            gray_scott_persistent(u, v, u_next, v_next, rows, cols, p[0], p[1], p[2], p[3], p[4], steps,
                                  tile_rows, tile_cols, halo, depth, strip);
        });
    });
}
"""


def _persistent_kernel_on_cpu(tmp_path: Path, tiles: OnChip, u, v, launches: list[int]):
    """(U, V) after one cooperative launch of the persistent kernel for each of `launches` (its
    steps), every thread of every block a thread of the CPU. The kernel's dynamic shared memory
    is rewritten as the course's checkers do (gs_course.lessons.cuda_on_cpu), here one arena a block."""
    source = Path(persistent_tiles.__file__).parent
    (tmp_path / "persistent_on_cpu.cu").write_text(cuda_on_cpu.shared_memory_as_cpu((source / "persistent.cu").read_text()))
    (tmp_path / "main.cpp").write_text(_PERSISTENT_MAIN)
    program = tmp_path / "persistent"
    # tests/ first: its cooperative_groups.h stands for CUDA's.
    subprocess.run(["g++", "-O1", "-std=c++17", "-w", "-pthread", f"-I{Path(__file__).parent}", f"-I{source}",
                    f"-I{tmp_path}", *tiles.compile_options(), str(tmp_path / "main.cpp"), "-o", str(program)],
                   check=True, timeout=120)
    rows, cols = u.shape
    p = PARAMS
    arguments = [rows, cols, tiles.tile_rows, tiles.tile_cols, tiles.halo, tiles.depth, tiles.strip, p.du, p.dv, p.feed,
                 p.kill, p.dt, *launches]
    done = subprocess.run([str(program), *map(str, arguments)], input=np.concatenate((u, v)).tobytes(),
                          capture_output=True, check=True, timeout=120)
    return np.frombuffer(done.stdout, np.float32).reshape(2, rows, cols)


# On 13 x 22: a barrier every step; an exchange every 2 steps with a ring of 3 (so that the last
# phase of a launch is shorter); tiles smaller than their ring, the last ones cut by the grid's
# edge; one block alone (no neighbour); strips longer than the tiles; tiles of one row; chunks of
# one row, chunks that do not divide the strip, chunks longer than it; for_grid's choice (the
# default ring and chunk) for 4 blocks of 32 threads at most.
ON_CHIP = [OnChip(5, 8, halo=1, strip=2, chunk=1), OnChip(4, 7, halo=3, depth=2, strip=3, chunk=2),
           OnChip(3, 5, halo=4, strip=4), OnChip(13, 22, halo=2, strip=5, chunk=2), OnChip(6, 9, halo=2, strip=16, chunk=3),
           OnChip(1, 2, halo=2, strip=3, chunk=8), OnChip(7, 11, halo=1, strip=7, chunk=3),
           OnChip.for_grid(13, 22, 4, max_threads=32)]


@pytest.mark.skipif(shutil.which("g++") is None, reason="no C++ compiler (g++) to run the CUDA kernel on the CPU")
@pytest.mark.parametrize("tiles", ON_CHIP, ids=str)
def test_the_persistent_cuda_kernel_on_the_cpu_matches_the_model(tmp_path, tiles):
    """Launches of 7 steps (more than one phase, the last shorter), 1 step and 2; dt = 0.7."""
    start = _random_state(13, 22, seed=6)
    _assert_model(_persistent_kernel_on_cpu(tmp_path, tiles, *start, [7, 1, 2]), start, 10)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="no CUDA compiler (nvcc) here")
def test_the_persistent_kernel_compiles_as_cuda_for_an_h200(tmp_path):
    """What g++ does not check: CUDA's own cooperative_groups.h and __launch_bounds__, for sm_90,
    with the course grid's compile options."""
    source = Path(persistent_tiles.__file__).parent
    (tmp_path / "both.cu").write_text((source / "gray_scott.cu").read_text() + (source / "persistent.cu").read_text())
    built = subprocess.run(["nvcc", "-arch=sm_90", "-cubin", "-std=c++17", *OnChip.for_grid(1080, 1920, 132).compile_options(),
                            "-o", str(tmp_path / "both.cubin"), str(tmp_path / "both.cu")],
                           capture_output=True, text=True, timeout=120)
    assert built.returncode == 0, built.stderr


def test_the_course_grid_stays_on_chip_of_an_h200():
    """1080 x 1920 on 132 SMs: 11 x 12 tiles of 90 x 175 cells (15,750, the fewest any tiling
    gives the largest block), under 227 KB of shared memory and 1,024 threads a block."""
    tiles = OnChip.for_grid(1080, 1920, 132)
    assert (tiles.tile_rows, tiles.tile_cols) == (90, 175) and tiles.grid(1080, 1920) == (11, 12)
    assert tiles.threads <= persistent_tiles.MAX_THREADS and tiles.shared_bytes <= temporal_blocking.MAX_SHARED_BYTES
    # the strips cover the region but its outermost ring, with fewer than one strip of threads to spare
    rows, cols = tiles.region
    assert (cols - 2) * (tiles.threads // (cols - 2)) * tiles.strip >= (cols - 2) * (rows - 2)
    assert (tiles.threads // (cols - 2) - 1) * tiles.strip < rows - 2


def test_tiles_cover_any_grid_with_the_blocks_given():
    for rows, cols, blocks in [(13, 22, 6), (61, 83, 132), (16, 1000, 7), (1000, 16, 132), (17, 19, 1)]:
        tiles = OnChip.for_grid(rows, cols, blocks, halo=2)
        blocks_x, blocks_y = tiles.grid(rows, cols)
        assert blocks_x * blocks_y <= blocks
        assert (blocks_x - 1) * tiles.tile_cols < cols <= blocks_x * tiles.tile_cols
        assert (blocks_y - 1) * tiles.tile_rows < rows <= blocks_y * tiles.tile_rows


def test_a_grid_too_big_for_the_chip_is_refused_in_one_line():
    with pytest.raises(NotOnChip, match=r"^a 2048 x 2048 grid in tiles of 171 x 187 needs 279,240 bytes of shared "
                                        r"memory a block, more than the 232,448 a block may have$"):
        OnChip.for_grid(2048, 2048, 132, halo=4)
    with pytest.raises(NotOnChip, match="needs 9 blocks resident at once, more than the 6 the GPU can hold"):
        OnChip(5, 8).check_fits(13, 22, resident_blocks=6)
    with pytest.raises(NotOnChip, match="needs 10000 threads a block, more than 1024"):
        OnChip(100, 100, halo=1, strip=1).check_fits(100, 100)
    with pytest.raises(ValueError, match=r"every 1 to halo steps \(a ring of 2\), not 3$"):
        OnChip(8, 8, halo=2, depth=3)
    for wrong in ({"tile_rows": 0}, {"halo": 0}, {"strip": 0}, {"chunk": 0}):
        with pytest.raises(ValueError, match="tiles, strips and chunks of at least one cell"):
            OnChip(**{"tile_rows": 8, "tile_cols": 8, **wrong})


# --- on the GPU, and JAX's Pallas kernel -------------------------------------------------------

def _gpu_blockings():
    return [Blocking(8, 5, 3, threads=(4, 2)), Blocking(7, 4, 2, 2, threads=(3, 3)),
            Blocking(30, 13, 5, 3, threads=(32, 2)), temporal_blocking.BLOCKING]


@pytest.mark.gpu
@pytest.mark.parametrize("grid", [(37, 53), (61, 24), (203, 517)])
def test_cupy_multistep_matches_the_model_at_every_depth(grid):
    """Small blockings and the default one; on the largest grid, the default's tiles meet too."""
    if not backends.probe("cupy").on_gpu:
        pytest.skip(f"no GPU: {backends.probe('cupy').reason}")
    from gs_course.backends import cupy_backend

    start = _random_state(*grid, seed=3)
    for blocking in _gpu_blockings():
        for depth in sorted({1, 2, blocking.halo - 1, blocking.halo} - {0}):
            sim = cupy_backend.CupyMultistep(PARAMS, *grid, dataclasses.replace(blocking, depth=depth))
            sim.set_state(*start)
            for steps in (depth + 1, 0, 1, 2 * depth + 3):  # pieces that do not divide by the depth
                sim.advance(steps)
            _assert_model(sim.fetch(), start, 3 * depth + 5)


def _cupy_on_gpu():
    if not backends.probe("cupy").on_gpu:
        pytest.skip(f"no GPU: {backends.probe('cupy').reason}")
    from gs_course.backends import cupy_backend

    return cupy_backend


def _gpu_on_chip(grid, sms):
    """The default tiles (one block an SM, HALO), a barrier every step, an exchange every 2 steps
    with a ring of 3; on the small grids also tiles of a few cells, smaller than their ring."""
    tilings = [None, OnChip.for_grid(*grid, sms, halo=1), OnChip.for_grid(*grid, sms, halo=3, depth=2)]
    if grid[0] * grid[1] < 5000:
        tilings += [OnChip(5, 8, halo=1, strip=2, chunk=1), OnChip(7, 11, halo=3, depth=2, strip=4, chunk=3),
                    OnChip(6, 5, halo=5, strip=32, chunk=8)]
    return tilings


@pytest.mark.gpu
@pytest.mark.parametrize("grid", [(37, 53), (61, 24), (203, 517)])
def test_cupy_persistent_matches_the_model_for_any_steps(grid):
    """Advances that end inside a phase between two exchanges, of one step, and of none."""
    cupy_backend = _cupy_on_gpu()
    import cupy

    start = _random_state(*grid, seed=7)
    for tiles in _gpu_on_chip(grid, cupy.cuda.Device().attributes["MultiProcessorCount"]):
        sim = cupy_backend.CupyPersistent(PARAMS, *grid, *([tiles] if tiles else []))
        assert sim.tiles is not None, f"{tiles} fell back to multistep"
        depth = sim.tiles.depth
        sim.set_state(*start)
        for steps in (depth + 1, 0, 1, 2 * depth + 3):
            sim.advance(steps)
        _assert_model(sim.fetch(), start, 3 * depth + 5)


@pytest.mark.gpu
def test_cupy_persistent_keeps_the_course_grid_on_chip():
    """1080 x 1920 with the default tiles (one block an SM): every block resident, the model's
    values after a launch of two phases and a shorter third."""
    cupy_backend = _cupy_on_gpu()
    start = _random_state(1080, 1920, seed=8)
    sim = cupy_backend.CupyPersistent(PARAMS, 1080, 1920)
    assert sim.tiles is not None
    sim.set_state(*start)
    sim.advance(2 * sim.tiles.depth + 1)
    _assert_model(sim.fetch(), start, 2 * sim.tiles.depth + 1)


@pytest.mark.gpu
def test_cupy_persistent_runs_multistep_where_the_grid_is_too_big(capfd):
    cupy_backend = _cupy_on_gpu()
    sim = cupy_backend.CupyPersistent(PARAMS, 2048, 2048)
    line = capfd.readouterr().err.strip()
    assert sim.tiles is None and line.startswith("cupy/persistent: a 2048 x 2048 grid in tiles of ")
    assert line.endswith(": running cupy/multistep instead") and "\n" not in line
    start = _random_state(2048, 2048, seed=9)
    sim.set_state(*start)
    sim.advance(3)
    _assert_model(sim.fetch(), start, 3)


@pytest.mark.parametrize("block", [(8, 16), (32, 32)], ids=str)
def test_jax_pallas_blocks_match_the_model(block):
    """Blocks that do not divide the grid, and one larger than it; in Pallas's interpreter on a CPU."""
    from gs_course.backends import jax_one_device

    start = _random_state(*GRID, seed=4)
    sim = jax_one_device.JaxPallas(PARAMS, *GRID, jax_pallas.PallasOptions(tuple(block)))
    sim.set_state(*start)
    for steps in (2, 0, 3):
        sim.advance(steps)
    _assert_model(sim.fetch(), start, 5)


# --- the L2 yardstick in the benchmark ---------------------------------------------------------

def _bench_results(l2: bool) -> dict:
    """A benchmark record as a GPU run writes it: one pass at 4,000 GB/s, the L2 copy at 10,000."""
    from gs_course.measurement import bench

    workload = bench.FULL
    floor_s = workload.steps * workload.bytes_moved_per_step / 4e12
    l2_floor_s = workload.steps * workload.bytes_moved_per_step / 1e13 if l2 else None
    case = {"name": "cupy/multistep", "backend": "cupy", "formulation": "multistep", "mode": "compute",
            "on_gpu": True, "status": "ok", "seconds": 0.2, "min_s": 0.19, "max_s": 0.21, "compile_s": 0.5,
            "extrapolated": False, "us_per_step": 0.2 / workload.steps * 1e6,
            "x_floor": 0.2 / floor_s, "x_l2": 0.2 / l2_floor_s if l2 else None}
    return records.record(bench.KIND, {
        "workload": workload.as_dict(), "repeats": 3, "device_copy_gbps": 4000.0, "floor_s": floor_s,
        **({"l2_copy_gbps": 10000.0, "l2_copy_bytes": workload.bytes_moved_per_step // 2, "l2_floor_s": l2_floor_s}
           if l2 else {}),
        "isolated": True, "backends": {"cupy": "14.2"}, "unavailable": {}, "cases": [case]}, schema=bench.SCHEMA)


def test_the_benchmark_gives_both_yardsticks():
    from gs_course.measurement import bench

    results = _bench_results(l2=True)
    x_floor, x_l2 = (results["cases"][0][key] for key in ("x_floor", "x_l2"))
    assert x_l2 == pytest.approx(2.5 * x_floor)
    text = bench.table(results)
    assert f"{x_floor:>7.1f} x one pass {x_l2:>7.1f} x L2 copy" in text
    assert "the same bytes at the L2 copy rate: " in text and "between two buffers of 16.6 MB" in text
    table = bench.markdown(results)
    assert "| x one pass through memory | x L2 copy | x writing alone |" in table
    assert f" {x_floor:.1f} | {x_l2:.1f} | |" in table


def test_a_benchmark_without_the_l2_copy_keeps_its_table():
    """A result file written before the L2 yardstick renders as it did."""
    from gs_course.measurement import bench

    table = bench.markdown(_bench_results(l2=False))
    assert "L2" not in table and "| x one pass through memory | x writing alone |" in table


def test_the_copy_rates_are_measured_on_a_gpu_and_none_without():
    """The benchmark's two yardsticks, the device copy's rate and the L2 copy's: both measured and
    positive on a GPU (how they compare depends on its L2 cache: the H200's are in results/), both
    None without CuPy, where the benchmark's table leaves their lines out."""
    from gs_course.measurement import bench

    device, l2 = bench.copy_rates(bench.FULL.bytes_moved_per_step // 2)
    if backends.probe("cupy").ok:
        assert device > 0 and l2 > 0
    else:
        assert (device, l2) == (None, None)
