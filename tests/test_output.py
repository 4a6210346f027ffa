"""HDF5 output: the school's layout, frame i after (i + 1) x e steps, early stops keep what is done."""

import h5py
import numpy as np
import pytest

from gs_course import backends
from gs_course.model import PARITY_ATOL, reference_run
from gs_course.output import DATASET, BackgroundWriter, FrameWriter, OutputError, WriterClosedError, read_frames
from gs_course.parameters import Parameters
from gs_course.runner import simulate

PARAMS = Parameters(feed=0.025, kill=0.055, dt=0.8)
ROWS, COLS, STEPS_PER_IMAGE = 23, 41, 7


def _writer(path, images=5, **kwargs):
    return FrameWriter(path, images, ROWS, COLS, PARAMS, STEPS_PER_IMAGE, **kwargs)


def _assert_frames_follow_the_reference(frames):
    for i, frame in enumerate(frames):
        _, v = reference_run(ROWS, COLS, (i + 1) * STEPS_PER_IMAGE, PARAMS)
        np.testing.assert_allclose(frame, v, rtol=0, atol=PARITY_ATOL, err_msg=f"image {i}")


def test_layout_and_attributes(tmp_path):
    path = tmp_path / "out.h5"
    sim = backends.create("numpy", PARAMS, ROWS, COLS)
    with _writer(path, backend="numpy") as writer:
        report = simulate(sim, 5, STEPS_PER_IMAGE, writer)
    assert report.images == 5 and report.steps == 35
    with h5py.File(path) as f:
        assert list(f) == [DATASET]
        dataset = f[DATASET]
        assert dataset.shape == (5, ROWS, COLS) and dataset.dtype == np.float32
        assert dataset.chunks == (1, ROWS, COLS)
        assert dataset.compression == "gzip" and dataset.compression_opts == 5
        attrs = dict(dataset.attrs)
    assert attrs["images_written"] == 5 and attrs["complete"]
    assert (attrs["feed"], attrs["kill"], attrs["dt"], attrs["du"], attrs["dv"]) == (0.025, 0.055, 0.8, 0.1, 0.05)
    assert attrs["nbimage"] == 5 and attrs["nbextrastep"] == STEPS_PER_IMAGE and attrs["backend"] == "numpy"
    frames, _ = read_frames(path)
    _assert_frames_follow_the_reference(frames)


def test_without_deflate_nothing_is_compressed(tmp_path):
    with _writer(tmp_path / "raw.h5", images=1, deflate=0) as writer:
        writer.write(np.zeros((ROWS, COLS), np.float32))
    with h5py.File(tmp_path / "raw.h5") as f:
        assert f[DATASET].compression is None


def test_an_interrupted_run_keeps_every_completed_image(tmp_path):
    path = tmp_path / "stopped.h5"

    def stop_after_third(image):
        if image == 2:
            raise KeyboardInterrupt

    sim = backends.create("numpy", PARAMS, ROWS, COLS)
    with pytest.raises(KeyboardInterrupt), _writer(path, images=10) as writer:
        simulate(sim, 10, STEPS_PER_IMAGE, writer, on_image=stop_after_third)
    frames, attrs = read_frames(path)
    assert frames.shape == (3, ROWS, COLS) and attrs["images_written"] == 3 and not attrs["complete"]
    _assert_frames_follow_the_reference(frames)


class _FailingSimulation:
    """Stands for a device or a disk failing at the third image (e.g. 'No space left on device')."""

    def __init__(self, good):
        self.good, self.calls = good, 0

    def advance(self, steps):
        pass

    def synchronize(self):
        pass

    def fetch_v(self):
        self.calls += 1
        if self.calls > self.good:
            raise OSError(28, "No space left on device")
        return np.full((ROWS, COLS), self.calls, np.float32)


def test_a_failure_mid_run_keeps_the_images_before_it(tmp_path):
    path = tmp_path / "failed.h5"
    with pytest.raises(OSError, match="No space left"), _writer(path, images=6) as writer:
        simulate(_FailingSimulation(good=2), 6, STEPS_PER_IMAGE, writer)
    frames, attrs = read_frames(path)
    assert frames.shape == (2, ROWS, COLS) and attrs["images_written"] == 2
    assert frames[0].max() == 1 and frames[1].min() == 2


