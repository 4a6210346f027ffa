"""The viewing module: run files read one image at a time and in order, early stops shown with their
count, bad files refused in one line, the explorer's steering matching the reference model."""

import importlib.util
import io
import sys

import h5py
import numpy as np
import pytest
from PIL import Image

from gs_course import backends, cli
from gs_course.lessons import view
from gs_course.model import PARITY_ATOL, initial_state, reference_run, reference_step
from gs_course.output import FrameReader, FrameWriter, RunFileError
from gs_course.parameters import Parameters

PARAMS = Parameters(feed=0.025, kill=0.055, dt=0.8)
ROWS, COLS, STEPS = 21, 34, 5


def _write_run(path, images=6, planned=None, close=True):
    """A run file whose image i is a constant i / 100: which image was read shows in its values."""
    writer = FrameWriter(path, planned or images, ROWS, COLS, PARAMS, STEPS)
    for i in range(images):
        writer.write(np.full((ROWS, COLS), i / 100, np.float32))
    if close:
        writer.close()
    else:  # a process killed mid-run: the file is never closed by FrameWriter, its length stays planned
        writer._file.close()
    return path


class _CountingDataset:
    """Stands for the h5py dataset and records what each read returned."""

    def __init__(self, dataset):
        self.dataset, self.reads = dataset, []

    def __getitem__(self, key):
        data = self.dataset[key]
        self.reads.append(data)
        return data

    def __getattr__(self, name):
        return getattr(self.dataset, name)


def _counted(run: view.Run) -> _CountingDataset:
    counting = run.reader.dataset = _CountingDataset(run.reader.dataset)
    return counting


def _gif_frames(path) -> list[np.ndarray]:
    with Image.open(path) as gif:
        frames = []
        for i in range(gif.n_frames):
            gif.seek(i)
            frames.append(np.asarray(gif.convert("RGB")))
    return frames


def test_saving_a_movie_reads_one_image_at_a_time_in_order(tmp_path):
    with view.Run(_write_run(tmp_path / "run.h5")) as run:
        reads = _counted(run)
        run.save(tmp_path / "run.gif", fps=5)
    assert all(data.shape == (ROWS, COLS) for data in reads.reads), "a read of more than one image"
    order = [round(float(data[0, 0]) * 100) for data in reads.reads]
    assert order[-6:] == list(range(6))
    assert len(_gif_frames(tmp_path / "run.gif")) == 6


def test_a_gif_is_written_frame_by_frame_in_the_memory_of_one(tmp_path):
    """Each frame reaches the file before the next image is read: memory holds one frame, whatever
    the run's length (Pillow's animated GIF kept every frame to the end, 2 MB a frame)."""
    out, sizes = tmp_path / "run.gif", []

    class Watching(_CountingDataset):  # the GIF's size on disk at each read of an image
        def __getitem__(self, key):
            sizes.append(out.stat().st_size if out.exists() else 0)
            return super().__getitem__(key)

    with view.Run(_write_run(tmp_path / "run.h5", images=8)) as run:
        run.reader.dataset = Watching(run.reader.dataset)
        run.save(out, fps=5, dpi=40)
    # the first read sizes the figure; then each image's read finds the file grown by the one before
    assert len(sizes) == 9 and all(later > earlier for earlier, later in zip(sizes[1:], sizes[2:])), sizes
    assert len(_gif_frames(out)) == 8


def test_the_player_reads_the_image_it_shows(tmp_path):
    pytest.importorskip("ipywidgets")
    with view.Run(_write_run(tmp_path / "run.h5")) as run:
        player = run.show()
        reads = _counted(run)
        slider = player.children[0].children[1]
        picture = player.children[1]
        for index in (3, 1, 5):
            before = picture.value
            slider.value = index
            assert picture.value != before
        assert [round(float(data[0, 0]) * 100) for data in reads.reads] == [3, 1, 5]


def test_a_png_is_the_image_asked_for_with_its_step_and_parameters(tmp_path):
    with view.Run(_write_run(tmp_path / "run.h5")) as run:
        fig = run.figure(2)
        assert fig.axes[0].get_title() == "V after 15 steps, F 0.025, k 0.055, dt 0.8"
        assert fig.axes[0].images[0].get_array()[0, 0] == pytest.approx(0.02)
        assert len(fig.axes) == 2, "no colour bar"
        run.save(tmp_path / "frame.png", index=2)
    assert Image.open(tmp_path / "frame.png").format == "PNG"


