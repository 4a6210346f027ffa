"""The classroom check (`gs-course instructor-check --students N`, or `--ramp 1,4,8,16`): many
students on one GPU, as a hub puts them.

N student sessions start a few seconds apart (`stagger`). Each runs the notebooks in the school's
teaching order (CuPy, cuPyNumeric, JAX, the synthesis), each notebook in a fresh kernel through
nbval (its outputs compared, as the instructor check does), with the course's shared-GPU settings
(`student_settings`): JAX allocates as it goes, and Legate, which reserves its share whole, gets
the course's share of 1/N of the GPU memory free, so that N Legate runtimes fit. Each student keeps
to cores of its own (1/N of the host's, one at least), as a hub's cpuset gives them: XLA and Legate
size their threads from the cores they see, and students who each see every core spend them on
contention (unless `own_cores` is False: `--shared-cores`).

Per student and notebook it records pass or fail, the time, the peak GPU memory of that student's
own processes (nvidia-smi's per-process figures, summed over the student's process tree: the
kernels are children of the nbval process) and the first failure as the student would see it, in
one line. A ramp runs 1 student alone first (the times the others are held to: within 2x), then
each N in turn, and stops at the first N that fails: the largest N that passed is the answer.

A notebook that runs past its time limit is stopped, a student's failure does not stop the others,
and Ctrl-C (or SIGTERM) stops every child before returning.
"""

from __future__ import annotations

import codecs
import dataclasses
import json
import os
import re
import signal
import subprocess
import tempfile
import threading
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from ..sizing import CPU_LEGATE_CONFIG, gpu_legate_config, realm_args
from ..devices import _nvidia_smi, gpu_sharing, gpus
from .instructor import cpu_time, load as load_instructor_check, nbval_command, sized_environment
from ..measurement import records
from .. import paths
from ..sizing import legate_fbmem_mib
from .processes import (cores_of, dump_stacks, parent_ids, pinned, process_tree, sigterm_as_ctrl_c, stop_tree,
                        wait_counting_cpu)

KIND, SCHEMA = "classroom", 1
#: The school's teaching order, by notebook number: CuPy, cuPyNumeric, JAX, the synthesis.
SCHOOL_ORDER = ("3", "2", "1", "4")
#: A student's time may grow to this many times its time alone.
SLOWDOWN_LIMIT = 2.0
#: Seconds between two samples of nvidia-smi's per-process memory.
SAMPLE_S = 0.5


class ClassroomError(ValueError):
    """Bad options for the classroom (one line)."""


# --- GPU memory per student -----------------------------------------------------------------------

def compute_apps(table: str) -> dict[int, int]:
    """{pid: MiB} from `nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits`.
    Lines without two numbers (no process, '[N/A]' where the driver hides the figure) are skipped."""
    found = {}
    for line in table.splitlines():
        fields = [field.strip() for field in line.split(",")]
        if len(fields) == 2 and all(field.isdigit() for field in fields):
            found[int(fields[0])] = found.get(int(fields[0]), 0) + int(fields[1])
    return found


class MemorySampler:
    """Samples nvidia-smi's per-process GPU memory while the classroom runs and keeps, for each
    process being watched (a student's nbval run), the peak of the sum over its process tree.

    `unmatched` turns True when nvidia-smi listed processes but none is a process of this machine's
    /proc (a container with its own process numbers): the figures are then not measured."""

    def __init__(self, gpu_index: int | None):
        self.gpu_index = gpu_index
        self.peaks: dict[int, int] = {}  # watched root pid -> peak MiB
        self.matched = self.listed = False
        self._watched: set[int] = set()
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample_until_done, name="gs-course-gpu-sampler", daemon=True)

    @property
    def unmatched(self) -> bool:
        return self.listed and not self.matched

    def watch(self, pid: int) -> None:
        with self._lock:
            self._watched.add(pid)
            self.peaks.setdefault(pid, 0)

    def unwatch(self, pid: int) -> int | None:
        """Stop watching `pid`; its peak in MiB, None where nothing could be measured."""
        with self._lock:
            self._watched.discard(pid)
            peak = self.peaks.pop(pid, 0)
        return None if self.gpu_index is None else peak

    def sample(self, table: str, parents: dict[int, int]) -> None:
        """One sample: nvidia-smi's table, the process tree of this moment."""
        apps = compute_apps(table)
        self.listed |= bool(apps)
        self.matched |= any(pid in parents for pid in apps)
        with self._lock:
            for root in self._watched:
                used = sum(apps.get(pid, 0) for pid in process_tree(root, parents))
                self.peaks[root] = max(self.peaks[root], used)

    def _sample_until_done(self) -> None:
        while not self._done.wait(SAMPLE_S):
            table = _nvidia_smi(f"--id={self.gpu_index}", "--query-compute-apps=pid,used_memory",
                                "--format=csv,noheader,nounits")
            if table is not None:
                self.sample(table, parent_ids())

    def __enter__(self) -> MemorySampler:
        if self.gpu_index is not None:
            self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._done.set()
        if self._thread.is_alive():
            self._thread.join()


