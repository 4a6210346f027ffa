"""HDF5 output in the school's format: one float32 dataset `matrix` of shape (images, rows, cols).

One chunk per image, deflate level 5, as the Rust port writes and its image converter reads. The
file is valid after every image: a run that stops early (Ctrl-C, an exception, a full disk) keeps
each completed image, the dataset shrinks to them, and `images_written` says how many.
"""

from __future__ import annotations

import dataclasses
import os
import queue
import threading
from pathlib import Path

import h5py
import numpy as np

from . import __version__
from .parameters import Parameters

DATASET = "matrix"
#: HDF5 refuses chunks of 4 GiB or more: very large frames are split into bands of rows.
MAX_CHUNK_BYTES = 2**31


class OutputError(OSError):
    """The output file cannot be created or written."""


def check_writable(path: str | os.PathLike) -> Path:
    """Fail before any computation when the output cannot be created, saying why."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise OutputError(f"output {path} is a folder: give a file name, e.g. -o {path / 'output.h5'}")
    if not folder.is_dir():
        raise OutputError(f"cannot write {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise OutputError(f"cannot write {path}: permission denied; choose another path with -o")
    return path


class WriterClosedError(ValueError):
    """An image handed to a writer already closed."""


_CLOSED = "this writer is closed: write inside the with block (or before close())"


class FrameWriter:
    """Writes V images one by one; use as a context manager so an early stop still closes the file."""

    def __init__(
        self,
        path: str | os.PathLike,
        images: int,
        rows: int,
        cols: int,
        params: Parameters,
        steps_per_image: int,
        deflate: int | None = 5,
        **attributes,
    ):
        self.path = check_writable(path)
        self.images = images
        self.written = 0
        try:
            self._file = h5py.File(self.path, "w")
        except OSError as err:
            raise OutputError(f"cannot write {self.path}: {err}") from err
        chunk_rows = max(1, min(rows, MAX_CHUNK_BYTES // (cols * 4)))
        self._dataset = self._file.create_dataset(
            DATASET,
            shape=(images, rows, cols),
            maxshape=(images, rows, cols),
            dtype=np.float32,
            chunks=(1, chunk_rows, cols),
            compression="gzip" if deflate else None,
            compression_opts=deflate or None,
        )
        attrs = self._dataset.attrs
        for name, value in vars(params).items():
            attrs[name] = value
        attrs.update(
            nbimage=images,
            nbextrastep=steps_per_image,
            images_written=0,
            complete=False,
            gs_course_version=__version__,
            **attributes,
        )

    def write(self, frame: np.ndarray) -> None:
        """Append one image and flush, so that a crash after this line cannot lose it."""
        if not self._file:
            raise WriterClosedError(_CLOSED)
        if self.written >= self.images:
            raise OutputError(f"{self.path} already holds its {self.images} images")
        self._dataset[self.written] = frame
        self.written += 1
        self._dataset.attrs.modify("images_written", self.written)  # in place: never absent
        self._file.flush()

    def close(self) -> None:
        if not self._file:
            return
        try:
            if self.written < self.images:
                self._dataset.resize(self.written, axis=0)
            self._dataset.attrs["complete"] = self.written == self.images
        finally:
            self._file.close()

    def __enter__(self) -> FrameWriter:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


class BackgroundWriter:
    """Writes a FrameWriter's images from a second thread, so the GPU computes the next images
    while the disk takes the last ones (h5py lets other threads run while HDF5 writes).

    Same interface as FrameWriter. At most `depth` images wait in memory; closing writes every
    image already handed over (they are completed images), then closes the file. An error in the
    writing thread comes back at the next `write` or at `close`. A `write` once closed raises
    `WriterClosedError`: no thread would take the image, and the write past `depth` would wait for ever.
    """

    def __init__(self, writer: FrameWriter, depth: int = 4):
        self._writer = writer
        self._queue: queue.Queue = queue.Queue(maxsize=depth)
        self._error: BaseException | None = None
        self._error_reported = False
        self._closed = False
        self._thread = threading.Thread(target=self._drain, name="gs-course-writer", daemon=True)
        self._thread.start()

    @property
    def path(self) -> Path:
        return self._writer.path

    @property
    def written(self) -> int:
        return self._writer.written

    def _drain(self) -> None:
        while (frame := self._queue.get()) is not None:
            if self._error is None:
                try:
                    self._writer.write(frame)
                except BaseException as err:  # handed to the computing thread
                    self._error = err

    def _raise_error(self) -> None:
        if self._error is not None and not self._error_reported:
            self._error_reported = True
            raise self._error

    def write(self, frame) -> None:
        self._raise_error()
        if self._closed or not self._thread.is_alive():
            raise WriterClosedError(_CLOSED)
        self._queue.put(frame)

    def close(self) -> None:
        self._closed = True
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()
        self._writer.close()
        self._raise_error()

    def __enter__(self) -> BackgroundWriter:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def read_frames(path: str | os.PathLike) -> tuple[np.ndarray, dict]:
    """The images and attributes of a file written by FrameWriter (or by the school's programs),
    all in memory: for small files; FrameReader reads a large one an image at a time."""
    with FrameReader(path) as reader:
        return reader.dataset[: len(reader)], reader.attrs


class RunFileError(OSError):
    """The file is missing, not HDF5, or not a course run (no 3-D dataset `matrix`)."""


class FrameReader:
    """The images of a run file, read one at a time on demand: a full run is 8.3 GB.

    A run stopped cleanly keeps its completed images only; a process killed mid-run leaves the
    dataset at its planned length, with `images_written` saying how many images hold data, and
    only those count here. Use as a context manager (or call close) to release the file.
    """

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        if not self.path.is_file():
            raise RunFileError(f"no file {self.path}")
        try:
            self._file = h5py.File(self.path, "r")
        except OSError:
            raise RunFileError(f"{self.path} is not an HDF5 file (or it is damaged beyond reading)") from None
        self.dataset = self._file.get(DATASET)
        if not isinstance(self.dataset, h5py.Dataset) or self.dataset.ndim != 3:
            found = ", ".join(self._file) or "nothing"
            self._file.close()
            raise RunFileError(f"{self.path} is not a course run: no 3-D dataset '{DATASET}' (images, rows, cols); "
                               f"it holds: {found}")
        self.attrs = dict(self.dataset.attrs)
        written = int(self.attrs.get("images_written", self.dataset.shape[0]))
        self.images = min(written, self.dataset.shape[0])
        self.planned = int(self.attrs.get("nbimage", self.dataset.shape[0]))

    @property
    def complete(self) -> bool:
        return bool(self.attrs.get("complete", True)) and self.images >= self.planned

    @property
    def steps_per_image(self) -> int | None:
        steps = self.attrs.get("nbextrastep")
        return None if steps is None else int(steps)

    def parameters(self) -> Parameters | None:
        """The run's parameters, where the file records them (the school's files may not)."""
        names = [field.name for field in dataclasses.fields(Parameters)]
        if not all(name in self.attrs for name in names):
            return None
        return Parameters(**{name: float(self.attrs[name]) for name in names})

    def __len__(self) -> int:
        return self.images

    def __getitem__(self, index: int) -> np.ndarray:
        """Image `index` (negative counts from the end), read from the file now."""
        if not -self.images <= index < self.images:
            raise IndexError(f"image {index} of a run holding {self.images}")
        return self.dataset[index % self.images]

    def __iter__(self):
        for index in range(self.images):
            yield self[index]

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> FrameReader:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
