"""The saving exercise's checker: V stored in an HDF5 file every `nbextrastep` steps, through
`gs_course.output`'s FrameWriter, and with `overlapped` from a second thread that writes while the
simulation computes (a BackgroundWriter, or threads of the student's own: one joined before the next
steps, or the in-line loop run whole in a thread, leaves computing and writing in turn). The writers and threads the student's function makes are watched
while it runs, so that the hint names what it did (a file opened for every image, a thread never
joined, a writer left open) rather than the images it left in the file.
"""

from __future__ import annotations

import ast
import contextlib
import tempfile
import threading
from pathlib import Path

import numpy as np

from .check_core import PARAMS, NotYet, _grid, _in_their_code, first_in_a_loop, ok, their_errors
from .check_model import _compare_images
from .hints import takes
from .. import output
from ..backends import create
from ..model import PARITY_ATOL, initial_state, reference_step
from ..output import read_frames


@contextlib.contextmanager
def _watched_writers(simulation, runner: threading.Thread | None = None):
    """While the student runs (in `runner`, a daemon thread of the checker's): every FrameWriter and
    BackgroundWriter made, the thread of each image written, and V's fetches counted (one fetch for every image
    written is the same V written again). Afterwards, writers left open are
    closed (their threads end) and reported, so that the checker never reads a file that a thread
    is still writing. The threads the student starts are their own: not daemons for being started
    from `runner` (a thread inherits its starter's), as they would not be from the notebook."""

    seen = {"frames": [], "background": [], "threads": [], "queued": [], "as_queued": []}
    patched = ((output.FrameWriter, "__init__"), (output.FrameWriter, "write"), (output.BackgroundWriter, "__init__"),
               (output.BackgroundWriter, "write"))
    originals = {key: getattr(*key) for key in patched}

    def frame_init(self, *args, **kwargs):
        seen["frames"].append(self)
        originals[output.FrameWriter, "__init__"](self, *args, **kwargs)

    def frame_write(self, frame):
        seen["threads"].append(threading.get_ident())
        seen["writing"].add(threading.current_thread())
        originals[output.FrameWriter, "write"](self, frame)

    def background_init(self, *args, **kwargs):
        seen["background"].append(self)
        originals[output.BackgroundWriter, "__init__"](self, *args, **kwargs)

    def background_write(self, frame):  # the array itself: the writer's thread reads it later
        seen["queued"].append(frame)
        seen["as_queued"].append(np.array(frame, copy=True) if isinstance(frame, np.ndarray) else None)
        originals[output.BackgroundWriter, "write"](self, frame)

    seen["joined"], seen["started"], seen["writing"], seen["order"] = set(), [], set(), []
    seen["fetched"], fetching = 0, threading.local()
    start, join, advance = threading.Thread.start, threading.Thread.join, simulation.advance

    def started(thread, *args, **kwargs):  # a thread that has ended is no longer in threading.enumerate()
        if runner is not None and threading.current_thread() is runner and thread.daemon:
            thread.daemon = False
        seen["started"].append(thread)
        seen["order"].append(("start", thread))
        return start(thread, *args, **kwargs)

    def joined(thread, *args, **kwargs):
        seen["joined"].add(thread)
        seen["order"].append(("join", thread))
        return join(thread, *args, **kwargs)

    def advanced(steps):
        seen["order"].append(("advance", threading.current_thread()))
        return advance(steps)

    def counted(fetch):  # fetch_v may call fetch: one fetch the student made, counted once
        def fetched(*args, **kwargs):
            outer = not getattr(fetching, "inside", False)
            seen["fetched"] += outer
            fetching.inside = True
            try:
                return fetch(*args, **kwargs)
            finally:
                fetching.inside = not outer
        return fetched

    for (cls, name), replacement in zip(patched, (frame_init, frame_write, background_init, background_write)):
        setattr(cls, name, replacement)
    threading.Thread.start, threading.Thread.join = started, joined
    simulation.advance = advanced
    simulation.fetch, simulation.fetch_v = counted(simulation.fetch), counted(simulation.fetch_v)
    threads_before = set(threading.enumerate())
    seen["left_open"] = []
    try:
        yield seen
    finally:
        ours = {writer._thread for writer in seen["background"] if hasattr(writer, "_thread")}
        started = set(threading.enumerate()) - threads_before - ours
        seen["alive"] = [t for t in started if t.is_alive() and not t.daemon]  # when the student's function returned
        threading.Thread.start, threading.Thread.join = start, join
        del simulation.advance, simulation.fetch, simulation.fetch_v
        seen["unjoined"] = [t for t in seen["started"]
                            if t not in ours and t.ident in seen["threads"] and t not in seen["joined"]]
        for thread in started:  # still watched (their writes counted), before their writers are looked at
            thread.join(timeout=1 if thread.daemon else 10)
        for (cls, name), original in originals.items():
            setattr(cls, name, original)
        for writer in seen["background"]:
            if getattr(writer, "_thread", None) is not None and writer._thread.is_alive():
                seen["left_open"].append(writer)
                with contextlib.suppress(Exception):  # the student's error, if any, is the one to show
                    writer.close()
        for writer in seen["frames"]:
            if getattr(writer, "_file", None):  # None where its __init__ failed or has not finished
                seen["left_open"].append(writer)
                with contextlib.suppress(Exception):
                    writer.close()


