"""Several processes, one program: JAX's multi-process runs, on this machine or on a cluster.

Every process runs the same program on the devices it holds (a node's GPUs, or CPU devices in a
rehearsal); `jax.distributed.initialize` joins them before JAX starts its devices: process 0
runs a coordinator the others connect to, every process then sees every device, and the
collectives of a compiled program (the halo exchange's `ppermute`, the gather of an image) travel
between processes: over NVLink or the network between GPUs, through gloo over TCP between CPU
processes.

Who starts the processes, and how each learns who it is:
- `launch` (`gs-course run --processes N`): N children on this machine, the coordinator on
  localhost, told through `GS_COURSE_PROCESSES`, `GS_COURSE_PROCESS_ID` and JAX's own
  `JAX_COORDINATOR_ADDRESS`; when one fails, the launcher stops the others and says which failed.
- Slurm's `srun`: JAX reads Slurm's variables itself (`SLURM_PROCID`, `SLURM_NTASKS`, the step's
  first node as the coordinator).
- Open MPI's `mpirun`: the rank and size from `OMPI_COMM_WORLD_*`; the coordinator from
  `JAX_COORDINATOR_ADDRESS` (exported to every rank) or, with Open MPI 4, from mpirun's own address.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

from .devices import gpus

#: Set by `launch` for each child (JAX_COORDINATOR_ADDRESS too).
PROCESSES, PROCESS_ID = "GS_COURSE_PROCESSES", "GS_COURSE_PROCESS_ID"
#: Where JAX finds process 0's address under mpirun: exported by hand, or Open MPI 4's own.
MPIRUN_COORDINATOR = ("JAX_COORDINATOR_ADDRESS", "OMPI_MCA_orte_hnp_uri")
#: Every Slurm variable JAX's Slurm detection reads; present only inside an `srun` step.
SLURM_STEP = ("SLURM_JOB_ID", "SLURM_STEP_NODELIST", "SLURM_NTASKS", "SLURM_PROCID", "SLURM_LOCALID")
#: Seconds a process waits for the others to join, and without news of one, before JAX aborts it
#: (SIGABRT, with its reason): a process that never started, or froze, ends the run instead of
#: hanging it (both seen here, with a process left out and one stopped by SIGSTOP).
JOIN_TIMEOUT_S, HEARTBEAT_TIMEOUT_S = 60, 20
#: Seconds the launcher gives the other processes to stop once one has failed, before killing them.
STOP_GRACE_S = 3


class DistributedError(RuntimeError):
    """Processes that cannot be started or joined: one line that says what to do."""


@dataclasses.dataclass(frozen=True)
class Cluster:
    """This process's place among several: who started them, how many, which one this is."""

    launcher: str
    processes: int
    process_id: int


def started_by(env=os.environ) -> Cluster | None:
    """The launcher that started this process as one of several (None: a process on its own;
    one Slurm task or one MPI rank is on its own too)."""
    if PROCESS_ID in env:
        return Cluster("gs-course", int(env[PROCESSES]), int(env[PROCESS_ID]))
    if all(name in env for name in SLURM_STEP) and int(env["SLURM_NTASKS"]) > 1:
        return Cluster("srun", int(env["SLURM_NTASKS"]), int(env["SLURM_PROCID"]))
    if int(env.get("OMPI_COMM_WORLD_SIZE", "1")) > 1:
        return Cluster("mpirun", int(env["OMPI_COMM_WORLD_SIZE"]), int(env["OMPI_COMM_WORLD_RANK"]))
    return None


def join(local_devices: int | None = None, join_timeout_s: int = JOIN_TIMEOUT_S,
         heartbeat_timeout_s: int = HEARTBEAT_TIMEOUT_S) -> Cluster | None:
    """Join the other processes of this run, if a launcher started several (`started_by`), before
    anything starts JAX's devices. `local_devices`: CPU devices this process makes (a rehearsal
    of several nodes on the CPU; GPUs are the ones each process is given). Returns this process's
    `Cluster`, or None when it runs alone."""
    import jax

    if local_devices is not None:
        jax.config.update("jax_num_cpu_devices", local_devices)
    cluster = started_by()
    if cluster is None:
        return None
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    timeouts = {"initialization_timeout": join_timeout_s, "heartbeat_timeout_seconds": heartbeat_timeout_s}
    if cluster.launcher == "gs-course":
        jax.distributed.initialize(os.environ["JAX_COORDINATOR_ADDRESS"], cluster.processes, cluster.process_id,
                                   cluster_detection_method="deactivate", **timeouts)
    elif cluster.launcher == "srun":
        jax.distributed.initialize(cluster_detection_method="slurm", **timeouts)
    else:  # one GPU a rank, as JAX's own Open MPI detection (Open MPI 4's alone) would choose
        if not any(name in os.environ for name in MPIRUN_COORDINATOR):
            # Asked without an address, JAX's client aborted the process on the GPU host (signal 6)
            # where it raised a ValueError here: say what to do before JAX is asked.
            raise DistributedError("mpirun: tell every rank where process 0 listens: mpirun -x "
                                   "JAX_COORDINATOR_ADDRESS=FIRST_NODE:PORT ...")
        local = os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK")
        jax.distributed.initialize(num_processes=cluster.processes, process_id=cluster.process_id,
                                   local_device_ids=None if local is None else [int(local)], **timeouts)
    return cluster


