"""The processes a check starts, and all they start in turn (nbval, its Jupyter kernels, Legate's
children): found by their parent ids in /proc, so that a notebook stopped at its time limit, or
by Ctrl-C, leaves no kernel holding the GPU (a signal to the check alone does not reach them: on
the H200 a kernel outlived its instructor check, stopped by `timeout`, and kept 7 GB).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def parent_ids() -> dict[int, int]:
    """{pid: parent pid} of every process this machine's /proc shows."""
    parents = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as stat:
                # the name, in parentheses, may hold spaces: the fields after its last ')' are fixed
                parents[int(entry.name)] = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue  # ended meanwhile
    return parents


def process_tree(root: int, parents: dict[int, int]) -> set[int]:
    """`root` and every process descended from it."""
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    tree, todo = set(), [root]
    while todo:
        pid = todo.pop()
        if pid not in tree:
            tree.add(pid)
            todo += children.get(pid, [])
    return tree


def cores_of(student: int, students: int, cores: list[int]) -> list[int]:
    """The cores student `student` (0-based) of `students` keeps to, as a hub's cpuset gives them:
    `cores` split into `students` runs of at least one core, as even as they go (the first
    `len(cores) % students` students get one core more, so that none stays idle), a core shared
    round the classroom where the students outnumber the cores."""
    if students > len(cores):
        return [cores[student % len(cores)]]
    each, spare = divmod(len(cores), students)
    start = student * each + min(student, spare)
    return cores[start:start + each + (student < spare)]


def pinned(command: list[str], cores: list[int]) -> list[str]:
    """`command` kept to `cores`, it and every process it starts (they inherit its affinity): the
    libraries size their thread pools from it (XLA's, Legate's), as they do in a hub's cpuset."""
    keep = f"import os, sys; os.sched_setaffinity(0, {sorted(cores)}); os.execvp(sys.argv[1], sys.argv[1:])"
    return [sys.executable, "-c", keep, *command]


def running(pid: int) -> bool:
    """Whether process `pid` still runs (a zombie, ended but not yet waited for, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def wait_counting_cpu(proc: subprocess.Popen, timeout_s: float | None) -> float:
    """Wait for `proc` as `proc.wait(timeout_s)` does, and return the CPU seconds (user and system)
    of it and of the children it waited for in turn (nbval waits for its Jupyter kernel, which runs
    the notebook and Legate's threads): on a shared host the cores, not the GPU, may be what runs
    out, and this shows how much of them a notebook takes. TimeoutExpired past `timeout_s`."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return usage.ru_utime + usage.ru_stime
        if deadline is not None and time.monotonic() > deadline:
            raise subprocess.TimeoutExpired(proc.args, timeout_s)
        time.sleep(0.1)


def stop_tree(pid: int, grace_s: float = 5.0) -> None:
    """End process `pid` and every process it started (by their ids): SIGTERM, then SIGKILL to
    those still there after `grace_s`."""
    tree = process_tree(pid, parent_ids())
    for each in tree:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(each, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and any(running(each) for each in tree):
        time.sleep(0.1)
    for each in tree:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(each, signal.SIGKILL)


def _catches(pid: int, signum: int) -> bool:
    """Whether process `pid` has a handler for `signum` (its SigCgt mask in /proc): a process that
    took the id of one that registered, and ended, is not signalled (SIGUSR1 would end it)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            mask = next(line.split()[1] for line in status if line.startswith("SigCgt:"))
    except (OSError, StopIteration, IndexError):
        return False
    return bool(int(mask, 16) >> (signum - 1) & 1)


def dump_stacks(pid: int, folder: Path, wait_s: float = 2.0) -> str:
    """Every Python stack of `pid`'s tree, from the processes that registered for it (gs_course's
    import with GS_COURSE_STACKS=`folder`: each has its <pid>.txt there): SIGUSR1 to each, then
    their files after `wait_s`, each headed by its pid; "" where none registered."""
    registered = [each for each in sorted(process_tree(pid, parent_ids()))
                  if (folder / f"{each}.txt").exists() and _catches(each, signal.SIGUSR1)]
    for each in registered:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(each, signal.SIGUSR1)
    if registered:
        time.sleep(wait_s)
    return "".join(f"--- process {each}\n{(folder / f'{each}.txt').read_text()}\n" for each in registered)


@contextlib.contextmanager
def sigterm_as_ctrl_c():
    """SIGTERM stops a check as Ctrl-C does (every child ended); the old handler comes back."""
    def interrupt(signum, frame):
        raise KeyboardInterrupt

    replaced = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL if replaced is None else replaced)
