"""The classroom check: students' GPU memory told apart by process tree, the failure a student
would see in one line, a failing or stuck student that stops no one else, Ctrl-C that ends every
child, and the record with its summary (on tiny notebooks of the test's own: the course's are too
slow on a CPU)."""

import json
import os
import re
import signal
import subprocess
import sys
import time

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from gs_course.delivery import classroom, instructor, lesson_figures, processes
from gs_course.cli import main
from gs_course.devices import gpus
from gs_course.measurement import records
from gs_course import paths, sizing

#: nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits on an H200
#: (driver 580.159.04, 2026-12-01) while two "students" ran: processes 492 and 493 each started a
#: child holding a CuPy array, of 1 GiB (495) and of 3 GiB (494), each with its CUDA context; the
#: children were in that machine's /proc, their parents the students. Added to it: another user's
#: program (5001), and '[N/A]', what a driver prints where it hides a process's figure.
RECORDED_APPS = """\
495, 1544
494, 3592
5001, 20480
5002, [N/A]
"""
PARENTS = {492: 1, 495: 492, 493: 1, 494: 493, 5001: 1, 5002: 1}


def test_nvidia_smi_per_process_memory_is_parsed_from_its_csv():
    assert classroom.compute_apps(RECORDED_APPS) == {495: 1544, 494: 3592, 5001: 20480}
    assert classroom.compute_apps("") == {} and classroom.compute_apps("No running processes found\n") == {}


def test_each_student_counts_its_own_process_tree_and_nothing_else():
    parents = {**PARENTS, 496: 495}  # a grandchild of student 492 too
    assert processes.process_tree(492, parents) == {492, 495, 496}
    sampler = classroom.MemorySampler(gpu_index=0)
    sampler.watch(492)
    sampler.watch(493)
    sampler.sample(RECORDED_APPS, parents)
    sampler.sample("495, 1000\n496, 900\n494, 4000\n", parents)  # the peak is kept, summed over the tree
    assert sampler.unwatch(492) == 1900 and sampler.unwatch(493) == 4000
    assert not sampler.unmatched


def test_process_ids_of_another_namespace_are_not_measured():
    """In a container nvidia-smi may list the host's process ids: no student's figure, not a zero."""
    sampler = classroom.MemorySampler(gpu_index=0)
    sampler.watch(492)
    sampler.sample(RECORDED_APPS, {492: 1, 7: 1})
    assert sampler.unmatched