# --- what a student would see -------------------------------------------------------------------

_COLOUR = re.compile(r"(?:\x1b|#x1B)\[[0-9;]*m")


def first_failure(junit_xml: str) -> str | None:
    """The first failing cell of an nbval run, in one line, from its JUnit XML: 'Cell 12:
    ValueError: ...' (the line a student sees under the cell), 'Cell 3: Cell outputs differ', or
    pytest's own line (a cell past pytest's time limit). None when no cell failed."""
    try:
        root = ElementTree.fromstring(junit_xml)
    except ElementTree.ParseError:
        return None
    for case in root.iter("testcase"):
        for failure in (*case.iter("failure"), *case.iter("error")):
            text = _COLOUR.sub("", failure.text or failure.get("message") or "")
            lines = [line.strip() for line in text.splitlines() if line.strip()]
            cell = next((line for line in lines if re.match(r"Cell \d+: ", line)), None)
            if cell is None:
                return (lines or [case.get("name", "?")])[0]
            if "exception" in cell:  # the traceback's last line: what the student reads
                return f"{cell.split(':')[0]}: {lines[-1]}"
            mismatch = next((line for line in lines if line.startswith("mismatch ")), None)
            return f"{cell} ({mismatch})" if mismatch else cell
    return None


# --- one student ----------------------------------------------------------------------------------

@dataclasses.dataclass
class Attempt:
    """One student's run of one notebook."""

    student: int
    notebook: str
    passed: bool
    seconds: float
    peak_mib: int | None  # that student's processes at their peak; None: not measured
    failure: str | None = None  # the first failure, one line
    slowdown: float | None = None  # seconds over the notebook's time alone
    slowest_cells: list = dataclasses.field(default_factory=list)  # [[cell, seconds], ...], the longest first
    cpu_s: float | None = None  # CPU seconds of its nbval and kernel; None: stopped before its end


def stamp_lines(source, sink, start: float) -> None:
    """Copy `source` (a child's output, bytes) to `sink` (text), each line led by the seconds since
    `start` at which its first character came: nbval (-v) names a cell as the cell starts, so
    each cell's line carries its start, and the last one the cell a stopped notebook was in."""
    at_line_start, decoder = True, codecs.getincrementaldecoder("utf-8")(errors="replace")
    try:  # decoded as it comes: a character split between two reads is whole in the log
        for chunk in iter(lambda: source.read1(65536), b""):
            for piece in decoder.decode(chunk).splitlines(keepends=True):
                if at_line_start:
                    sink.write(f"[{time.perf_counter() - start:7.1f} s] ")
                sink.write(piece)
                at_line_start = piece.endswith("\n")
            sink.flush()
    except ValueError:  # the log closed under it: a process outlived its tree's stop and kept the pipe
        pass


#: A line where nbval (-v) names a cell as it starts, stamped (`stamp_lines`) or not: its stamp, the
#: cell's number, the rest of the line. Its failure reports and summary name the cell again, led by
#: underscores, FAILED or ERROR: those are no start.
_STAMP = re.compile(r"^\[\s*[\d.]+ s\] ?", re.M)


def last_words(log: str) -> str | None:
    """What a run that left no report said last, its stamps off: its last error line (pytest's own
    usage error ends in lines of where it looked), else its last line; None for a silent run."""
    lines = [line.strip() for line in _STAMP.sub("", log).splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower()]
    return (errors or lines or [None])[-1]