@pytest.mark.parametrize("close", [True, False], ids=["stopped", "killed"])
def test_a_run_stopped_early_shows_the_images_it_holds_and_says_how_many(tmp_path, close):
    path = _write_run(tmp_path / "stopped.h5", images=3, planned=10, close=close)
    with view.Run(path) as run:
        assert len(run.reader) == 3
        assert "holds 3 of its 10 images" in run.note
        run.save(tmp_path / "stopped.gif")
    assert len(_gif_frames(tmp_path / "stopped.gif")) == 3


def test_a_run_without_images_is_refused(tmp_path):
    with pytest.raises(RunFileError, match="no image yet"):
        view.Run(_write_run(tmp_path / "empty.h5", images=0, planned=4))


def _show(capsys, *args) -> tuple[int, list[str]]:
    code = cli.main(["show", *map(str, args)])
    return code, capsys.readouterr().err.strip().splitlines()


def _mp4_frames(path) -> int:
    import imageio_ffmpeg

    frames = imageio_ffmpeg.read_frames(str(path))
    next(frames)  # the stream's metadata
    return sum(1 for _ in frames)


NO_FFMPEG = importlib.util.find_spec("imageio_ffmpeg") is None


@pytest.mark.parametrize("name, images_in", [
    ("frame.png", lambda path: 1 if Image.open(path).format == "PNG" else 0),
    ("run.gif", lambda path: len(_gif_frames(path))),
    pytest.param("run.mp4", _mp4_frames, marks=pytest.mark.skipif(
        NO_FFMPEG, reason="MP4 needs imageio-ffmpeg (the lab extra), not installed here")),
], ids=["png", "gif", "mp4"])
def test_show_saves_each_format(tmp_path, capsys, name, images_in):
    """A PNG of one image, a GIF and an MP4 of the six, each a file of its format."""
    path = _write_run(tmp_path / "run.h5")
    assert cli.main(["show", str(path), "--out", str(tmp_path / name)]) == 0
    assert capsys.readouterr().out.strip().endswith(f"saved {tmp_path / name}")
    assert images_in(tmp_path / name) == (1 if name.endswith(".png") else 6)


def test_an_mp4_without_imageio_ffmpeg_gets_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", None)  # its import fails
    code, lines = _show(capsys, _write_run(tmp_path / "run.h5"), "--out", tmp_path / "run.mp4")
    assert code == cli.EXIT_USAGE and lines == ["gs-course: error: saving MP4 needs imageio-ffmpeg "
                                                "(pip install imageio-ffmpeg); or save a .gif"]


def test_bad_files_get_one_line(tmp_path, capsys):
    (tmp_path / "text.h5").write_text("not HDF5")
    with h5py.File(tmp_path / "other.h5", "w") as f:
        f["temperature"] = np.zeros((4, 4))
    out = tmp_path / "frame.png"
    for path, expected in (
        (tmp_path / "missing.h5", "no file"),
        (tmp_path / "text.h5", "is not an HDF5 file"),
        (tmp_path / "other.h5", "is not a course run: no 3-D dataset 'matrix'"),
    ):
        code, lines = _show(capsys, path, "--out", out)
        assert code == cli.EXIT_USAGE and len(lines) == 1 and expected in lines[0], lines
    good = _write_run(tmp_path / "run.h5")
    for extra, expected in ((["--out", tmp_path / "run.jpg"], "give a file ending in"),
                            (["--out", out, "--image", "6"], "--image 6")):
        code, lines = _show(capsys, good, *extra)
        assert code == cli.EXIT_USAGE and len(lines) == 1 and expected in lines[0], lines
    assert not out.exists()


def test_the_lazy_reader_and_read_frames_agree(tmp_path):
    path = _write_run(tmp_path / "run.h5", images=4, planned=7, close=False)
    with FrameReader(path) as reader:
        assert [float(frame[0, 0]) for frame in reader] == pytest.approx([0, 0.01, 0.02, 0.03])
        assert float(reader[-1][0, 0]) == pytest.approx(0.03) and not reader.complete
        assert reader.parameters() == PARAMS and reader.steps_per_image == STEPS
        with pytest.raises(IndexError):
            reader[4]