def test_the_student_settings_share_the_gpu_so_that_every_legate_runtime_fits():
    free = 140 * 2**30
    for students in (1, 4, 16, 64):
        settings = classroom.student_settings(students, free)
        assert settings["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false"
        fbmem = int(re.search(r"--fbmem (\d+)", settings["LEGATE_CONFIG"]).group(1)) * 2**20
        assert students * fbmem <= free / 2, students  # half the GPU at most goes to Legate's reservations
    assert classroom.student_settings(16, None)["LEGATE_CONFIG"].startswith("--cpus 1 --gpus 0")


@pytest.mark.parametrize("given, counts", [((3, None), [3]), ((None, "4,8,16"), [1, 4, 8, 16]), ((None, "1,2"), [1, 2])])
def test_the_classroom_sizes_to_run(given, counts):
    assert classroom.ramp_counts(*given) == counts


@pytest.mark.parametrize("args, said", [(["--ramp", "4,2"], "--ramp takes growing counts"),
                                        (["--ramp", "1,x"], "--ramp takes student counts"),
                                        (["--ramp", "0,4"], "--ramp takes growing counts"),
                                        (["--ramp", "4,4"], "--ramp takes growing counts"),
                                        (["--students", "0"], "--students must be at least 1"),
                                        (["--students", "2", "--ramp", "1,2"], "not both"),
                                        (["--students", "2", "--stagger", "-1"], "--stagger must be >= 0"),
                                        (["--students", "2", "--summary", "x.md"], "writes classroom.md to --out")])
def test_bad_classroom_options_get_one_line(args, said, capsys):
    assert main(["instructor-check", *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and said in err[0], err


def _notebook(path, *cells):
    """A notebook of (source, stdout) cells, executed as nbval expects (counts, recorded outputs)."""
    made = [new_code_cell(source, execution_count=i + 1,
                          outputs=[new_output("stream", name="stdout", text=out)] if out else [])
            for i, (source, out) in enumerate(cells)]
    notebook = new_notebook(cells=made)
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, path)
    return str(path)


def _passing(tmp_path):
    return _notebook(tmp_path / "passing.ipynb", ("print(1 + 1)", "2\n"))


def test_instructor_check_runs_each_notebook_through_nbval_and_summarises(tmp_path, capsys):
    """Two notebooks of the test's own, one whose recorded output is not what it prints (the
    tutorials are nbval's own test, solutions/ in the test paths): doctor first, each notebook
    through nbval, the table printed and written under its provenance, exit 1 for the failure."""
    differing = _notebook(tmp_path / "differing.ipynb", ("x = 6 * 7", None), ("print(x)", "41\n"))
    summary = tmp_path / "summary.md"
    assert main(["instructor-check", "--size", "small", "--summary", str(summary), _passing(tmp_path), differing]) == 1
    out = capsys.readouterr().out
    assert "Backends:" in out.split("running passing.ipynb")[0], "doctor first"
    lines = summary.read_text().splitlines()
    assert lines[0] == "# Instructor check, small size" and f"- commit: {records.commit()}; " in summary.read_text()
    rows = [line for line in lines if line.startswith("| ") and line.endswith(" |")]
    assert rows[0] == "| notebook | result | run time | CPU time | GPU | peak GPU memory |" and len(rows) == 3
    assert rows[1].startswith("| passing.ipynb | pass | ") and rows[2].startswith("| differing.ipynb | FAIL | ")
    assert all(row.endswith(" MiB |" if gpus() else "| no GPU |") for row in rows[1:])
    assert all(row in out for row in rows), "the table printed is the one written"


def test_students_run_every_notebook_and_a_failure_stops_no_one(tmp_path, capsys):
    failing = _notebook(tmp_path / "failing.ipynb", ("x = 1", None),
                        ("import numpy as np\nnp.ones(3) + np.ones(4)", None), ("print(x)", "1\n"))
    out = tmp_path / "out"
    out.mkdir()
    code = main(["instructor-check", "--students", "2", "--stagger", "1", "--size", "small", "--out", str(out),
                 failing, _passing(tmp_path)])
    assert code == 1
    record = classroom.load(out / "classroom.json")
    assert record["provenance"]["commit"] == records.commit()
    (step,) = record["steps"]
    assert not step["passed"] and step["memory"] == ("measured" if gpus() else "no GPU")
    assert step["settings"]["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false"
    by = {(a["student"], a["notebook"]): a for a in step["attempts"]}
    assert sorted(by) == [(1, "failing.ipynb"), (1, "passing.ipynb"), (2, "failing.ipynb"), (2, "passing.ipynb")]
    message = "Cell 1: ValueError: operands could not be broadcast together with shapes (3,) (4,)"
    assert [by[s, "failing.ipynb"]["failure"] for s in (1, 2)] == [message, message]
    assert all(by[s, "passing.ipynb"]["passed"] and by[s, "passing.ipynb"]["seconds"] > 0 for s in (1, 2))
    assert all(0 < a["cpu_s"] for a in step["attempts"]) and step["cpu_count"] == len(os.sched_getaffinity(0))
    assert step["gpu_sharing"] == ("MPS" if os.environ.get("CUDA_MPS_PIPE_DIRECTORY") else "time slices")
    assert step["first_failure"]["message"] == message and record["largest_passing"] is None
    summary = (out / "classroom.md").read_text()
    assert summary.startswith("# Classroom check: students on one GPU")
    assert f"| 2 | failing.ipynb | FAIL: {message} |" in summary
    assert ("MiB |" if gpus() else "| no GPU |") in summary


def test_each_student_keeps_to_cores_of_its_own_and_shares_them_only_when_outnumbering_them():
    cores = list(range(16))
    assert [processes.cores_of(s, 16, cores) for s in range(16)] == [[c] for c in cores]
    five = [processes.cores_of(s, 5, cores) for s in range(5)]
    assert [len(run) for run in five] == [4, 3, 3, 3, 3] and sum(five, []) == cores  # none left idle
    twelve = [processes.cores_of(s, 12, cores) for s in range(12)]
    assert [len(run) for run in twelve] == [2] * 4 + [1] * 8 and sum(twelve, []) == cores
    said = classroom.cores_line({"students": 12, "cpu_count": 16, "cores_per_student": 1, "cores_most": 2})
    assert said == "each student kept to 1 or 2 of the 16 cores of its own"
    said = classroom.cores_line({"students": 16, "cpu_count": 16, "cores_per_student": 1, "gpu_sharing": "MPS"})
    assert said == "each student kept to 1 of the 16 cores of its own, the GPU shared through MPS"
    assert processes.cores_of(0, 1, cores) == cores
    assert [processes.cores_of(s, 20, cores)[0] for s in (0, 15, 16, 19)] == [0, 15, 0, 3]
    assert processes.cores_of(1, 2, [3, 5, 8, 9]) == [8, 9]  # the cores the check itself may use


def test_the_classroom_keeps_an_instructors_own_realm_settings(monkeypatch):
    monkeypatch.delenv("REALM_DEFAULT_ARGS", raising=False)  # as gs_course's import may have set it here
    few = classroom.student_settings(16, 140 * 2**30, cores=1)
    assert "--cpus 1 " in few["LEGATE_CONFIG"] and few["REALM_DEFAULT_ARGS"] == "-ll:bgwork 1"
    many = classroom.student_settings(4, 140 * 2**30, cores=4)
    assert "--cpus 2 " in many["LEGATE_CONFIG"] and "REALM_DEFAULT_ARGS" not in many
    monkeypatch.setenv("REALM_DEFAULT_ARGS", "")
    assert classroom.student_settings(16, 140 * 2**30, cores=1)["REALM_DEFAULT_ARGS"] == ""


def test_a_pinned_command_and_the_processes_it_starts_see_only_its_cores():
    child = "import os; print(sorted(os.sched_getaffinity(0)))"
    parent = f"import os, subprocess, sys; print(sorted(os.sched_getaffinity(0))); subprocess.run([sys.executable, '-c', {child!r}])"
    core = sorted(os.sched_getaffinity(0))[-1]
    said = subprocess.run(processes.pinned([sys.executable, "-c", parent], [core]), capture_output=True, text=True,
                          check=True).stdout.split()
    assert said == [f"[{core}]", f"[{core}]"]


@pytest.mark.parametrize("shared", [False, True])
def test_each_students_kernel_sees_the_cores_it_was_given(tmp_path, shared, monkeypatch):
    monkeypatch.delenv("REALM_DEFAULT_ARGS", raising=False)  # the classroom's own, not one an import set here
    seen = tmp_path / "seen"
    seen.mkdir()
    notebook = _notebook(tmp_path / "cores.ipynb", (f"import os\nopen(os.path.join({str(seen)!r}, str(os.getpid())), 'w')"
                                                    ".write(str(sorted(os.sched_getaffinity(0))))", None))
    out = tmp_path / "out"
    out.mkdir()
    main(["instructor-check", "--students", "2", "--stagger", "0", "--size", "small", "--out", str(out), notebook]
         + (["--shared-cores"] if shared else []))
    available = sorted(os.sched_getaffinity(0))
    expected = [available] * 2 if shared else [processes.cores_of(s, 2, available) for s in range(2)]
    assert sorted(json.loads(f.read_text()) for f in seen.iterdir()) == sorted(expected)
    (step,) = classroom.load(out / "classroom.json")["steps"]
    fewest, most = min(map(len, expected)), max(map(len, expected))  # an odd count of cores splits unevenly
    assert step["cores_per_student"] == (None if shared else fewest)
    # kept to few cores, Legate's workers are fewer (sizing.FEW_CORES); sharing all, those of all the cores
    few = (len(available) if shared else fewest) <= sizing.FEW_CORES
    assert step["settings"].get("REALM_DEFAULT_ARGS") == ("-ll:bgwork 1" if few else None)
    each = f"{fewest}" if fewest == most else f"{fewest} or {most}"
    said = "every student on all" if shared else f"each student kept to {each} of the"
    assert said in (out / "classroom.md").read_text()


def test_a_ramp_holds_each_student_to_its_time_alone_and_stops_at_the_first_failure(tmp_path, monkeypatch):
    """Notebook runs faked: 10 s alone, 15 s with 2 students, 25 s (2.5x) with 4; 8 is never tried."""
    def fake_run(room, student, notebook, folder):
        return classroom.Attempt(student, notebook.name, True, {1: 10.0, 2: 15.0, 4: 25.0}[room.students], 700 + student)

    monkeypatch.setattr(classroom.Classroom, "_run_notebook", fake_run)
    payload = classroom.ramp([tmp_path / "a.ipynb", tmp_path / "b.ipynb"], [1, 2, 4, 8], 0, 60, "small",
                             log=lambda _: None, logs=tmp_path / "logs")
    record = records.record(classroom.KIND, payload)
    assert [step["students"] for step in record["steps"]] == [1, 2, 4] and record["largest_passing"] == 2
    alone, two, four = record["steps"]
    assert alone["within_limit"] is None and two["within_limit"] is True and four["within_limit"] is False
    assert all(step["passed"] for step in record["steps"]), "every notebook passed: four failed on time alone"
    assert [a["slowdown"] for a in two["attempts"]] == [1.5] * 4 and four["attempts"][0]["slowdown"] == 2.5
    assert [(a["student"], a["notebook"]) for a in two["attempts"]] == [(1, "a.ipynb"), (1, "b.ipynb"),
                                                                       (2, "a.ipynb"), (2, "b.ipynb")]
    figures = classroom.summary_figures(record)
    assert figures == {"largest": 2, "worst_slowdown": 1.5, "wall_s": two["wall_s"],
                       "peak_mib": 701, "first_failure": None}
    said = lesson_figures.classroom_summary(record)
    assert "2 at once passed every notebook" in said
    assert (". With 4 at once every notebook passed, none of the students within 2x of their times alone (the "
            "slowest notebook 2.50 times its time for one student alone; over 2x: a.ipynb for 4 of the 4, b.ipynb "
            "for 4 of the 4)") in said, "the size that stopped the ramp on time"
    assert said.index("2 at once") < said.index("GPU memory") < said.index("With 4 at once"), "the 2's figures, then the 4"
    record["steps"], record["largest_passing"] = [four], None
    assert ("with 4 at once every notebook passed, none of the students within 2x of their times alone (the slowest "
            "notebook 2.50 times") in lesson_figures.classroom_summary(record)
    assert "cores busy" not in lesson_figures.classroom_summary(record), "a record without CPU times"
    four["cpu_count"] = 16
    for attempt in four["attempts"]:
        attempt["cpu_s"] = four["wall_s"] * 2 / len(four["attempts"])
    assert "kept 2.0 of the host's 16 CPU cores busy on average" in lesson_figures.classroom_summary(record)
    four["attempts"][0]["passed"] = four["passed"] = False
    assert "no classroom size tried passed; with 4 at once, b.ipynb passed for every student" in \
        lesson_figures.classroom_summary(record)
    assert "## 4 student(s): FAILED" in classroom.markdown(record)


def test_a_ramp_interrupted_in_a_larger_classroom_keeps_the_record_of_those_it_finished(tmp_path, monkeypatch):
    """Ctrl-C (or a time limit's SIGTERM) during the 4 students: the record of 1 and 2 is on disk."""
    students_run = classroom.Classroom.run

    def run_until_four(room):
        if room.students == 4:
            raise KeyboardInterrupt
        return students_run(room)

    monkeypatch.setattr(classroom.Classroom, "_run_notebook", lambda room, student, notebook, folder:
                        classroom.Attempt(student, notebook.name, True, 10.0, None))
    monkeypatch.setattr(classroom.Classroom, "run", run_until_four)
    with pytest.raises(KeyboardInterrupt):
        classroom.check([tmp_path / "a.ipynb"], [1, 2, 4], 0, 60, "small", tmp_path / "out")
    record = classroom.load(tmp_path / "out" / "classroom.json")
    assert [step["students"] for step in record["steps"]] == [1, 2] and record["largest_passing"] == 2
    assert "## 2 student(s): passed" in (tmp_path / "out" / "classroom.md").read_text()


def _instructor_record(path, size="full", free_gb=None, **seconds_or_none):
    """An instructor check's record: notebook name -> seconds (None: it failed)."""
    rows = [{"notebook": name, "passed": sec is not None, "seconds": sec or 3.0, "peak_mib": None}
            for name, sec in seconds_or_none.items()]
    payload = {"size": size, "free_gb": free_gb, "held_bytes": None, "grid": "", "notebooks": rows}
    records.save(records.record(instructor.KIND, payload, schema=instructor.SCHEMA), path)
    return path


def test_times_alone_come_from_an_instructor_check_of_the_same_size(tmp_path, monkeypatch):
    """--alone: no classroom of one first; each student held to the record's time for its notebook."""
    notebooks = [tmp_path / "a.ipynb", tmp_path / "b.ipynb"]
    good = _instructor_record(tmp_path / "good.json", **{"a.ipynb": 10.0, "b.ipynb": 20.0, "c.ipynb": 1.0})
    alone = classroom.times_alone(good, notebooks, "full")
    assert alone == {"a.ipynb": 10.0, "b.ipynb": 20.0}
    assert classroom.ramp_counts(None, "4,8", alone_given=True) == [4, 8]

    def fake_run(room, student, notebook, folder):
        return classroom.Attempt(student, notebook.name, True, 25.0, None)

    monkeypatch.setattr(classroom.Classroom, "_run_notebook", fake_run)
    payload = classroom.ramp(notebooks, [2], 0, 60, "full", log=lambda _: None, alone=alone, logs=tmp_path / "logs")
    (step,) = payload["steps"]
    assert [a["slowdown"] for a in step["attempts"]] == [2.5, 1.25, 2.5, 1.25] and step["within_limit"] is False
    assert payload["alone"] == alone and payload["largest_passing"] is None


@pytest.mark.parametrize("record, said", [
    (dict(size="small", **{"a.ipynb": 1.0}), "an instructor check at small size, not at full size"),
    (dict(free_gb=4.0, **{"a.ipynb": 1.0}), "at full size with --free-gb"),
    (dict(**{"a.ipynb": None}), "no passing run of a.ipynb in it: check those notebooks alone first"),
])
def test_times_alone_from_a_record_that_cannot_serve_are_refused_in_one_line(tmp_path, record, said):
    path = _instructor_record(tmp_path / "check.json", **record)
    with pytest.raises(classroom.ClassroomError, match=re.escape(said)):
        classroom.times_alone(path, [tmp_path / "a.ipynb"], "full")
    with pytest.raises(classroom.ClassroomError, match="--alone .*missing.json"):
        classroom.times_alone(tmp_path / "missing.json", [tmp_path / "a.ipynb"], "full")


def _read(pid: int, name: str) -> str:
    try:
        with open(f"/proc/{pid}/{name}") as file:
            return file.read()
    except OSError:
        return ""  # ended


def test_a_stuck_notebook_is_stopped_at_its_time_limit_and_says_where(tmp_path, monkeypatch):
    """On the H200 every student's CuPy notebook ran into its limit and the record said only that:
    now it names the cell, and the kernel's Python stack is kept beside the logs (--out relative,
    as the README writes it: the kernel starts in the notebook's folder)."""
    (tmp_path / "nb").mkdir()
    stuck = _notebook(tmp_path / "nb" / "stuck.ipynb", ("import time\nimport gs_course", None),
                      ("# waits\ndef wait_for_nothing():\n    time.sleep(300)\n\nwait_for_nothing()", None))
    monkeypatch.chdir(tmp_path)
    sampler = classroom.MemorySampler(None)
    room = classroom.Classroom([tmp_path / "nb" / "stuck.ipynb"], 1, 0, 20, dict(os.environ), sampler,
                               logs=classroom.Path("out"))
    assert stuck and room.run() < 300, "the classroom waited for the notebook's own end"
    (attempt,) = room.attempts
    assert not attempt.passed and attempt.seconds >= 20, "stopped before its limit"
    assert attempt.failure == ("stopped after 20 s in cell 1 (def wait_for_nothing():): the notebook's time limit "
                               "(--timeout)")
    # the rest of its 20 s went to pytest's and the kernel's start (5 s and more on a loaded 2-core machine)
    assert attempt.slowest_cells[0][0] == 1 and attempt.slowest_cells[0][1] >= 10, attempt.slowest_cells
    (logs,) = (tmp_path / "out").iterdir()
    assert re.search(r"^\[\s*[\d.]+ s\] .*::Cell 1 ", (logs / "0-stuck.log").read_text(), re.M), "no stamp"
    stacks = (logs / "0-stuck-stopped.txt").read_text()
    assert "in wait_for_nothing" in stacks and "--- process " in stacks, stacks


_BURN = "import time\nend = time.process_time() + {seconds}\nwhile time.process_time() < end: pass"


def test_the_cpu_time_counted_is_the_childs_and_its_waited_for_childrens():
    """A child that only sleeps while its own child burns a second of CPU: the second is counted
    (nbval waits for its kernel, which runs the notebook), the sleep is not."""
    burns = _BURN.format(seconds=1.0)
    parent = f"import subprocess, sys, time\ntime.sleep(0.5)\nsubprocess.run([sys.executable, '-c', {burns!r}])"
    cpu_s = processes.wait_counting_cpu(subprocess.Popen([sys.executable, "-c", parent]), 30)
    assert 1.0 <= cpu_s < 2.5
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1.0)"])
    assert processes.wait_counting_cpu(sleeper, 30) < 0.5 and sleeper.returncode == 0
    stuck = subprocess.Popen([sys.executable, "-c", "import time, sys; time.sleep(30)"])
    with pytest.raises(subprocess.TimeoutExpired):
        processes.wait_counting_cpu(stuck, 0.5)
    stuck.kill()
    stuck.wait()
    failing = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    processes.wait_counting_cpu(failing, 30)
    assert failing.returncode == 3


def test_the_cores_kept_busy_are_the_students_cpu_time_over_the_classrooms_time():
    step = {"wall_s": 10.0, "cpu_count": 16, "attempts": [{"cpu_s": 30.0}, {"cpu_s": 50.0}]}
    assert classroom.cores_busy(step) == 8.0
    assert classroom.cores_busy(step | {"attempts": [{"cpu_s": 30.0}, {"cpu_s": None}]}) is None
    assert classroom.cores_busy(step | {"attempts": [{"cpu_s": 30.0}, {}]}) is None, "a record from before"


def test_stacks_are_asked_only_of_processes_that_registered_for_them(tmp_path):
    """A process whose id has a stacks file but no SIGUSR1 handler (it took the id of one that
    ended) is left alone: the signal would end it."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (tmp_path / f"{child.pid}.txt").write_text("")
        assert processes.dump_stacks(os.getpid(), tmp_path, wait_s=0.1) == ""
        assert child.poll() is None, "a process without a handler was signalled"
    finally:
        child.kill()
        child.wait()


def test_the_running_cell_is_read_from_nbvals_verbose_log(tmp_path):
    notebook = _notebook(tmp_path / "n.ipynb", ("x = 1", None), ("# a comment\n\ny = 2", None))
    log = "n.ipynb::Cell 0 PASSED   [ 50%]\nn.ipynb::Cell 1 "
    assert classroom.running_cell(log, tmp_path / "n.ipynb") == " in cell 1 (y = 2)" and notebook
    assert classroom.running_cell("n.ipynb::Cell 0 PASSED   [ 50%]\n", tmp_path / "n.ipynb") == " after cell 0 (x = 1)"
    assert classroom.running_cell("collecting ...", tmp_path / "n.ipynb") == ""


def test_a_run_that_left_no_report_is_told_by_its_last_error_line_without_stamps():
    """nbval missing (PYTHONPATH lost on the H200, 2026-12-02): pytest's usage error, not the blank
    stamped line after it."""
    log = ("[    0.9 s] ERROR: usage: python -m pytest [options] [file_or_dir] [file_or_dir] [...]\n"
           "[    0.9 s] python -m pytest: error: unrecognized arguments: --nbval --nbval-sanitize-with\n"
           "[    0.9 s]   inifile: /work/main/pyproject.toml\n[    0.9 s]   rootdir: /work/main\n[    0.9 s] \n")
    assert classroom.last_words(log) == "python -m pytest: error: unrecognized arguments: --nbval --nbval-sanitize-with"
    assert classroom.last_words("[    1.0 s] Killed\n[    1.0 s] \n") == "Killed"
    assert classroom.last_words("[    1.0 s] \n") is None and classroom.last_words("") is None


def test_the_slowest_cells_are_read_from_the_stamped_log():
    log = ("[    0.5 s] collecting\n[    2.0 s] n.ipynb::Cell 0 PASSED\n[    3.0 s] n.ipynb::Cell 1 PASSED\n"
           "[   13.0 s] n.ipynb::Cell 2 ")
    assert classroom.slowest_cells(log, 20.0, most=2) == [[1, 10.0], [2, 7.0]]
    assert classroom.slowest_cells("collecting ...", 5.0) == []
    failed = log + ("FAILED\n[   15.0 s] ____ n.ipynb::Cell 2 ____\n[   15.1 s] FAILED n.ipynb::Cell 2 - cell outputs differ\n")
    assert classroom.slowest_cells(failed, 20.0) == [[1, 10.0], [2, 7.0], [0, 1.0]], "a failure report is no start"


def test_a_character_split_between_two_reads_is_whole_in_the_stamped_log():
    import io

    class TwoReads:
        def __init__(self, data: bytes):
            self.chunks = [data[:5], data[5:], b""]

        def read1(self, _):
            return self.chunks.pop(0)

    sink = io.StringIO()
    classroom.stamp_lines(TwoReads("abcd\N{CHECK MARK} ok\nnext\n".encode()), sink, time.perf_counter())
    assert re.fullmatch(r"\[\s*[\d.]+ s\] abcd\N{CHECK MARK} ok\n\[\s*[\d.]+ s\] next\n", sink.getvalue()), sink.getvalue()


def test_ctrl_c_stops_every_student_and_their_kernels(tmp_path):
    stuck = _notebook(tmp_path / "stuck.ipynb", ("import time\ntime.sleep(300)", None))
    proc = subprocess.Popen([sys.executable, "-m", "gs_course.cli", "instructor-check", "--students", "2",
                             "--stagger", "0", "--out", tmp_path / "out", stuck],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=paths.ROOT)
    deadline = time.time() + 120
    tree = set()
    while time.time() < deadline:  # until both students' kernels run
        tree = processes.process_tree(proc.pid, processes.parent_ids())
        kernels = [pid for pid in tree if "ipykernel" in _read(pid, "cmdline")]
        if len(kernels) == 2:
            break
        time.sleep(0.5)
    assert len(tree) > 3, "the students never started"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "every student's notebook was stopped" in err
    assert not [pid for pid in tree - {proc.pid} if processes.running(pid)], "a child outlived the classroom"
    assert json.dumps(err).count("Traceback") == 0


def test_the_instructor_check_stops_a_stuck_notebook_and_goes_on(tmp_path, capsys):
    """A notebook past --timeout fails in one line; the next notebook still runs."""
    stuck = _notebook(tmp_path / "stuck.ipynb", ("import time\ntime.sleep(300)", None))
    start = time.monotonic()
    assert main(["instructor-check", "--size", "small", "--timeout", "25", stuck, _passing(tmp_path)]) == 1
    assert time.monotonic() - start < 200, "the check waited for the notebook's own end"
    out = capsys.readouterr().out
    assert "stuck.ipynb: stopped after 25 s: the notebook's time limit (--timeout)" in out
    assert "| stuck.ipynb | FAIL | " in out and "| passing.ipynb | pass | " in out


def test_sigterm_stops_the_instructor_check_with_its_notebook_and_kernel(tmp_path):
    """On the H200 a step's time limit (`timeout`, SIGTERM) stopped the check alone: its nbval run
    and kernel went on, holding 7 GB of the GPU. Now they end with it."""
    stuck = _notebook(tmp_path / "stuck.ipynb", ("import time\ntime.sleep(300)", None))
    proc = subprocess.Popen([sys.executable, "-m", "gs_course.cli", "instructor-check", "--size", "small", stuck],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=paths.ROOT)
    deadline = time.time() + 120
    tree = set()
    while time.time() < deadline:  # until the notebook's kernel runs
        tree = processes.process_tree(proc.pid, processes.parent_ids())
        if any("ipykernel" in _read(pid, "cmdline") for pid in tree):
            break
        time.sleep(0.5)
    assert len(tree) > 2, "the notebook never started"
    proc.terminate()
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "the running notebook and its kernels were stopped" in err
    time.sleep(2)  # a kernel whose parent ended polls for it
    assert not [pid for pid in tree - {proc.pid} if processes.running(pid)], "a child outlived the check"
