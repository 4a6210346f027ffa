"""Several processes joined by `jax.distributed.initialize` (gs_course.distributed), rehearsed on
the CPU: each process makes 2 CPU devices, the collectives go through gloo over TCP, exactly as
they would between the nodes of a cluster.

`gs-course run --processes N` on small grids whose bands are odd (5 rows on 4 devices, 3 on 6),
dt 0.7, every image of the file process 0 writes against the float64 reference; the same
command started twice by hand with the variables `srun` sets for 2 tasks on this host; a process
killed in the middle of a run, process 0 failing alone, a process that ignores SIGTERM: the run
stops and one line names the process; bad input, refused in one line; which launcher started a
process, read from its variables; the launcher's share of a GPU machine's GPUs (GPUs made up).
"""

import os
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from gs_course import cli, distributed
from gs_course.devices import Gpu
from gs_course.model import PARITY_ATOL, initial_state, reference_step
from gs_course.output import read_frames
from gs_course.parameters import Parameters

PARAMS = Parameters(feed=0.03, kill=0.06, dt=0.7)
COLS, IMAGES, STEPS = 37, 3, 100
#: Rows for each process count (2 devices each): bands of 5 and of 3 rows, which the pattern
#: crosses within the run (tests/test_jax_sharded.py asserts that kind of thing for its grids).
ROWS = {2: 20, 3: 18}
GS_COURSE = [sys.executable, "-m", "gs_course.cli"]



@pytest.fixture(autouse=True)
def rehearsed_on_the_cpu(monkeypatch):
    """These tests rehearse several processes on CPU devices, also on a machine with GPUs (the
    GPU test host has one: JAX_PLATFORMS=cpu is what counts CPU devices, not GPUs)."""
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")

def run_options(rows: int, formulation: str, output: Path) -> list[str]:
    return ["run", "--backend", "jax", "--formulation", formulation, "-r", str(rows), "-c", str(COLS),
            "-n", str(IMAGES), "-e", str(STEPS), "-f", str(PARAMS.feed), "-k", str(PARAMS.kill),
            "-t", str(PARAMS.dt), "-o", str(output), "--no-progress", "--local-devices", "2"]


def environment(**extra) -> dict:
    """The course's JAX settings, without any device count a caller's XLA_FLAGS may force."""
    env = {name: value for name, value in os.environ.items() if name not in ("XLA_FLAGS",)}
    return dict(env, JAX_PLATFORMS="cpu", **extra)


def reference_images(rows: int) -> list[np.ndarray]:
    u, v = initial_state(rows, COLS, np.float64)
    images = []
    for _ in range(IMAGES):
        for _ in range(STEPS):
            u, v = reference_step(u, v, PARAMS)
        images.append(v)
    return images


def assert_matches_the_reference(output: Path, rows: int, bands: int) -> None:
    frames, _ = read_frames(output)
    expected = reference_images(rows)
    assert frames.shape == (IMAGES, rows, COLS)
    for frame, v in zip(frames, expected):
        np.testing.assert_allclose(frame, v, rtol=0, atol=PARITY_ATOL)
    height = rows // bands
    assert height % 2 == 1
    for border in range(height, rows, height):  # V has grown on both sides of every border
        assert expected[-1][border - 1].max() > 0.05 and expected[-1][border].max() > 0.05, border


