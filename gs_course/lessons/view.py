"""Pictures of the Gray-Scott model: one image, a run file animated, a mosaic of (F, k), a live explorer.

A full run file holds 1000 images of 1080 x 1920 (8.3 GB), so a run is animated and saved one
image at a time through `output.FrameReader`: memory holds one image whatever the file's size.
The explorer steers a running simulation on any backend from sliders; it needs `ipywidgets`
(the course's `lab` extra), and `ipyevents` for the click that drops a seed.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib.util
import io
import os
import warnings
from pathlib import Path

import numpy as np

from .. import backends
from ..measurement import timer
from ..model import seed_block
from ..output import FrameReader, RunFileError
from ..parameters import PRESETS, Parameters

#: One fixed colour scale, so that images compare by eye: V's patterns stay below about 0.5 (only
#: the seed starts at 1, shown in the top colour, as are values past the scale).
LIMITS = (0.0, 0.5)
COLORMAP = "viridis"
#: What `save` writes, by the output's suffix.
FORMATS = (".png", ".gif", ".mp4")


def describe(params: Parameters | None, step: int | None = None, field: str = "V") -> str:
    """'V after 32,000 steps, F 0.014, k 0.054, dt 1': the title of every picture of a run."""
    title = field if step is None else f"{field} after {step:,} steps"
    if params is not None:
        title += f", F {params.feed:g}, k {params.kill:g}, dt {params.dt:g}"
        if (params.du, params.dv) != (Parameters.du, Parameters.dv):
            title += f", Du {params.du:g}, Dv {params.dv:g}"
    return title


def inline(fig):
    """The figure, made displayable in IPython: figures made without pyplot (so that none piles up
    in pyplot's list) show inline only once IPython has a PNG formatter for them."""
    try:
        from IPython import get_ipython
        from IPython.core.pylabtools import select_figure_formats
    except ImportError:
        return fig
    shell = get_ipython()
    if shell is not None:
        select_figure_formats(shell, {"png"})
    return fig


def image(values: np.ndarray, step: int | None = None, params: Parameters | None = None, field: str = "V",
          ax=None):
    """One image of V (or U) with its colour bar; the step and the parameters in the title.

    Returns the matplotlib Figure (shown inline as the last expression of a notebook cell).
    """
    from matplotlib.figure import Figure

    values = np.asarray(values)
    if ax is None:
        rows, cols = values.shape
        width = 7.0
        fig = Figure(figsize=(width, max(2.5, width * rows / cols * 0.85)), layout="constrained")
        ax = fig.subplots()
    picture = ax.imshow(values, cmap=COLORMAP, vmin=LIMITS[0], vmax=LIMITS[1], interpolation="nearest")
    ax.figure.colorbar(picture, ax=ax, label=field, shrink=0.9, extend="max")
    ax.set(title=describe(params, step, field), xlabel="column", ylabel="row")
    return inline(ax.figure)


class Run:
    """A run file's images as pictures, read one at a time: shown with a slider and a play button
    in a notebook (`show()`), saved as PNG, GIF or MP4 (`save`).

    Raises RunFileError (one line) for a missing file, a file that is not HDF5 or not a course run,
    and for a run without a single image. A run stopped early shows the images it holds, and says
    how many in `note`.
    """

    def __init__(self, path: str | os.PathLike):
        self.reader = FrameReader(path)
        if len(self.reader) == 0:
            self.reader.close()
            raise RunFileError(f"{self.reader.path} holds no image yet: the run stopped before its first one")
        self.params = self.reader.parameters()
        self._figure = self._picture = None

    @property
    def note(self) -> str:
        """What the file holds: every image, or how many of those planned (a run stopped early)."""
        held = len(self.reader)
        if self.reader.complete:
            return f"{self.reader.path.name}: {held} images"
        return (f"{self.reader.path.name}: the run stopped early; it holds {held} of its "
                f"{self.reader.planned} images, shown here")

    def step(self, index: int) -> int | None:
        """Steps done at image `index` (image i is stored after (i + 1) x nbextrastep steps)."""
        steps = self.reader.steps_per_image
        return None if steps is None else (index + 1) * steps

    def figure(self, index: int = -1):
        """The figure of image `index`, drawn into one figure reused for every image."""
        index %= len(self.reader)
        frame = self.reader[index]
        if self._figure is None:
            self._figure = image(frame, self.step(index), self.params)
            self._picture = self._figure.axes[0].images[0]
        else:
            self._picture.set_data(frame)
            self._figure.axes[0].set_title(describe(self.params, self.step(index)))
        return self._figure

    def png(self, index: int, dpi: int = 80) -> bytes:
        buffer = io.BytesIO()
        self.figure(index).savefig(buffer, format="png", dpi=dpi)
        return buffer.getvalue()

    def show(self, interval_ms: int = 200):
        """A player for a notebook: play, a slider over the images, the image (read on each move)."""
        import ipywidgets as widgets

        count = len(self.reader)
        picture = widgets.Image(value=self.png(0), format="png")
        slider = widgets.IntSlider(value=0, min=0, max=count - 1, description="image", continuous_update=False)
        play = widgets.Play(value=0, min=0, max=count - 1, interval=interval_ms, description="play")
        widgets.jslink((play, "value"), (slider, "value"))
        slider.observe(lambda change: setattr(picture, "value", self.png(change["new"])), names="value")
        return widgets.VBox([widgets.HBox([play, slider, widgets.Label(self.note)]), picture])

    def save(self, out: str | os.PathLike, fps: int = 10, index: int = -1, dpi: int = 100) -> Path:
        """PNG: image `index` (the last by default); GIF, MP4: every image in order, at `fps`."""
        out = Path(out)
        suffix = out.suffix.lower()
        if suffix not in FORMATS:
            raise ValueError(f"cannot save {out.name}: give a file ending in {', '.join(FORMATS)}")
        if suffix == ".png":
            self.figure(index).savefig(out, dpi=dpi)
            return out
        writer = _movie_writer(suffix, fps)
        fig = self.figure(0)
        width, height = (2 * round(inches * dpi / 2) / dpi for inches in fig.get_size_inches())
        fig.set_size_inches(width, height)  # H.264 takes even pixel sizes only
        with writer.saving(fig, str(out), dpi):
            for index in range(len(self.reader)):
                self.figure(index)
                writer.grab_frame()
        return out

    def close(self) -> None:
        self.reader.close()

    def __enter__(self) -> Run:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


class GifStream:
    """A GIF written frame by frame as the figure changes, each frame on disk before the next is
    drawn: memory holds one frame whatever the run's length (Pillow's own animated GIF, and
    matplotlib's PillowWriter on it, keep every frame until the end). The interface of
    matplotlib's movie writers: `saving`, `grab_frame`.

    Every frame uses one palette, given once at the head of the file: the colour map's colours
    (the image and its colour bar) and greys (the text, the axes, the white around them).
    """

    COLOURS, GREYS = 224, 32

    def __init__(self, fps: int):
        self.duration_ms = max(10, round(1000 / fps))
        self._file = self._figure = self._dpi = self._palette = None

    def palette(self):
        from matplotlib import colormaps
        from PIL import Image

        colours = colormaps[COLORMAP](np.linspace(0, 1, self.COLOURS))[:, :3] * 255
        greys = np.repeat(np.linspace(0, 255, self.GREYS)[:, None], 3, axis=1)
        palette = Image.new("P", (1, 1))
        palette.putpalette(np.vstack([colours, greys]).round().astype(np.uint8).tobytes())
        return palette

    @contextlib.contextmanager
    def saving(self, fig, path: str, dpi: float):
        self._figure, self._dpi, self._palette = fig, dpi, self.palette()
        with open(path, "wb") as self._file:
            yield self
            self._file.write(b";")  # the GIF trailer

    def _rendered(self):
        from PIL import Image

        buffer = io.BytesIO()
        self._figure.savefig(buffer, format="rgba", dpi=self._dpi)
        width, height = (round(inches * self._dpi) for inches in self._figure.get_size_inches())
        rgb = Image.frombuffer("RGBA", (width, height), buffer.getbuffer(), "raw", "RGBA", 0, 1).convert("RGB")
        return rgb.quantize(palette=self._palette, dither=Image.Dither.NONE)

    def grab_frame(self) -> None:
        from PIL import GifImagePlugin

        frame = self._rendered()
        if self._file.tell() == 0:
            header, _ = GifImagePlugin.getheader(frame, info={"loop": 0})  # the palette; loop forever
            self._file.write(b"".join(header))
        for chunk in GifImagePlugin.getdata(frame, duration=self.duration_ms):
            self._file.write(chunk)


def _movie_writer(suffix: str, fps: int):
    """GIFs frame by frame through Pillow (GifStream); MP4 through the ffmpeg binary that the
    imageio-ffmpeg wheel brings, which takes each frame through a pipe as it comes."""
    from matplotlib import animation, rcParams

    if suffix == ".gif":
        return GifStream(fps)
    try:
        import imageio_ffmpeg
    except ImportError:
        raise ValueError("saving MP4 needs imageio-ffmpeg (pip install imageio-ffmpeg); or save a .gif") from None
    rcParams["animation.ffmpeg_path"] = imageio_ffmpeg.get_ffmpeg_exe()
    return animation.FFMpegWriter(fps=fps, codec="libx264", extra_args=["-pix_fmt", "yuv420p"])


def mosaic(patterns: np.ndarray, feeds: np.ndarray, kills: np.ndarray, title: str = ""):
    """Patterns of a (feeds x kills) sweep side by side, F on the vertical axis, k on the horizontal.

    `patterns` has shape (len(feeds), len(kills), rows, cols): pattern [i, j] ran with feeds[i], kills[j].
    """
    from matplotlib.figure import Figure

    nf, nk, rows, cols = patterns.shape
    tiled = patterns.transpose(0, 2, 1, 3).reshape(nf * rows, nk * cols)
    fig = Figure(figsize=(8, 8 * nf * rows / (nk * cols) + 0.6), layout="constrained")
    ax = fig.subplots()
    half_k = (kills[-1] - kills[0]) / max(nk - 1, 1) / 2  # each tile centred on its (F, k)
    half_f = (feeds[-1] - feeds[0]) / max(nf - 1, 1) / 2
    extent = (kills[0] - half_k, kills[-1] + half_k, feeds[0] - half_f, feeds[-1] + half_f)
    picture = ax.imshow(tiled, cmap=COLORMAP, vmin=LIMITS[0], vmax=LIMITS[1], extent=extent, origin="lower",
                        aspect="auto", interpolation="nearest")
    fig.colorbar(picture, ax=ax, label="V", shrink=0.8, extend="max")
    ax.set(xlabel="kill rate k", ylabel="feed rate F", title=title)
    return inline(fig)


def encode_png(values: np.ndarray) -> bytes:
    """V as a PNG through the course's colour map: one byte a cell and a palette, which encodes
    several times faster than RGB (the explorer's budget is a few milliseconds a frame)."""
    from PIL import Image

    scaled = (np.asarray(values, np.float32) - LIMITS[0]) * (255 / (LIMITS[1] - LIMITS[0]))
    np.nan_to_num(scaled, copy=False, nan=255)  # a blown-up run shows in the top colour
    indices = np.clip(scaled, 0, 255).astype(np.uint8)
    picture = Image.frombytes("P", indices.shape[::-1], indices.tobytes())
    picture.putpalette(_palette())
    buffer = io.BytesIO()
    picture.save(buffer, format="png", compress_level=1)
    return buffer.getvalue()


@functools.cache
def _palette() -> bytes:
    from matplotlib import colormaps

    return (colormaps[COLORMAP](np.linspace(0, 1, 256))[:, :3] * 255).astype(np.uint8).tobytes()


#: The most frames a second the explorer sends to the browser.
SHOWN_FPS = 60
#: Formulations the explorer runs (each can take a new state); others use the backend's default.
EXPLORER_FORMULATION = {"numpy": "slices", "cupynumeric": "slices", "torch": "slices"}


def explorer_backends() -> list[str]:
    """The backends installed here, in the course's order, found without importing them: Legate or
    CUDA start only when chosen (one that cannot run then says why in the status line)."""
    return [name for name in backends.BACKENDS if importlib.util.find_spec(name) is not None]


class Explorer:
    """A running simulation steered from a notebook: F, k, dt, Du and Dv sliders, the presets,
    play / pause / reset, the backend, and a click on the image that drops a seed of V.

    Between two frames it advances `steps_per_frame` steps on the chosen backend, fetches V and
    shows it; the label gives frames per second. A change of parameters keeps the pattern (the
    state is carried over); reset goes back to the school's initial state. Without a frontend
    (tests, the frame-rate script), `frame()` runs one frame and `drop_seed` takes grid cells.
    """

    def __init__(self, rows: int = 128, cols: int = 128, params: Parameters | None = None,
                 backend: str | None = None, steps_per_frame: int = 32):
        self.rows, self.cols = rows, cols
        self.params = params or PRESETS["spots"]
        self.backend = backend or backends.default_backend()
        self.steps_per_frame = steps_per_frame
        self.fps = 0.0
        self.playing = False
        self._task = None
        self._widgets = None
        self._no_clicks = ""
        self.reset()

    # The simulation, without a frontend.

    def reset(self) -> None:
        """The school's initial state, with the current parameters and backend."""
        self.sim = backends.create(self.backend, self.params, self.rows, self.cols,
                                   EXPLORER_FORMULATION.get(self.backend))
        self._refresh()

    def _restart(self, u: np.ndarray, v: np.ndarray) -> None:
        steps = self.sim.steps_done
        self.sim = backends.create(self.backend, self.params, self.rows, self.cols,
                                   EXPLORER_FORMULATION.get(self.backend))
        self.sim.set_state(u, v)
        self.sim.steps_done = steps

    def set_params(self, params: Parameters) -> None:
        """New parameters, the pattern carried over."""
        u, v = self.sim.fetch()
        self.params = params
        self._restart(u, v)

    def set_backend(self, name: str) -> None:
        u, v = self.sim.fetch()
        self.backend = backends.require(name).name
        self._restart(u, v)

    def drop_seed(self, row: int, col: int) -> None:
        """A block of the school's seed size (U = 0, V = 1) centred on (row, col)."""
        u, v = self.sim.fetch()
        block_rows, block_cols = seed_block(self.rows, self.cols)
        half_r = max(1, (block_rows.stop - block_rows.start) // 2)
        half_c = max(1, (block_cols.stop - block_cols.start) // 2)
        block = (slice(max(0, row - half_r), row + half_r), slice(max(0, col - half_c), col + half_c))
        u, v = u.copy(), v.copy()
        u[block], v[block] = 0.0, 1.0
        self.sim.set_state(u, v)
        self._refresh()

    def frame(self) -> bytes:
        """Advance one frame's steps, fetch V, return it as PNG bytes (and show it, with a frontend)."""
        stopwatch = timer.Timer().stopwatch()  # read after fetch_v, which waits for the device
        with np.errstate(all="ignore"):  # past the stable dt NumPy overflows; the status line says so
            self.sim.advance(self.steps_per_frame)
        v = self.sim.fetch_v()
        png = encode_png(v)
        seconds = stopwatch.elapsed()
        self.fps = 1 / seconds if not self.fps else 0.8 * self.fps + 0.2 / seconds
        self._show(png, v)
        return png

    def _refresh(self) -> None:
        """Show the current V (after a reset or a seed: no frame was timed)."""
        v = self.sim.fetch_v()
        self._show(encode_png(v), v)

    def _show(self, png: bytes, v: np.ndarray) -> None:
        if self._widgets is not None:
            self._widgets["image"].value = png
            self._widgets["status"].value = self._status(v)

    def _status(self, v: np.ndarray) -> str:
        blown = "" if np.isfinite(v).all() else "; V is no longer finite: dt is past the stable limit, lower it and reset"
        return (f"{self.backend} ({self.sim.formulation}), {self.rows} x {self.cols}, step {self.sim.steps_done:,}, "
                f"{self.fps:.1f} frames/s{blown}{self._no_clicks}")

    # The notebook app.

    def show(self):
        """The ipywidgets app (the last expression of a cell shows it)."""
        import ipywidgets as widgets

        if self._widgets is not None:
            return self._widgets["app"]
        p = self.params
        slider = dict(continuous_update=False, readout_format=".4f", style={"description_width": "3em"})
        w = {
            "feed": widgets.FloatSlider(value=p.feed, min=0.0, max=0.1, step=0.0005, description="F", **slider),
            "kill": widgets.FloatSlider(value=p.kill, min=0.03, max=0.075, step=0.0005, description="k", **slider),
            "dt": widgets.FloatSlider(value=p.dt, min=0.05, max=2.5, step=0.05, description="dt", **slider),
            "du": widgets.FloatSlider(value=p.du, min=0.01, max=0.2, step=0.005, description="Du", **slider),
            "dv": widgets.FloatSlider(value=p.dv, min=0.005, max=0.2, step=0.005, description="Dv", **slider),
            "preset": widgets.Dropdown(options=["(sliders)", *PRESETS], value="(sliders)", description="preset"),
            "backend": widgets.Dropdown(options=explorer_backends(), value=self.backend, description="backend"),
            "play": widgets.ToggleButton(value=False, description="play", icon="play"),
            "reset": widgets.Button(description="reset", icon="refresh"),
            "image": widgets.Image(format="png", layout=widgets.Layout(width=f"{max(256, self.cols)}px")),
            "status": widgets.Label(),
        }
        self._widgets = w
        for name in ("feed", "kill", "dt", "du", "dv"):
            w[name].observe(self._on_slider, names="value")
        w["preset"].observe(self._on_preset, names="value")
        w["backend"].observe(lambda change: self._guarded(self.set_backend, change["new"]), names="value")
        w["play"].observe(self._on_play, names="value")
        w["reset"].on_click(lambda _: self._guarded(self.reset))
        self._listen_for_clicks(w["image"])
        controls = widgets.VBox([w[name] for name in ("preset", "feed", "kill", "dt", "du", "dv", "backend")]
                                + [widgets.HBox([w["play"], w["reset"]])])
        w["app"] = widgets.VBox([widgets.HBox([w["image"], controls]), w["status"]])
        self._refresh()
        return w["app"]

    def _guarded(self, action, *args) -> None:
        """Run a control's action; a bad value gets one line in the status, not a traceback. While
        paused, one frame follows, so that the picture answers the control at once."""
        try:
            action(*args)
        except (ValueError, TypeError, backends.BackendError) as err:
            self._widgets["status"].value = f"not applied: {err}"
            return
        if not self.playing:
            self.frame()

    def _on_slider(self, _change) -> None:
        w = self._widgets
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the status line says when V blows up
            values = {name: w[name].value for name in ("feed", "kill", "dt", "du", "dv")}
            self._guarded(self.set_params, Parameters(**values))

    def _on_preset(self, change) -> None:
        chosen = PRESETS.get(change["new"])
        if chosen is None:
            return
        w = self._widgets
        for name in ("feed", "kill", "dt", "du", "dv"):  # the sliders follow, quietly
            w[name].unobserve(self._on_slider, names="value")
            w[name].value = getattr(chosen, name)
            w[name].observe(self._on_slider, names="value")
        self._guarded(self.set_params, chosen)

    def _on_play(self, change) -> None:
        self.playing = change["new"]
        self._widgets["play"].description = "pause" if self.playing else "play"
        self._widgets["play"].icon = "pause" if self.playing else "play"
        if self.playing and (self._task is None or self._task.done()):
            self._task = asyncio.ensure_future(self._play())

    async def _play(self) -> None:
        """Frames while playing; the await between two frames lets the kernel take the controls'
        changes. At most SHOWN_FPS frames a second: a browser shows no more, faster only queues
        images in front of the pause button's message (the status gives the loop's own rate)."""
        while self.playing:
            stopwatch = timer.Timer().stopwatch()
            self.frame()
            await asyncio.sleep(max(0.001, 1 / SHOWN_FPS - stopwatch.elapsed()))

    def _listen_for_clicks(self, picture) -> None:
        try:
            from ipyevents import Event
        except ImportError:
            self._no_clicks = "; to drop seeds by clicking, pip install ipyevents"
            return
        self._events = Event(source=picture, watched_events=["click"])
        self._events.on_dom_event(self._on_click)

    def _on_click(self, event: dict) -> None:
        width, height = event.get("boundingRectWidth"), event.get("boundingRectHeight")
        if not width or not height:
            return
        row = int(event["relativeY"] / height * self.rows)
        col = int(event["relativeX"] / width * self.cols)
        self.drop_seed(min(max(row, 0), self.rows - 1), min(max(col, 0), self.cols - 1))


def explore(rows: int = 128, cols: int = 128, **kwargs):
    """The explorer's app, ready to show: `view.explore()` as the last line of a cell."""
    return Explorer(rows, cols, **kwargs).show()