_CELL_LINE = re.compile(r"^(?:\[\s*([\d.]+) s\] )?(?!_|FAILED|ERROR)\S*::Cell (\d+)\b(.*)$", re.M)


def slowest_cells(log: str, seconds: float, most: int = 3) -> list[list]:
    """The `most` longest cells of a stamped log (`stamp_lines`): [[cell, seconds], ...], each
    cell's time from its start to the next one's (the last one's to `seconds`, the run's end)."""
    starts = {}  # each cell's first start
    for at, cell, _ in _CELL_LINE.findall(log):
        if at:
            starts.setdefault(int(cell), float(at))
    starts = sorted(starts.items(), key=lambda start: start[1])
    ends = [at for _, at in starts[1:]] + [seconds]
    spans = [[cell, round(end - at, 1)] for (cell, at), end in zip(starts, ends)]
    return sorted(spans, key=lambda span: -span[1])[:most]


def running_cell(log: str, notebook: Path) -> str:
    """Where nbval (-v: each cell's name as it starts) was in `notebook`: " in cell N (its first
    line of code)", or "" where the log names none."""
    started = _CELL_LINE.findall(log)
    if not started:
        return ""
    number, after = int(started[-1][1]), started[-1][2]
    cells = [cell for cell in json.loads(notebook.read_text())["cells"] if cell["cell_type"] == "code"]
    code = [line.strip() for line in "".join(cells[number]["source"]).splitlines()
            if line.strip() and not line.lstrip().startswith("#")] if number < len(cells) else []
    where = "after" if re.search(r"PASSED|FAILED|SKIPPED|ERROR", after) else "in"
    return f" {where} cell {number}" + (f" ({code[0][:60]})" if code else "")