@pytest.mark.parametrize("processes, formulation", [(3, "sharded-deep"), (2, "sharded")])
def test_processes_launched_here_match_the_reference(processes, formulation, tmp_path):
    """The fast formulation and the tutorial's exchange (2 processes of sharded-deep: the srun test)."""
    output = tmp_path / "run.h5"
    done = subprocess.run([*GS_COURSE, *run_options(ROWS[processes], formulation, output),
                           "--processes", str(processes)], capture_output=True, text=True, env=environment(),
                          timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"{processes} processes started by gs-course, 2 CPU devices each, {2 * processes} in all" in done.stdout
    assert done.stdout.count("Gray-Scott") == 1  # process 0 alone speaks
    assert_matches_the_reference(output, ROWS[processes], 2 * processes)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["run.h5"]


def free_slurm_job_id() -> int:
    """A job id whose port (JAX's SlurmCluster: 61440 + id % 4096) nobody listens on now."""
    while True:
        job = random.randrange(10_000, 1_000_000)
        with socket.socket() as probe:
            try:
                probe.bind(("", 61440 + job % 4096))
            except OSError:
                continue
        return job


def test_processes_started_by_srun_match_the_reference(tmp_path):
    """Two tasks on this host as `srun -n 2 gs-course run ...` starts them: JAX finds the
    coordinator (the step's first node) and each process's rank in Slurm's variables."""
    node = socket.gethostname()
    try:
        socket.gethostbyname(node)
    except OSError:
        node = "localhost"
    slurm = {"SLURM_JOB_ID": str(free_slurm_job_id()), "SLURM_NTASKS": "2", "SLURM_NPROCS": "2",
             "SLURM_STEP_NODELIST": node, "SLURM_JOB_NODELIST": node, "SLURM_NODELIST": node,
             "SLURM_STEP_NUM_NODES": "1", "SLURM_NNODES": "1", "SLURM_NODEID": "0", "SLURM_STEP_ID": "0",
             "SLURM_STEP_NUM_TASKS": "2", "SLURM_TASKS_PER_NODE": "2", "SLURM_STEP_TASKS_PER_NODE": "2"}
    output = tmp_path / "run.h5"
    tasks = [subprocess.Popen([*GS_COURSE, *run_options(ROWS[2], "sharded-deep", output)], cwd=tmp_path,
                              env=environment(**slurm, SLURM_PROCID=str(rank), SLURM_LOCALID=str(rank)),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for rank in range(2)]
    try:
        said = [task.communicate(timeout=120) for task in tasks]
    finally:
        for task in tasks:
            task.kill()
    assert [task.returncode for task in tasks] == [0, 0], [err[-2000:] for _, err in said]
    assert "2 processes started by srun, 2 CPU devices each, 4 in all" in said[0][0]
    assert "Gray-Scott" not in said[1][0]
    assert_matches_the_reference(output, ROWS[2], 4)


def children(pid: int) -> list[int]:
    return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def process_id(pid: int) -> str:
    environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return next(entry for entry in environ if entry.startswith(b"GS_COURSE_PROCESS_ID=")).decode().split("=")[1]


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="finds the launcher's children in /proc (Linux)")
def test_a_process_killed_during_the_run_stops_the_others_in_one_line(tmp_path):
    options = run_options(ROWS[2], "sharded-deep", tmp_path / "run.h5")
    options[options.index("-n") + 1] = "100000"  # would run for minutes
    launcher = subprocess.Popen([*GS_COURSE, *options, "--processes", "2"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=environment(), cwd=tmp_path)
    try:
        assert "Gray-Scott" in launcher.stdout.readline() + launcher.stdout.readline()  # both have joined
        second = next(pid for pid in children(launcher.pid) if process_id(pid) == "1")
        os.kill(second, signal.SIGKILL)
        killed = time.monotonic()
        _, err = launcher.communicate(timeout=60)
    finally:
        launcher.kill()
    assert time.monotonic() - killed < 30
    assert launcher.returncode == 128 + signal.SIGKILL
    assert err.strip().splitlines()[-1] == "gs-course: error: process 1 of 2 was killed (SIGKILL); the others were stopped"


@pytest.mark.parametrize("options, line", [
    (["--processes", "0"], "--processes 0: use 1 or more"),
    (["--processes", "2", "--local-devices", "0"], "--local-devices 0: use 1 or more"),
    (["--processes", "2", "--backend", "numpy"], "several processes run the jax backend on a grid they all know: "
     "give --backend jax, -r, -c and -n (and --formulation sharded-deep, or another sharded one)"),
    (["--processes", "3", "--local-devices", "2"], "20 rows do not split into 6 equal bands, one per device of the "
     "3 processes: use a row count divisible by 6, such as 18 or 24, or fewer processes or devices"),
])
def test_bad_process_options_are_refused_in_one_line(options, line, capsys):
    argv = ["run", "--backend", "jax", "--formulation", "sharded-deep", "-r", "20", "-c", "37", "-n", "1", *options]
    assert cli.main(argv) == cli.EXIT_USAGE
    assert capsys.readouterr().err == f"gs-course: error: {line}\n"


def test_process_0_failing_alone_stops_the_others_at_once(tmp_path):
    """Process 0 alone checks the output file: it fails while the others go on to the run, whose
    first image they cannot gather without it; it says why in one line and leaves at once."""
    options = run_options(ROWS[2], "sharded-deep", tmp_path / "missing" / "run.h5")
    started = time.monotonic()
    done = subprocess.run([*GS_COURSE, *options, "--processes", "2"], capture_output=True, text=True,
                          env=environment(), timeout=120, cwd=tmp_path)
    assert time.monotonic() - started < 60
    assert done.returncode == cli.EXIT_USAGE
    assert done.stderr == f"gs-course: error: cannot write {tmp_path}/missing/run.h5: folder {tmp_path}/missing does not exist\n"


def test_a_formulation_of_one_process_is_refused_in_one_line(tmp_path):
    """Said by the processes once joined (one here: the launcher's run of one process is the same path)."""
    options = run_options(ROWS[2], "slices", tmp_path / "run.h5")
    done = subprocess.run([*GS_COURSE, *options, "--processes", "1"], capture_output=True, text=True,
                          env=environment(), timeout=120, cwd=tmp_path)
    assert done.returncode == cli.EXIT_USAGE
    assert done.stderr == ("gs-course: error: --formulation slices runs in one process: use sharded-deep, "
                           "or another sharded formulation, with several processes\n")


def test_mpirun_without_the_coordinator_address_is_told_how_to_give_it(tmp_path):
    """Open MPI 5 sets its ranks' variables but not the one JAX's detection reads for process 0's address."""
    options = run_options(ROWS[2], "sharded-deep", tmp_path / "run.h5")
    done = subprocess.run([*GS_COURSE, *options], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env=environment(OMPI_COMM_WORLD_SIZE="2", OMPI_COMM_WORLD_RANK="1",
                                          OMPI_COMM_WORLD_LOCAL_RANK="1"))
    assert done.returncode == cli.EXIT_USAGE
    assert done.stderr == ("gs-course: error: mpirun: tell every rank where process 0 listens: mpirun -x "
                           "JAX_COORDINATOR_ADDRESS=FIRST_NODE:PORT ...\n")


STUBBORN = """
import os, pathlib, signal, sys, time
pid_file = pathlib.Path(sys.argv[1])
if os.environ["GS_COURSE_PROCESS_ID"] == "1":
    while not pid_file.exists():
        time.sleep(0.01)
    sys.exit(3)
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # as a run does, to finish its image first
pid_file.write_text(str(os.getpid()))
time.sleep(120)
"""


def test_the_launcher_stops_the_others_when_one_fails_and_says_which(tmp_path, capfd):
    """Process 0 waits (as for a peer that never joins) and ignores SIGTERM: killed after the grace."""
    pid_file = tmp_path / "pid"
    started = time.monotonic()
    code = distributed.launch([sys.executable, "-c", STUBBORN, str(pid_file)], 2)
    assert time.monotonic() - started < distributed.STOP_GRACE_S + 20
    assert code == 3
    assert capfd.readouterr().err == "gs-course: error: process 1 of 2 failed (exit code 3); the others were stopped\n"
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


SAYS_ITS_GPUS = """
import os, pathlib, sys
rank = os.environ["GS_COURSE_PROCESS_ID"]
pathlib.Path(sys.argv[1], rank).write_text(os.environ["CUDA_VISIBLE_DEVICES"])
"""


def test_on_a_gpu_machine_each_process_is_given_its_share_of_the_gpus(tmp_path, monkeypatch):
    """The launcher's share of the GPUs, with the machine's GPUs made up (no GPU is used)."""
    made_up = tuple(Gpu(index, "H200", "580", "13.0", 2**37, 2**37) for index in (2, 3, 5, 7))
    monkeypatch.setattr(distributed, "gpus", lambda: made_up)
    monkeypatch.delenv("JAX_PLATFORMS")  # JAX on its GPUs: the processes' share is of them
    assert distributed.launch([sys.executable, "-c", SAYS_ITS_GPUS, str(tmp_path)], 2) == 0
    assert [(tmp_path / rank).read_text() for rank in "01"] == ["2,3", "5,7"]
    assert distributed.check_counts(4, None) == 1 and distributed.check_counts(2, 1) == 1
    with pytest.raises(distributed.DistributedError, match="^3 processes of 2 GPUs each need 6 GPUs: this machine has 4$"):
        distributed.check_counts(3, 2)
    with pytest.raises(distributed.DistributedError, match="^8 processes of 1 GPUs each need 8 GPUs"):
        distributed.check_counts(8, None)


def test_with_jax_on_the_cpu_the_processes_rehearse_on_cpu_devices_whatever_gpus_are_here(monkeypatch):
    monkeypatch.setattr(distributed, "gpus", lambda: (Gpu(0, "H200", "580", "13.0", 2**37, 2**37),))
    assert distributed.check_counts(3, 2) == 2, "JAX_PLATFORMS=cpu (the fixture): CPU devices, not the one GPU"
    monkeypatch.delenv("JAX_PLATFORMS")
    with pytest.raises(distributed.DistributedError, match="need 6 GPUs: this machine has 1"):
        distributed.check_counts(3, 2)


SRUN_TASK = {"SLURM_JOB_ID": "4242", "SLURM_STEP_NODELIST": "node[001-002]", "SLURM_PROCID": "3", "SLURM_LOCALID": "1"}


@pytest.mark.parametrize("env, expected", [
    ({}, None),
    ({**SRUN_TASK, "SLURM_NTASKS": "4"}, ("srun", 4, 3)),
    ({**SRUN_TASK, "SLURM_NTASKS": "1"}, None),  # one task runs alone
    ({"SLURM_JOB_ID": "4242", "SLURM_NTASKS": "4", "SLURM_JOB_NODELIST": "node[001-002]"}, None),  # salloc, no step
    ({"OMPI_COMM_WORLD_SIZE": "4", "OMPI_COMM_WORLD_RANK": "2"}, ("mpirun", 4, 2)),
    ({"OMPI_COMM_WORLD_SIZE": "1", "OMPI_COMM_WORLD_RANK": "0"}, None),
    ({"GS_COURSE_PROCESSES": "3", "GS_COURSE_PROCESS_ID": "1", **SRUN_TASK, "SLURM_NTASKS": "4"}, ("gs-course", 3, 1)),
])
def test_who_started_this_process(env, expected):
    found = distributed.started_by(env)
    assert (found and (found.launcher, found.processes, found.process_id)) == expected