def test_a_full_file_refuses_more_images(tmp_path):
    with _writer(tmp_path / "full.h5", images=1) as writer:
        writer.write(np.zeros((ROWS, COLS), np.float32))
        with pytest.raises(OutputError, match="already holds its 1 images"):
            writer.write(np.zeros((ROWS, COLS), np.float32))


@pytest.mark.parametrize(
    "make_path, message",
    [
        (lambda tmp: tmp / "missing" / "out.h5", "folder .* does not exist"),
        (lambda tmp: tmp, "is a folder: give a file name"),
        (lambda tmp: "/proc/gs-course-test.h5", "cannot write /proc/gs-course-test.h5"),
    ],
)
def test_unwritable_outputs_are_refused_with_the_reason(tmp_path, make_path, message):
    with pytest.raises(OutputError, match=message):
        _writer(make_path(tmp_path))


def test_background_writer_writes_the_same_file(tmp_path):
    sim = backends.create("numpy", PARAMS, ROWS, COLS)
    with BackgroundWriter(_writer(tmp_path / "bg.h5"), depth=2) as writer:
        simulate(sim, 5, STEPS_PER_IMAGE, writer)
    assert writer.written == 5
    frames, attrs = read_frames(tmp_path / "bg.h5")
    assert frames.shape == (5, ROWS, COLS) and attrs["complete"]
    _assert_frames_follow_the_reference(frames)


def test_background_writer_keeps_the_handed_images_when_interrupted(tmp_path):
    def stop_after_fourth(image):
        if image == 3:
            raise KeyboardInterrupt

    sim = backends.create("numpy", PARAMS, ROWS, COLS)
    with pytest.raises(KeyboardInterrupt), BackgroundWriter(_writer(tmp_path / "bg.h5", images=10)) as writer:
        simulate(sim, 10, STEPS_PER_IMAGE, writer, on_image=stop_after_fourth)
    frames, attrs = read_frames(tmp_path / "bg.h5")
    assert frames.shape == (4, ROWS, COLS) and attrs["images_written"] == 4 and not attrs["complete"]
    _assert_frames_follow_the_reference(frames)


def test_background_writer_reports_a_write_error_once(tmp_path):
    writer = BackgroundWriter(_writer(tmp_path / "bg.h5", images=1))
    writer.write(np.zeros((ROWS, COLS), np.float32))
    writer.write(np.zeros((ROWS, COLS), np.float32))  # one too many: fails in the writing thread
    with pytest.raises(OutputError, match="already holds its 1 images"):
        writer.close()
    writer.close()  # reported once; closing again is harmless
    frames, _ = read_frames(tmp_path / "bg.h5")
    assert frames.shape == (1, ROWS, COLS)


def test_background_writer_refuses_a_write_once_closed(tmp_path):
    """No thread drains a closed writer's queue: writes after close must fail at once, every one of
    them, never queue silently until the queue is full and then wait for ever."""
    with BackgroundWriter(_writer(tmp_path / "bg.h5", images=4), depth=4) as writer:
        writer.write(np.zeros((ROWS, COLS), np.float32))
    for _ in range(2):  # within depth: without the check they would queue silently (the fifth would wait for ever)
        with pytest.raises(WriterClosedError, match="this writer is closed: write inside the with block"):
            writer.write(np.zeros((ROWS, COLS), np.float32))
    frames, _ = read_frames(tmp_path / "bg.h5")
    assert frames.shape == (1, ROWS, COLS)


def test_frame_writer_refuses_a_write_once_closed(tmp_path):
    with _writer(tmp_path / "fw.h5", images=2) as writer:
        writer.write(np.zeros((ROWS, COLS), np.float32))
    with pytest.raises(WriterClosedError, match="this writer is closed"):
        writer.write(np.zeros((ROWS, COLS), np.float32))