def student_settings(students: int, free_bytes: int | None, cores: int | None = None) -> dict[str, str]:
    """The shared-GPU settings of one of `students` students kept to `cores` cores (None: all of
    them, shared): JAX allocates as it goes (`XLA_PYTHON_CLIENT_PREALLOCATE=false`; each kernel's
    `import gs_course` caps it at the course's share of what is free then, as for any student), and
    Legate, which reserves its memory whole when it starts, gets the course's share
    (`course.legate_fbmem_mib`) of 1/`students` of the memory free now, so that every student's
    Legate fits, and the workers of `cores` cores (`sizing.FEW_CORES`). An instructor's own
    REALM_DEFAULT_ARGS, empty included, is kept, as a kernel keeps it."""
    legate = CPU_LEGATE_CONFIG if free_bytes is None else gpu_legate_config(
        legate_fbmem_mib(free_bytes // students), cores)
    settings = {"XLA_PYTHON_CLIENT_PREALLOCATE": "false", "REALM_SYNTHETIC_CORE_MAP": "", "LEGATE_CONFIG": legate}
    realm = os.environ.get("REALM_DEFAULT_ARGS", realm_args(cores))
    return settings | ({"REALM_DEFAULT_ARGS": realm} if realm or "REALM_DEFAULT_ARGS" in os.environ else {})


class Classroom:
    """`students` students, each running `notebooks` in order; see the module's docstring."""

    def __init__(self, notebooks: list[Path], students: int, stagger_s: float, timeout_s: float,
                 env: dict[str, str], sampler: MemorySampler, root: Path = paths.ROOT, log=print,
                 logs: Path | None = None, cores: list[list[int]] | None = None):
        self.notebooks, self.students, self.stagger_s, self.timeout_s = notebooks, students, stagger_s, timeout_s
        self.env, self.sampler, self.root, self.log, self.logs = env, sampler, root, log, logs
        self.cores = cores  # each student's, or None: every core for everyone
        self.attempts: list[Attempt] = []
        self._stopping = threading.Event()
        self._running: dict[int, subprocess.Popen] = {}  # student -> its nbval run now
        self._lock = threading.Lock()

    def _run_notebook(self, student: int, notebook: Path, folder: Path) -> Attempt:
        junit, log = folder / f"{student}-{notebook.stem}.xml", folder / f"{student}-{notebook.stem}.log"
        stacks = folder / f"{student}-{notebook.stem}-stacks"  # where its processes put their stacks (SIGUSR1)
        stacks.mkdir()
        # -vv on top of its -q: verbose, each cell named as it starts
        command = nbval_command(notebook, self.root, f"--junitxml={junit}", "-vv")
        if self.cores is not None:
            command = pinned(command, self.cores[student])
        start = time.perf_counter()
        output = open(log, "w")
        # A session of its own: the terminal's Ctrl-C reaches the classroom, which stops each child in turn.
        # Unbuffered: each line reaches the log, stamped, as it is written.
        env = {**self.env, "GS_COURSE_STACKS": str(stacks), "PYTHONUNBUFFERED": "1"}
        try:
            proc = subprocess.Popen(command, cwd=self.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        except BaseException:
            output.close()
            raise
        stamper = threading.Thread(target=stamp_lines, args=(proc.stdout, output, start), daemon=True)
        stamper.start()
        with self._lock:
            self._running[student] = proc
            stopped_meanwhile = self._stopping.is_set()
        if stopped_meanwhile:  # `stop` has been through the running ones already
            stop_tree(proc.pid)
        self.sampler.watch(proc.pid)
        cpu_s = None
        try:
            cpu_s = wait_counting_cpu(proc, self.timeout_s)
            ended, failure = time.perf_counter(), None
        except subprocess.TimeoutExpired:
            ended = time.perf_counter()
            try:
                (folder / f"{student}-{notebook.stem}-stopped.txt").write_text(dump_stacks(proc.pid, stacks))
            finally:  # stopped, whatever became of its stacks
                stop_tree(proc.pid)
                proc.wait()
            failure = (f"stopped after {self.timeout_s:.0f} s{running_cell(log.read_text(), notebook)}: the "
                       "notebook's time limit (--timeout)")
        finally:
            with self._lock:
                self._running.pop(student, None)
            peak = self.sampler.unwatch(proc.pid)
            stamper.join(10)  # the output's end: its kernels, which shared it, are gone with the tree
            output.close()
        seconds = ended - start  # the notebook's own time, not the wait for its output's end
        if self._stopping.is_set():
            failure = "stopped: the classroom was interrupted"
        elif failure is None and proc.returncode != 0:
            said = first_failure(junit.read_text()) if junit.exists() else None
            failure = said or last_words(log.read_text()) or f"exit code {proc.returncode}"
        return Attempt(student, notebook.name, failure is None, seconds, peak, failure,
                       slowest_cells=slowest_cells(log.read_text(), seconds), cpu_s=cpu_s)

    def _student(self, student: int, folder: Path) -> None:
        if self._stopping.wait(student * self.stagger_s):
            return
        for notebook in self.notebooks:
            try:
                attempt = self._run_notebook(student, notebook, folder)
            except Exception as err:  # this student's alone: the others go on
                attempt = Attempt(student, notebook.name, False, 0.0, None, f"not run: {err}")
            with self._lock:
                self.attempts.append(attempt)
            result = "pass" if attempt.passed else f"FAIL: {attempt.failure}"
            self.log(f"  student {student + 1}: {notebook.name} {attempt.seconds:.0f} s, {result}")
            if self._stopping.is_set():
                return

    def run(self) -> float:
        """Every student to the end (or until interrupted); the wall time in seconds."""
        start = time.perf_counter()
        # Kept: each notebook run's pytest output (and a stopped one's stacks), for the failures the
        # summary gives in one line; in `logs` (the record's folder) where given.
        if self.logs is None:
            folder = Path(tempfile.mkdtemp(prefix=f"gs-course-classroom-{self.students}-"))
        else:
            self.logs.mkdir(parents=True, exist_ok=True)  # a folder of its own, each run: nothing overwritten
            # absolute: the notebooks' kernels start in their own folder, and find the stacks' folder from there
            folder = Path(tempfile.mkdtemp(prefix=f"classroom-{self.students}-logs-", dir=self.logs)).resolve()
        threads = [threading.Thread(target=self._student, args=(s, folder), name=f"student-{s + 1}")
                   for s in range(self.students)]
        for thread in threads:
            thread.start()
        try:
            for thread in threads:
                while thread.is_alive():
                    thread.join(0.5)
        except KeyboardInterrupt:
            ctrl_c = signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C may not cut the stopping short
            try:
                self.stop(threads)
            finally:
                signal.signal(signal.SIGINT, ctrl_c)
            raise
        finally:
            self.log(f"  each notebook run's output: {folder}")
        return time.perf_counter() - start

    def stop(self, threads: list[threading.Thread]) -> None:
        """Stop every student: no new notebook starts, each one running is ended with its kernels."""
        self._stopping.set()
        with self._lock:
            running = list(self._running.values())
        for proc in running:
            stop_tree(proc.pid)
        for thread in threads:
            thread.join()


# --- a step of the ramp, the ramp, the record ------------------------------------------------------

def _gpu_now():
    gpus.cache_clear()  # the memory free now, with the other students' gone
    found = gpus()
    return found[0] if found else None


def classroom_step(notebooks: list[Path], students: int, stagger_s: float, timeout_s: float, size: str,
                   alone: dict[str, float] | None, root: Path = paths.ROOT, log=print, logs: Path | None = None,
                   own_cores: bool = True) -> dict:
    """One classroom of `students`; `alone`: each notebook's time for one student (the 2x rule)."""
    gpu = _gpu_now()
    available = sorted(os.sched_getaffinity(0))
    cores = [cores_of(s, students, available) for s in range(students)] if own_cores else None
    # Every student gets the settings of the fewest cores any has (the split differs by one core at most).
    fewest = cores and min(map(len, cores))
    settings = student_settings(students, gpu and gpu.memory_free, fewest or len(available))
    env = sized_environment(size, **settings)
    log(f"\n{students} student(s), {stagger_s:g} s apart, {size} size, "
        + (f"{cores_count(cores)} of {len(available)} cores each: " if cores else f"all {len(available)} cores shared: ")
        + ", ".join(f"{name}={value}" for name, value in settings.items()) + f"; the GPU shared in {gpu_sharing()}")
    with MemorySampler(gpu and gpu.index) as sampler:
        classroom = Classroom(notebooks, students, stagger_s, timeout_s, env, sampler, root, log, logs, cores)
        wall_s = classroom.run()
    memory = "no GPU" if gpu is None else "not measured" if sampler.unmatched else "measured"
    failed = next((a for a in classroom.attempts if not a.passed), None)  # the first to end failing
    attempts = sorted(classroom.attempts, key=lambda a: (a.student, [n.name for n in notebooks].index(a.notebook)))
    for attempt in attempts:
        if memory == "not measured":
            attempt.peak_mib = None
        if alone and attempt.notebook in alone and alone[attempt.notebook] > 0:
            attempt.slowdown = attempt.seconds / alone[attempt.notebook]
    slow = [a for a in attempts if a.slowdown is not None and a.slowdown > SLOWDOWN_LIMIT]
    return {
        "students": students,
        "settings": settings,
        "gpu_memory_free_mib": gpu and gpu.memory_free // 2**20,
        "memory": memory,
        "wall_s": wall_s,
        "cpu_count": len(available),
        "gpu_sharing": gpu_sharing(),
        "cores_per_student": fewest,  # the fewest any student had; None: every student on every core
        "cores_most": cores and max(map(len, cores)),
        "passed": failed is None and len(attempts) == students * len(notebooks),
        "within_limit": None if alone is None else not slow,
        "first_failure": failed and {"student": failed.student + 1, "notebook": failed.notebook,
                                     "message": failed.failure},
        "attempts": [dataclasses.asdict(a) | {"student": a.student + 1} for a in attempts],
    }


def step_ok(step: dict) -> bool:
    return step["passed"] and step["within_limit"] is not False


def times_alone(path: str | Path, notebooks: list[Path], size: str) -> dict[str, float]:
    """Each notebook's seconds in an instructor check's record (`gs-course instructor-check --out`),
    the times alone a classroom is held to; a ClassroomError where the record cannot serve: another
    size, a notebook missing or failed."""
    try:
        record = load_instructor_check(path)
    except (OSError, ValueError) as err:
        raise ClassroomError(f"--alone {path}: {err}") from None
    if record["size"] != size or record.get("free_gb") is not None:
        raise ClassroomError(f"--alone {path}: an instructor check at {record['size']} size"
                             f"{' with --free-gb' if record.get('free_gb') is not None else ''}, "
                             f"not at {size} size with the whole GPU: give one at the classroom's size")
    passed = {entry["notebook"]: entry["seconds"] for entry in record["notebooks"] if entry["passed"]}
    missing = [n.name for n in notebooks if n.name not in passed]
    if missing:
        raise ClassroomError(f"--alone {path}: no passing run of {', '.join(missing)} in it: "
                             "check those notebooks alone first")
    return {n.name: passed[n.name] for n in notebooks}


def ramp(notebooks: list[Path], counts: list[int], stagger_s: float, timeout_s: float, size: str,
         root: Path = paths.ROOT, log=print, alone: dict[str, float] | None = None, on_step=None,
         logs: Path | None = None, own_cores: bool = True) -> dict:
    """Each classroom size of `counts` in turn (a first step of one student alone gives the times
    the others are held to, unless `alone` gives them), stopping after the first that fails; the
    payload of the record. `on_step` gets the payload so far after each step, so that a ramp
    interrupted in a large classroom keeps the smaller ones it finished."""
    steps = []

    def so_far() -> dict:
        passing = [step["students"] for step in steps if step_ok(step)]
        return {"size": size, "stagger_s": stagger_s, "timeout_s": timeout_s, "notebooks": [n.name for n in notebooks],
                "slowdown_limit": SLOWDOWN_LIMIT, "alone": alone, "steps": steps,
                "largest_passing": max(passing, default=None)}

    for students in counts:
        step = classroom_step(notebooks, students, stagger_s, timeout_s, size, alone, root, log, logs, own_cores)
        steps.append(step)
        if students == 1 and step["passed"]:
            alone = {a["notebook"]: a["seconds"] for a in step["attempts"]}
        if on_step is not None:
            on_step(so_far())
        if not step_ok(step):
            break
    return so_far()


def ramp_counts(students: int | None, ramp_text: str | None, alone_given: bool = False) -> list[int]:
    """The classroom sizes to run: `--students N` alone, or `--ramp 1,4,8,16` (1 added ahead where
    missing and `--alone` gives no times: the times alone are what the others are held to)."""
    if students is not None and ramp_text is not None:
        raise ClassroomError("give --students N or --ramp N,N,..., not both")
    if ramp_text is None:
        if students is None or students < 1:
            raise ClassroomError(f"--students must be at least 1, got {students}")
        return [students]
    try:
        counts = [int(word) for word in ramp_text.split(",")]
    except ValueError:
        raise ClassroomError(f"--ramp takes student counts separated by commas, e.g. 1,4,8,16; got {ramp_text!r}") from None
    if any(n < 1 for n in counts) or counts != sorted(set(counts)):
        raise ClassroomError(f"--ramp takes growing counts of at least 1, e.g. 1,4,8,16; got {ramp_text!r}")
    return counts if counts[0] == 1 or alone_given else [1, *counts]


def _memory(attempt: dict, memory: str) -> str:
    return f"{attempt['peak_mib']:,} MiB" if attempt["peak_mib"] is not None else memory


def markdown(record: dict) -> str:
    """The summary: provenance, the answer, then per classroom size a table per student."""
    lines = [records.header(record["provenance"], "Classroom check: students on one GPU"),
             f"Notebooks, in this order: {', '.join(record['notebooks'])}; {record['size']} size; students "
             f"started {record['stagger_s']:g} s apart; each notebook stopped after {record['timeout_s']:.0f} s.", "",
             f"Largest classroom that passed (every notebook for every student"
             f"{f', each within {SLOWDOWN_LIMIT:g}x of its time alone' if record.get('alone') else ''}): "
             f"{record['largest_passing'] or 'none'}.", ""]
    for step in record["steps"]:
        verdict = "passed" if step_ok(step) else "FAILED"
        lines += [f"## {step['students']} student(s): {verdict}, {step['wall_s']:.0f} s in all", "",
                  f"Settings: {cores_line(step)}; " + ", ".join(f"`{k}={v}`" for k, v in step["settings"].items())
                  + ".", ""]
        if step["first_failure"]:
            failure = step["first_failure"]
            lines += [f"First failure: student {failure['student']}, {failure['notebook']}: {failure['message']}", ""]
        busy = cores_busy(step)
        if busy is not None:
            lines += [f"CPU: the students' processes kept {busy:.1f} of the host's {step['cpu_count']} cores busy "
                      "on average (their CPU time over the classroom's time).", ""]
        lines += ["| student | notebook | result | time | against alone | CPU time | peak GPU memory | slowest cells |",
                  "|---|---|---|---|---|---|---|---|"]
        for a in step["attempts"]:
            slowdown = f"{a['slowdown']:.2f}x" if a["slowdown"] is not None else "-"
            result = "pass" if a["passed"] else f"FAIL: {a['failure']}"
            cells = ", ".join(f"{cell}: {seconds:.0f} s" for cell, seconds in a.get("slowest_cells", [])) or "-"
            lines.append(f"| {a['student']} | {a['notebook']} | {result} | {a['seconds']:.0f} s | {slowdown} | "
                         f"{cpu_time(a.get('cpu_s'))} | {_memory(a, step['memory'])} | {cells} |")
        lines.append("")
    return "\n".join(lines)


def cores_count(cores: list[list[int]]) -> str:
    """How many cores each student had: "2", or "1 or 2" where the host's did not split evenly."""
    fewest, most = min(map(len, cores)), max(map(len, cores))
    return f"{fewest}" if fewest == most else f"{fewest} or {most}"


def cores_line(step: dict) -> str:
    """How the step's students shared the host's cores (and the GPU), in words (an older record has no
    `cores_per_student`: they shared them all; or no `cores_most`: the cores split evenly)."""
    each, most = step.get("cores_per_student"), step.get("cores_most") or step.get("cores_per_student")
    mps = ", the GPU shared through MPS" * (step.get("gpu_sharing") == "MPS")  # records before it: time slices
    if each is None:
        return f"every student on all {step['cpu_count']} cores{mps}"
    return (f"each student kept to {each if most == each else f'{each} or {most}'} of the {step['cpu_count']} cores"
            + (" (cores shared round the classroom)" if step["students"] > step["cpu_count"] else " of its own") + mps)


def cores_busy(step: dict) -> float | None:
    """The cores a classroom kept busy on average: its students' CPU seconds over its wall time;
    None where a notebook's CPU time is missing (stopped, or a record from before it was kept)."""
    seconds = [a.get("cpu_s") for a in step["attempts"]]
    if not seconds or None in seconds or not step.get("cpu_count"):
        return None
    return sum(seconds) / step["wall_s"]


def summary_figures(record: dict) -> dict:
    """The figures the README quotes: the largest classroom passed, its slowest notebook against
    its time alone, and the most GPU memory one of its students' processes took (None: not
    measured; a student's share, hence Legate's reservation, shrinks as the classroom grows)."""
    passed = [step for step in record["steps"] if step_ok(step)]
    largest = max(passed, key=lambda step: step["students"], default=None)
    attempts = largest["attempts"] if largest else []
    peaks = [a["peak_mib"] for a in attempts if a["peak_mib"] is not None]
    return {"largest": largest and largest["students"],
            "worst_slowdown": max((a["slowdown"] for a in attempts if a["slowdown"] is not None), default=None),
            "wall_s": largest and largest["wall_s"],
            "peak_mib": max(peaks, default=None),
            "first_failure": next((step["first_failure"] | {"students": step["students"]}
                                   for step in record["steps"] if step["first_failure"]), None)}


def check(notebooks: list[Path], counts: list[int], stagger_s: float, timeout_s: float, size: str,
          out: Path | None, alone: dict[str, float] | None = None, own_cores: bool = True) -> bool:
    """The classroom check from the command line: True when the largest classroom asked for passed.
    The record is saved after each classroom size, so Ctrl-C (or a time limit's SIGTERM) in the next
    one loses none that finished."""
    def save(payload: dict) -> str:
        record = records.record(KIND, payload, schema=SCHEMA)
        text = markdown(record)
        if out is not None:
            records.save(record, out / "classroom.json")
            (out / "classroom.md").write_text(text)
        return text

    with sigterm_as_ctrl_c():
        payload = ramp(notebooks, counts, stagger_s, timeout_s, size, alone=alone, on_step=save, logs=out,
                       own_cores=own_cores)
    print("\n" + save(payload))
    if out is not None:
        print(f"saved {out / 'classroom.json'} and {out / 'classroom.md'}")
    return payload["largest_passing"] == counts[-1]


def load(path: str | Path) -> dict:
    return records.load(path, KIND, SCHEMA)