def describe(cluster: Cluster) -> str:
    """One line: how many processes joined, through which launcher, with how many devices."""
    import jax

    return (f"{cluster.processes} processes started by {cluster.launcher}, {jax.local_device_count()} "
            f"{jax.devices()[0].platform.upper()} devices each, {jax.device_count()} in all")


def free_port() -> int:
    """A TCP port nobody listens on here now, for the coordinator."""
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        return probe.getsockname()[1]


def uneven_bands(rows: int, devices: int, processes: int) -> str | None:
    """What is wrong with `rows` split in one band per device of several processes, which must
    all hold bands, or None where the rows split evenly."""
    if rows % devices == 0:
        return None
    low = rows - rows % devices
    return (f"{rows} rows do not split into {devices} equal bands, one per device of the {processes} processes: "
            f"use a row count divisible by {devices}, such as {low} or {low + devices}, or fewer processes or devices")


def check_counts(processes: int, local_devices: int | None, rows: int | None = None) -> int:
    """The devices each process holds (default: on the CPU one; with GPUs, an equal share of
    them), or a DistributedError (also for `rows` that do not split over all the devices)."""
    if processes < 1:
        raise DistributedError(f"--processes {processes}: use 1 or more")
    if local_devices is not None and local_devices < 1:
        raise DistributedError(f"--local-devices {local_devices}: use 1 or more")
    # JAX_PLATFORMS=cpu: the processes rehearse on CPU devices, whatever GPUs the machine has
    found = 0 if os.environ.get("JAX_PLATFORMS", "").strip() == "cpu" else len(gpus())
    if not found:
        share = local_devices or 1
    else:
        share = local_devices or found // processes
        if share < 1 or share * processes > found:
            raise DistributedError(f"{processes} processes of {max(share, 1)} GPUs each need {processes * max(share, 1)} "
                                   f"GPUs: this machine has {found}")
    if rows is not None and (problem := uneven_bands(rows, processes * share, processes)):
        raise DistributedError(problem)
    return share


class GatherOnly:
    """The image writer of a process other than 0: it takes its part in gathering each image (a
    collective, which every process joins), and leaves the writing to process 0."""

    def write(self, image) -> None:
        pass


def leave(code: int) -> None:
    """End this process now with `code`: a process that fails must not wait at exit for the others
    (JAX's orderly shutdown does), which wait for it in the program's next collective."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def launch(command: list[str], processes: int, local_devices: int | None = None, quiet_code: int | None = None,
           poll_s: float = 0.05) -> int:
    """Run `command` as `processes` processes on this machine, joined by a coordinator on localhost
    (each one calls `join`): 0 when all succeed. When one fails, the others are stopped, its
    standard error is shown, and one line says which one failed (not for `quiet_code`, bad input
    that every process refuses alike); its exit code is returned.
    Process 0's standard output is this one's; the others' is dropped (they print nothing).
    On a GPU machine each process is given its share of the GPUs (CUDA_VISIBLE_DEVICES)."""
    share = check_counts(processes, local_devices)
    visible = [gpu.index for gpu in gpus()]
    address = f"localhost:{free_port()}"
    children, errors = [], []
    for rank in range(processes):
        env = dict(os.environ, JAX_COORDINATOR_ADDRESS=address, **{PROCESSES: str(processes), PROCESS_ID: str(rank)})
        if visible:
            env["CUDA_VISIBLE_DEVICES"] = ",".join(map(str, visible[rank * share : (rank + 1) * share]))
        errors.append(tempfile.TemporaryFile("w+"))
        stdout = None if rank == 0 else subprocess.DEVNULL
        children.append(subprocess.Popen(command, env=env, stdout=stdout, stderr=errors[-1]))
    try:
        failed = _wait(children, poll_s)
    except KeyboardInterrupt:
        print(f"gs-course: interrupted: stopping the {processes} processes", file=sys.stderr)
        failed = 0
    finally:
        _stop(children)
    shown = failed if failed is not None else 0
    errors[shown].seek(0)
    sys.stderr.write(errors[shown].read())
    for file in errors:
        file.close()
    if failed is None:
        return 0
    code = children[failed].returncode
    if code < 0:  # ended by a signal: the shell's convention, 128 + its number
        how, code = f"was killed ({signal.Signals(-code).name})", 128 - code
    else:
        how = f"failed (exit code {code})"
    if code != quiet_code:
        print(f"gs-course: error: process {failed} of {processes} {how}; the others were stopped", file=sys.stderr)
    return code


def _wait(children: list[subprocess.Popen], poll_s: float) -> int | None:
    """The index of the first child to fail, or None once all have succeeded."""
    while True:
        codes = [child.poll() for child in children]
        for rank, code in enumerate(codes):
            if code not in (None, 0):
                return rank
        if all(code == 0 for code in codes):
            return None
        time.sleep(poll_s)


def _stop(children: list[subprocess.Popen]) -> None:
    """Terminate the children still running, then kill those that have not stopped after STOP_GRACE_S."""
    running = [child for child in children if child.poll() is None]
    for child in running:
        child.terminate()
    deadline = time.monotonic() + STOP_GRACE_S
    for child in running:
        try:
            child.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
