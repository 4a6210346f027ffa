"""The instructor check's record (its table and summary rendered from it), the small-GPU rehearsal's
helper that holds the GPU's memory, and `gs-course peak-memory` (on stand-ins: the notebooks
themselves run in test_cli.py, too slow to run twice)."""

import json
import os
import subprocess
import sys

import pytest

from gs_course.cli import main
from gs_course.delivery import documents, instructor, lesson_figures, record_views
from gs_course.measurement import records

#: A helper that holds nothing, as HOLDER does on a GPU: says how much, waits for its input to close.
FAKE_HOLDER = "import sys\nprint('held', 12345, flush=True)\nsys.stdin.read()"


@pytest.fixture
def notebooks_faked(monkeypatch):
    """run_notebook and doctor replaced: 3_... passes with a peak, 1_... fails unmeasured."""
    ran = []

    def run_notebook(notebook, size, root=None, timeout_s=None):
        ran.append((notebook.name, size))
        passed = not notebook.name.startswith("1_")
        return instructor.Row(notebook.name, passed, 12.4, 3031 if passed else None, 20.6 if passed else None)

    monkeypatch.setattr(instructor, "run_notebook", run_notebook)
    monkeypatch.setattr(instructor, "doctor", lambda: None)
    return ran


def test_the_check_writes_its_record_and_renders_the_summary_from_it(tmp_path, notebooks_faked, monkeypatch):
    monkeypatch.setenv("COMMIT", "abc1234")
    summary = tmp_path / "summary.md"
    assert instructor.check(["3", "1"], "small", summary, tmp_path) is False  # one notebook failed
    assert notebooks_faked == [("3_Python_GPU_CuPy.ipynb", "small"), ("1_Python_GPU_JAX.ipynb", "small")]
    record = instructor.load(tmp_path / "instructor-check.json")
    assert record["provenance"]["commit"] == "abc1234" and record["size"] == "small" and record["free_gb"] is None
    monkeypatch.setenv("LEGATE_CONFIG", "--cpus 3 --gpus 0")  # the settings the kernels started with, as they were
    monkeypatch.setenv("REALM_DEFAULT_ARGS", "")
    assert record["settings"]["cores"] == len(os.sched_getaffinity(0))
    assert instructor.kernel_settings() == {"cores": len(os.sched_getaffinity(0)), "LEGATE_CONFIG": "--cpus 3 --gpus 0",
                                            "REALM_DEFAULT_ARGS": ""}
    assert [(r["notebook"], r["passed"], r["peak_mib"]) for r in record["notebooks"]] == [
        ("3_Python_GPU_CuPy.ipynb", True, 3031), ("1_Python_GPU_JAX.ipynb", False, None)]
    text = summary.read_text()
    assert text == instructor.markdown(record) and text.startswith("# Instructor check, small size\n")
    gpu = record["provenance"]["gpu"] or "none (CPU)"
    assert f"| 3_Python_GPU_CuPy.ipynb | pass | 12 s | 21 s | {gpu} | 3,031 MiB |" in text
    assert "| 1_Python_GPU_JAX.ipynb | FAIL | 12 s | - |" in text, "stopped: no CPU time"
    assert record_views.show(tmp_path / "instructor-check.json") == text


def test_a_record_of_another_kind_is_refused(tmp_path):
    records.write("bench", {}, tmp_path / "x.json", schema=2)
    with pytest.raises(records.ResultError, match="is a gs-course bench result, not a instructor-check result"):
        instructor.load(tmp_path / "x.json")


def test_the_cupy_tutorial_quotes_its_peak_from_the_record(tmp_path, monkeypatch, notebooks_faked):
    monkeypatch.setattr(lesson_figures, "result_path", lambda machine, name: tmp_path / machine / name)
    instructor.check(["3"], "full", None, tmp_path / "h200")
    line = lesson_figures.cupy_gpu_memory(lesson_figures._instructor_check("h200"))
    assert "at most 3,031 MiB" in line and "`results/h200/instructor-check.json`" in line


def test_free_gb_holds_the_memory_while_the_notebooks_run_and_names_its_record(tmp_path, notebooks_faked, monkeypatch):
    held = {}

    class Holder(instructor.FreeMemoryHolder):
        def __init__(self, keep_bytes):
            super().__init__(keep_bytes, program=FAKE_HOLDER)
            held["keep"] = keep_bytes

        def __exit__(self, *exc_info):
            held["running_until_the_end"] = self._proc.poll() is None
            super().__exit__(*exc_info)
            held["ended"] = self._proc.returncode == 0  # on its own, its input closed: not killed

    monkeypatch.setattr(instructor, "FreeMemoryHolder", Holder)
    assert instructor.check(["3"], "auto", None, tmp_path, free_gb=2) is True
    assert held == {"keep": 2_000_000_000, "running_until_the_end": True, "ended": True}
    record = instructor.load(tmp_path / "small-gpu-2gb.json")
    assert record["free_gb"] == 2 and record["held_bytes"] == 12345 and record["size"] == "auto"
    assert "2 GB of GPU memory left free" in instructor.markdown(record).splitlines()[0]


def test_a_helper_that_fails_says_why_in_one_line():
    failing = "import sys\nsys.exit('CUDA driver version is insufficient')"
    with pytest.raises(instructor.FreeMemoryError, match="helper holding the GPU's memory failed: CUDA driver version"):
        with instructor.FreeMemoryHolder(10, program=failing):
            pass


@pytest.mark.parametrize("args, said", [
    (["--free-gb", "0"], "--free-gb must be > 0 GB"),
    (["--free-gb", "2", "--students", "2"], "--free-gb is the single check's"),
    (["--out", "/no/such/folder"], "--out /no/such/folder: no such folder, nor /no/such: make it first"),
])
def test_instructor_check_refuses_bad_options_in_one_line(args, said, capsys):
    assert main(["instructor-check", *args]) == 2
    assert said in capsys.readouterr().err


def test_peak_memory_runs_the_command_and_keeps_its_exit_code(capsys):
    assert main(["peak-memory", "--", sys.executable, "-c", "print('ran'); raise SystemExit(3)"]) == 3
    out = capsys.readouterr().out
    assert "GPU memory used: " in out
    assert main(["peak-memory"]) == 2 and "give the command to run" in capsys.readouterr().err
    assert main(["peak-memory", "no-such-program-here"]) == 2 and "no program 'no-such-program-here'" in capsys.readouterr().err


def test_documents_show_and_figure_render_a_record_on_demand(tmp_path, capsys):
    bench_record = documents.paths.ROOT / "results" / "h200" / "bench.json"
    assert documents.main(["--show", str(bench_record)]) == 0
    assert capsys.readouterr().out.startswith(documents.bench.markdown(documents.bench.load(bench_record)))
    assert documents.main(["--figure", str(bench_record), str(tmp_path / "bench.png")]) == 0
    assert (tmp_path / "bench.png").stat().st_size > 5000
    (tmp_path / "other.json").write_text(json.dumps({"kind": "explorer-fps"}))
    assert documents.main(["--show", str(tmp_path / "other.json")]) == 2
    assert "not a record this renders" in capsys.readouterr().err
    classroom = documents.paths.ROOT / "results" / "h200" / "classroom.json"
    assert documents.main(["--figure", str(classroom), str(tmp_path / "c.png")]) == 2
    assert "has a table (--show), no figure" in capsys.readouterr().err


def test_the_helper_program_is_valid_python():
    compile(instructor.HOLDER, "HOLDER", "exec")
    done = subprocess.run([sys.executable, "-c", FAKE_HOLDER, "1"], input="", capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["held", "12345"]