#: h5py's words for an image of another shape than the file's: (rows, cols) it must be.
_WRITE_ERRORS = (
    ((TypeError, ValueError), r"[Cc]an't broadcast",
     "{what} writes an array of another shape than an image of the file ({shapes}): write V alone, one image "
     "of (rows, cols) a call, writer.write(simulation.fetch_v())"),
    ((TypeError, ValueError), r"not '(method|function)'",
     "{what} writes a method, not its result: call it, writer.write(simulation.fetch_v())"),
    (output.WriterClosedError, r"this writer is closed",
     "{what} writes after the writer was closed (its with block had ended): put the loop that writes inside the "
     "with block"),
    (TypeError, r"Implicit conversion to a NumPy array is not allowed",
     "{what} hands the writer a CuPy array: HDF5 writes from the host's memory, and the writer's thread would read a "
     "GPU array that the next steps change. Hand it a host copy made for each image, writer.write(simulation.fetch_v())"),
    (AttributeError, r"'(\w*Path|str)' object has no attribute '(write|close)'",
     "{what} gives BackgroundWriter a path: it wraps a FrameWriter, BackgroundWriter(FrameWriter(path, ...))"),
)


def _closed_in_loop(student) -> str | None:
    """The student's `x.close()` called inside a loop of their function, as written, else None: the first turn
    closes the writer and the next write fails, inside the with block though it is (the generic hint's "put the
    loop inside the with block" would mislead)."""
    closed = first_in_a_loop(student, lambda node: isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                             and node.func.attr == "close")
    return None if closed is None else ast.unparse(closed)


def _write_errors(student) -> tuple:
    """`_WRITE_ERRORS`, led by the hint for a writer closed inside the loop that writes where the student's
    function has one."""
    closed = _closed_in_loop(student)
    return _WRITE_ERRORS if closed is None else (
        (output.WriterClosedError, r"this writer is closed",
         f"{{what}} calls {closed} inside the loop that writes: the writer is closed after the first image, and the "
         "next writer.write fails. Leave the closing to the with block, once, after the loop"), *_WRITE_ERRORS)


_ONE_WRITER = "Make one writer for the whole run, opened once before the loop, and write every image to it"
_OPENED_AGAIN = ("your function opens {name} {times} times (a FrameWriter an image): each opening erases the images "
                 "written before, or fails while another writer holds the file open. " + _ONE_WRITER)
_BACKGROUND_AGAIN = ("your function makes {times} BackgroundWriters for one file: closing the first closes its FrameWriter's "
                     "file, and the next ones write to a closed file. " + _ONE_WRITER)


