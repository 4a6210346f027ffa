"""`gs-course run`: the school's program on any backend, image by image, its images written to HDF5
as they come, alone or as one of several processes (`gs_course.distributed`).

Ctrl-C or SIGTERM stops between two images: the file keeps every completed image.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import signal
import sys
import traceback
import warnings

from .. import backends, distributed, sizing
from ..measurement import timer
from ..output import BackgroundWriter, FrameWriter, check_writable
from ..parameters import PRESETS, Parameters
from ..runner import simulate
from .exit_codes import EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_USAGE, UsageError, failure


def _parameters(args: argparse.Namespace) -> Parameters:
    try:
        base = PRESETS[args.preset]
    except KeyError:
        raise UsageError(f"unknown preset {args.preset!r}; choose one of {', '.join(PRESETS)}") from None
    chosen = {name: getattr(args, name) for name in ("du", "dv", "feed", "kill", "dt") if getattr(args, name) is not None}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            params = base.replace(**chosen)
        except (TypeError, ValueError) as err:
            raise UsageError(str(err)) from None
    for warning in caught:
        print(f"gs-course: warning: {warning.message}", file=sys.stderr)
    return params


class StopBetweenImages:
    """Ctrl-C or SIGTERM: finish the image under way, then stop; a second signal stops at once.

    Stopping between images means a signal never lands in the middle of an HDF5 write. A context
    manager: the handlers it replaced come back on leaving, so a program that calls `main` (a
    notebook, a test) keeps its own Ctrl-C.
    """

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self):
        self.requested = False
        self._replaced = {}

    def __enter__(self) -> StopBetweenImages:
        for signum in self.SIGNALS:
            self._replaced[signum] = signal.signal(signum, self._request)
        return self

    def __exit__(self, *exc_info) -> None:
        for signum, handler in self._replaced.items():
            # None: a handler not set from Python, which Python cannot put back; the default is the nearest
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)

    def _request(self, signum, frame):
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True

    def check(self) -> None:
        if self.requested:
            raise KeyboardInterrupt


def _grid(args: argparse.Namespace) -> None:
    """-r, -c and -n from the grid the GPU memory free allows (sizing.choice), where not given."""
    if None not in (args.rows, args.cols, args.images):
        return
    chosen = sizing.choice()
    print(chosen.line)
    args.rows = chosen.workload.rows if args.rows is None else args.rows
    args.cols = chosen.workload.cols if args.cols is None else args.cols
    args.images = chosen.workload.images if args.images is None else args.images


def run(args: argparse.Namespace) -> int:
    """This process's run: alone, or one of several (`distributed`): the launcher of the others,
    or one they started, which fails at once rather than wait for the others at exit."""
    launching = args.processes is not None and distributed.started_by() is None
    if launching or distributed.started_by():
        if None in (args.rows, args.cols, args.images) or args.backend != "jax":
            raise UsageError("several processes run the jax backend on a grid they all know: give --backend jax, "
                             "-r, -c and -n (and --formulation sharded-deep, or another sharded one)")
    if launching:
        distributed.check_counts(args.processes, args.local_devices, args.rows)
        command = [sys.executable, "-m", "gs_course.cli", *args.argv]
        return distributed.launch(command, args.processes, args.local_devices, quiet_code=EXIT_USAGE)
    try:
        cluster = distributed.join(args.local_devices)
    except distributed.DistributedError as err:
        distributed.leave(failure(err))  # JAX's shutdown at exit would wait for a coordinator never joined
    if cluster is None:
        return _simulate(args)
    try:
        if not getattr(backends.formulation_class(args.backend, args.formulation), "spans_processes", False):
            raise UsageError(f"--formulation {args.formulation or '(the default)'} runs in one process: use "
                             "sharded-deep, or another sharded formulation, with several processes")
        with contextlib.redirect_stdout(sys.stdout if cluster.process_id == 0 else io.StringIO()):
            print(distributed.describe(cluster))
            code = _simulate(args, cluster.process_id)
    except KeyboardInterrupt:
        code = EXIT_INTERRUPTED
    except Exception as err:
        code = failure(err)
        if code is None:
            traceback.print_exc()
            code = EXIT_FAILURE
    if code:
        distributed.leave(code)
    return code


def _simulate(args: argparse.Namespace, process_id: int = 0) -> int:
    """The run, its lines and its file: those of process 0 alone where there are several."""
    _grid(args)
    for name in ("images", "steps"):
        if getattr(args, name) < 1:
            raise UsageError(f"--{name} must be at least 1, got {getattr(args, name)}")
    params = _parameters(args)
    if args.output and process_id == 0:
        check_writable(args.output)
    sim = backends.create(args.backend, params, args.rows, args.cols, args.formulation)
    found = backends.probe(sim.backend)
    print(
        f"Gray-Scott {args.rows} x {args.cols}, {args.images} images x {args.steps} steps, "
        f"F={params.feed} k={params.kill} dt={params.dt}, on {found.describe()} ({sim.formulation})"
    )
    writer = None
    if args.output and process_id == 0:
        # Written from a second thread: the device computes the next images meanwhile.
        writer = BackgroundWriter(FrameWriter(args.output, args.images, args.rows, args.cols, params, args.steps,
                                              deflate=args.deflate, backend=sim.backend, formulation=sim.formulation))
    progress = _progress_bar(args.images, disabled=args.no_progress)
    stop = StopBetweenImages()
    completed = 0

    def on_image(_):
        nonlocal completed
        completed += 1
        progress.update()
        stop.check()

    try:
        with stop, progress:
            report = simulate(sim, args.images, args.steps,
                              distributed.GatherOnly() if args.output and process_id else writer, on_image,
                              stopwatch=timer.for_library(sim.backend).stopwatch())
    except KeyboardInterrupt:
        if writer:
            writer.close()  # writes the images already handed over
        kept = f"; {writer.path} keeps the {writer.written} completed images" if writer else ""
        print(f"\ngs-course: interrupted after {completed} of {args.images} images{kept}", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        if writer:
            writer.close()
    steady = report.steady_steps_per_s
    print(
        f"{report.steps} steps in {report.total_s:.2f} s: {report.steps / report.total_s:.0f} steps/s; "
        f"first image {report.first_image_s:.2f} s (includes compilation)"
        + (f", then {steady:.0f} steps/s" if steady else "")
    )
    if writer:
        print(f"wrote {writer.written} images to {writer.path}")
    return 0


def _progress_bar(total: int, disabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, unit="image", file=sys.stderr, disable=disabled or not sys.stderr.isatty())
