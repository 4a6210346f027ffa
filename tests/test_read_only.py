"""A folder that cannot be written, a damaged run file: one line that says what to do, before any
work is lost, never a traceback. The read-only folders are read-only tmpfs mounts where the tests
run as root (root writes through any permission bits), folders without write permission otherwise."""

import json
import os
import subprocess

import numpy as np
import pytest

from gs_course.measurement import bench
from gs_course.cli import main
from gs_course.output import FrameWriter
from gs_course.parameters import Parameters


@pytest.fixture
def read_only(tmp_path):
    folder = tmp_path / "read-only"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o500)
        yield folder
        folder.chmod(0o700)
        return
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(folder)], capture_output=True).returncode:
        pytest.skip("root, and no read-only tmpfs can be mounted here")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith("gs-course: error: ") and "\n" not in err and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("option", ["--out", "--output-dir"])
def test_bench_refuses_a_read_only_folder_before_it_runs(option, read_only, monkeypatch, capsys):
    ran = []
    monkeypatch.setattr(bench, "run", lambda *args, **kwargs: ran.append(args) or pytest.fail("the benchmark ran"))
    assert main(["bench", "--quick", "--only", "numpy", option, str(read_only)]) == 2
    assert not ran
    assert f"{option} {read_only} cannot be written" in _one_line_error(capsys)


def test_kernels_in_a_read_only_prefix_say_so_in_one_line(read_only, tmp_path, capsys):
    (tmp_path / "gs-course.sif").write_text("")
    assert main(["kernels", "--image", str(tmp_path / "gs-course.sif"), "--prefix", str(read_only)]) == 2
    assert f"cannot install the kernels in --prefix {read_only}" in _one_line_error(capsys)


def test_kernels_name_the_image_by_its_absolute_path(tmp_path, monkeypatch):
    """The hub starts a kernel from its own folder: a relative --image would name no file there."""
    (tmp_path / "gs-course.sif").write_text("")
    monkeypatch.chdir(tmp_path)
    assert main(["kernels", "--image", "gs-course.sif", "--prefix", str(tmp_path / "prefix")]) == 0
    spec = json.loads((tmp_path / "prefix" / "share" / "jupyter" / "kernels" / "gs-course" / "kernel.json").read_text())
    assert spec["argv"][4] == str(tmp_path / "gs-course.sif")


def test_show_of_a_damaged_chunk_says_the_file_is_damaged(tmp_path, capsys):
    import h5py

    run = tmp_path / "run.h5"
    rng = np.random.default_rng(0)
    with FrameWriter(run, 3, 32, 48, Parameters(), 4) as writer:
        for _ in range(3):
            writer.write(rng.random((32, 48)).astype(np.float32))
    with h5py.File(run) as f:
        chunk = f["matrix"].id.get_chunk_info(1)  # image 1's first (compressed) chunk
    with open(run, "r+b") as f:
        f.seek(chunk.byte_offset)
        f.write(b"\xff" * chunk.size)
    assert main(["show", str(run), "--out", str(tmp_path / "frame.png"), "--image", "1"]) == 2
    assert f"{run}: an image cannot be read, the file is damaged" in _one_line_error(capsys)