def _advanced_otherwise(frames, rows: int, cols: int, nbimage: int, nbextrastep: int, fetched: int = 0,
                        advanced: int = 0) -> None:
    """Images of a simulation advanced by other counts than nbextrastep before each image: once before the
    loop (every image the same V), k steps an image, or (i + 1) x nbextrastep (advance runs that many more
    steps, from where the simulation is). Told in the simulation's words: advance, not the JAX exercise's loop.
    Every image the same V where V was `fetched` fewer times than there are images is the fetch's mistake (one V,
    fetched before the loop, written again), whatever the advances: the hint names the fetch, and the advance too
    where the simulation `advanced` once only."""
    if frames.shape != (nbimage, rows, cols):
        return  # _compare_images tells the shape
    u, v = initial_state(rows, cols, np.float64)
    trajectory = [v]
    for _ in range(max(nbextrastep * nbimage * (nbimage + 1) // 2, 4 * nbextrastep + 8)):
        u, v = reference_step(u, v, PARAMS)
        trajectory.append(v)
    first = next((k for k in range(len(trajectory)) if np.allclose(frames[0], trajectory[k], rtol=0, atol=PARITY_ATOL)),
                 None)
    if first is None or first == nbextrastep and np.allclose(frames[1], trajectory[2 * nbextrastep], rtol=0,
                                                             atol=PARITY_ATOL):
        return
    once = ("every image is the same V: the simulation advances once, before the loop: advance nbextrastep steps before "
            "each image, in the loop")
    if fetched < nbimage and _all_close(frames, [first] * nbimage, trajectory):
        once = ("every image is the same V, fetched once, before the loop, and written again: "
                + ("advance and fetch inside the loop, before each image, simulation.advance(nbextrastep) then "
                   if advanced <= 1 else "fetch it inside the loop, after each advance, ")
                + "writer.write(simulation.fetch_v())")
    elif first == 0:
        return
    series = {once: [first] * nbimage,
              f"advance({first}) before each image: advance(nbextrastep), the steps between two images"
              + (f" ({nbextrastep} here)" if first > 1 else ""): [first * (i + 1) for i in range(nbimage)],
              "advance runs that many more steps from where the simulation is, so (i + 1) x nbextrastep adds up: "
              "advance(nbextrastep) before each image": [nbextrastep * (i + 1) * (i + 2) // 2 for i in range(nbimage)]}
    for hint, steps in series.items():
        if _all_close(frames, steps, trajectory):
            raise NotYet(f"your images are V after {', '.join(map(str, steps))} steps: {hint}")


def _all_close(frames, steps: list[int], trajectory: list) -> bool:
    """Whether each frame is V after its count of `steps` (within the trajectory computed)."""
    return all(n < len(trajectory) and np.allclose(frame, trajectory[n], rtol=0, atol=PARITY_ATOL)
               for frame, n in zip(frames, steps))


def _alternating(order: list, writing: set) -> str | None:
    """Why the images were never written while the simulation computed (each `advance` made while no
    other thread that writes images was running, between its start and its join), or None where some were."""
    running = set()
    for event, thread in order:
        if event == "start":
            running.add(thread)
        elif event == "join":
            running.discard(thread)
        elif any(other in writing and other is not thread for other in running):
            return None
    if any(thread in writing for event, thread in order if event == "advance"):
        return ("your thread runs the in-line loop, computing and writing in turn, while your function waits "
                "for it")
    return "each writing thread is joined before the simulation advances again"


def _one_buffer(queued: list, as_queued: list) -> bool:
    """Whether two of the images handed to a BackgroundWriter are one array (or views of one) that held other values
    each time: one V handed over again unchanged (fetched once) is not overwritten, and the frames tell it."""
    hosts = [(a, copy) for a, copy in zip(queued, as_queued) if isinstance(a, np.ndarray)]
    return any((a is b or np.shares_memory(a, b)) and not np.array_equal(first, second, equal_nan=True)
               for i, (a, first) in enumerate(hosts) for b, second in hosts[i + 1 :])


def _changed_after_write(queued: list, as_queued: list) -> bool:
    """Whether an image handed to a BackgroundWriter holds other values than when it was handed over
    (image[:] = 0 after writer.write(image)): the writer's thread reads it later, maybe changed."""
    return any(copy is not None and not np.array_equal(a, copy, equal_nan=True) for a, copy in zip(queued, as_queued))


def _check_attributes(attributes: dict, nbimage: int, nbextrastep: int) -> None:
    """The file's record of the run (read by the views and by `gs-course view`): steps between
    images, their count, the model's parameters."""
    recorded = {"nbextrastep": (nbextrastep, "the steps between two images, nbextrastep"),
                "nbimage": (nbimage, "the number of images, nbimage")}
    for name, (want, what) in recorded.items():
        if attributes.get(name) != want:
            raise NotYet(f"your images are right, but the file records {attributes.get(name)} as {what} ({want} "
                         f"here): give FrameWriter the run's own values, FrameWriter(path, nbimage, rows, cols, "
                         "simulation.params, nbextrastep)")
    for name, want in vars(PARAMS).items():
        if not np.isclose(float(attributes.get(name, np.nan)), want):
            raise NotYet(f"your images are right, but the file records {name} = {attributes.get(name)}, not the "
                         f"simulation's {want}: give FrameWriter simulation.params")


class _Limited:
    """`function(*args)` in a daemon thread of its own, started (and waiting) before the writers are
    watched, so that it is none of the student's threads: a writer thread of theirs that died
    leaves their loop blocked on a full queue for ever, and the cell must come back."""

    def __init__(self, function, *args):
        self._go, self._outcome = threading.Event(), {}
        self.thread = threading.Thread(target=self._run, args=(function, args), daemon=True,
                                       name="gs-course checker: your function")
        self.thread.start()

    def _run(self, function, args) -> None:
        self._go.wait()
        try:
            function(*args)
        except BaseException as err:  # noqa: BLE001 (raised again in the checker's thread)
            self._outcome["error"] = err

    def within(self, seconds: float) -> None:
        """Run it; its exception raised here; NotYet where it has not returned in `seconds`."""
        self._go.set()
        self.thread.join(seconds)
        if self.thread.is_alive():
            raise NotYet(f"your function has not returned after {seconds:g} s on a few small images: a writer "
                         "thread that stopped (an exception in it) leaves the loop waiting on its queue for ever. "
                         "Call the writer's code in line once to see its error")
        if "error" in self._outcome:
            raise self._outcome["error"]


@contextlib.contextmanager
def _thread_errors_kept():
    """While the checker runs, an error in a thread the student started is kept, not printed: its
    traceback would come before the one line that names the mistake (a thread writing to a file
    the checker closed, say), which is what the student reads."""
    printing, kept = threading.excepthook, []
    threading.excepthook = kept.append
    try:
        yield kept
    finally:
        threading.excepthook = printing


def _their_thread_error(kept) -> str | None:
    """The first error kept from a thread the student started that their own code raised (a typo,
    a wrong argument), in one line; None where there is none. Errors raised inside h5py or the
    course's writer (a write to a file already closed) are what the student's other mistake
    caused: that mistake has its own line."""
    for args in kept:
        err, tb = args.exc_value, args.exc_traceback
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        raised_in = tb.tb_frame.f_globals.get("__name__", "") if tb is not None else ""
        if err is None or raised_in.startswith(("h5py", output.__name__)):
            continue
        where = _in_their_code(err)
        if where:
            first = (str(err).strip().splitlines() or [""])[0][:200]
            return (f"a thread you started ({args.thread.name if args.thread else 'a thread'}) raised "
                    f"{type(err).__name__}: {first} ({where})")
    return None


def saved_images(student, backend: str, overlapped: bool = False, time_limit_s: float = 60) -> None:
    """`student(simulation, path, nbimage, nbextrastep)` must store V in the HDF5 file `path` after
    every `nbextrastep` steps of `simulation` (a gs_course Simulation), `nbimage` images in all,
    and close the file. With `overlapped`, the images must be written from a second thread, running
    while the simulation advances.
    `time_limit_s`: how long the checker's few small images may take before it gives up on them."""

    if backend == "cupynumeric":
        raise ValueError("saved_images runs the student's function off the main thread, where Legate's calls fail")
    rows, cols = _grid(np.random.default_rng())
    nbimage, nbextrastep = 4, 7
    # its signature before the writer thread runs it: the notebook's two functions, the in-line one without overlap
    takes(student, (None, None, nbimage, nbextrastep),
          f"save_images{'' if overlapped else '_in_line'}(simulation, path, nbimage, nbextrastep)")
    simulation = create(backend, PARAMS, rows, cols)
    with tempfile.TemporaryDirectory() as folder, _thread_errors_kept() as kept:
        path = Path(folder) / "images.h5"
        run = _Limited(student, simulation, path, nbimage, nbextrastep)
        try:
            with _watched_writers(simulation, run.thread) as seen, their_errors("your function", _write_errors(student)):
                run.within(time_limit_s)
        finally:  # a file opened anew while another writer holds it fails in h5py: the cause is the second opening
            if len(seen["frames"]) > 1:
                raise NotYet(_OPENED_AGAIN.format(name=path.name, times=len(seen["frames"]))) from None
            if len(seen["background"]) > 1:
                raise NotYet(_BACKGROUND_AGAIN.format(times=len(seen["background"]))) from None
        said = _their_thread_error(kept)
        if said:
            raise NotYet(said)
        if seen["alive"]:
            raise NotYet(f"a thread you started ({seen['alive'][0].name}) still ran when your function returned: "
                         "wait for it (join) before returning, or use a BackgroundWriter, which closing waits for")
        if seen["unjoined"]:
            raise NotYet("your writer threads are never joined: the file may be closed while one of them still "
                         "writes. join() each thread before closing, or use a BackgroundWriter, whose close waits")
        if seen["left_open"]:
            raise NotYet("your writer is still open when your function returns: close it (a with block does it; "
                         "closing a BackgroundWriter also waits for the images still queued)")
        if _one_buffer(seen["queued"], seen["as_queued"]):
            raise NotYet("your images share one buffer: the writer's thread reads each image later, while you already "
                         "overwrite it with the next one. Hand the writer a fresh array each image, "
                         "writer.write(simulation.fetch_v())")
        if _changed_after_write(seen["queued"], seen["as_queued"]):
            raise NotYet("you overwrite an image after writer.write(image): the writer's thread reads it later, so the "
                         "file gets what the array holds then. Leave each image as it is once handed to the writer "
                         "(or hand it a copy)")
        if not path.is_file():
            raise NotYet(f"no file at path: write the images to {path.name} with a FrameWriter")
        frames, attributes = read_frames(path)
    _advanced_otherwise(frames, rows, cols, nbimage, nbextrastep, seen["fetched"],
                        sum(event == "advance" for event, _ in seen["order"]))
    _compare_images(frames, rows, cols, nbimage, nbextrastep, advance="simulation.advance(nbextrastep) before each image")
    _check_attributes(attributes, nbimage, nbextrastep)
    if not attributes.get("complete"):
        raise NotYet("the file is not marked complete: close the writer (a with block does it)")
    if overlapped and all(thread == run.thread.ident for thread in seen["threads"]):
        raise NotYet("your images are right but written in line, by the thread that computes: write them from a "
                     "second thread (wrap the FrameWriter in a BackgroundWriter)")
    alternating = overlapped and _alternating(seen["order"], seen["writing"])
    if alternating:
        raise NotYet(f"your images are right, but never written while the simulation computes: {alternating}. "
                     "Overlap them: wrap the FrameWriter in a BackgroundWriter, whose thread writes each image "
                     "while the next steps run")
    ok(f"saved images: {nbimage} images in the file, each after (i + 1) x {nbextrastep} steps, file complete"
       + (", written by a second thread" if overlapped else ""))