def test_mosaic_puts_each_pattern_at_its_feed_and_kill():
    feeds, kills = np.array([0.02, 0.03, 0.04]), np.array([0.05, 0.06])
    patterns = np.zeros((3, 2, 4, 5))
    patterns[2, 0] = 0.5  # F 0.04, k 0.05 alone is bright
    fig = view.mosaic(patterns, feeds, kills)
    ax = fig.axes[0]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("kill rate k", "feed rate F")
    picture = ax.images[0]
    left, right, bottom, top = picture.get_extent()
    tiled = picture.get_array()
    # the tile whose centre is at (k 0.05, F 0.04): rows from the bottom (origin lower)
    row = int((0.04 - bottom) / (top - bottom) * tiled.shape[0])
    col = int((0.05 - left) / (right - left) * tiled.shape[1])
    assert tiled[row, col] == 0.5 and tiled.sum() == 0.5 * 20


def _explorer_backends():
    return [name for name in ("numpy", "jax") if backends.probe(name).ok]


@pytest.mark.parametrize("name", _explorer_backends())
def test_the_explorer_follows_the_reference_across_a_change_of_parameters(name):
    explorer = view.Explorer(ROWS, COLS, params=PARAMS, backend=name, steps_per_frame=STEPS)
    png = explorer.frame()
    assert Image.open(io.BytesIO(png)).size == (COLS, ROWS)
    u, v = reference_run(ROWS, COLS, STEPS, PARAMS)
    changed = PARAMS.replace(feed=0.04, kill=0.06, dt=0.5)
    explorer.set_params(changed)
    explorer.frame()
    for _ in range(STEPS):
        u, v = reference_step(u, v, changed)
    assert explorer.sim.steps_done == 2 * STEPS
    np.testing.assert_allclose(explorer.sim.fetch_v(), v, rtol=0, atol=PARITY_ATOL)


@pytest.mark.parametrize("name", _explorer_backends())
def test_a_click_drops_a_seed_where_it_lands(name):
    explorer = view.Explorer(ROWS, COLS, params=PARAMS, backend=name)
    explorer.drop_seed(3, 30)
    u, v = explorer.sim.fetch()
    assert v[3, 30] == 1 and u[3, 30] == 0 and v[ROWS - 1, 0] == 0
    expected_v = initial_state(ROWS, COLS)[1]
    expected_v[v == 1] = 1
    np.testing.assert_array_equal(v, expected_v)  # the first seed is still there
    explorer.frame()
    assert explorer.sim.fetch_v()[3, 30] < 1  # and it runs on from there


def test_set_state_replaces_the_state(case):
    name, formulation = case
    sim = backends.create(name, PARAMS, ROWS, COLS, formulation)
    rng = np.random.default_rng(0)
    u, v = rng.random((2, ROWS, COLS), dtype=np.float32)
    sim.set_state(u, v)
    sim.advance(STEPS)
    for _ in range(STEPS):
        u, v = reference_step(u, v, PARAMS)
    np.testing.assert_allclose(sim.fetch_v(), v, rtol=0, atol=PARITY_ATOL)


def test_the_explorer_app_steers_the_simulation():
    pytest.importorskip("ipywidgets")
    explorer = view.Explorer(ROWS, COLS, params=PARAMS, backend="numpy")
    app = explorer.show()
    w = explorer._widgets
    first = w["image"].value
    w["kill"].value = 0.06  # paused: the change runs one frame, so the picture answers
    assert explorer.sim.params.kill == 0.06 and w["image"].value != first and "step 32," in w["status"].value
    w["preset"].value = "maze"
    assert (w["feed"].value, w["kill"].value) == (0.029, 0.057) and explorer.sim.params.feed == 0.029
    assert "step 64," in w["status"].value
    w["dt"].value = 2.5  # past the stable limit: the status says so, no warning escapes
    for _ in range(40):
        explorer.frame()
    assert "past the stable limit" in w["status"].value
    w["reset"].click()
    assert explorer.sim.steps_done == explorer.steps_per_frame and app is explorer.show()
    assert {"numpy", "jax"} <= set(w["backend"].options)


def test_the_explorer_loads_no_backend_unasked(monkeypatch):
    """Listing the backends must not start Legate or CUDA in a JAX notebook."""
    pytest.importorskip("ipywidgets")
    probed = []
    probe = backends.probe
    monkeypatch.setattr(backends, "probe", lambda name: probed.append(name) or probe(name))
    view.Explorer(ROWS, COLS, params=PARAMS, backend="numpy").show()
    assert set(probed) == {"numpy"}
