"""`gs-course`: the school's Gray-Scott program on any backend, and a check of this machine.

This module only parses the command line and hands each command to the module that does it
(`gs_course.delivery`, `gs_course.measurement`, `gs_course.lessons.view`), checking the options
a person types so that a bad one gets one line before anything runs. Each command's module is
imported when that command runs: `gs-course run` does not load the benchmark's plotting or the
notebooks' tooling."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from . import __version__, backends, paths, sizing
from .delivery import doctor, handout, run_command
from .delivery.exit_codes import EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_USAGE, UsageError, failure  # noqa: F401 (EXIT_USAGE: the command line's contract)
from .output import RunFileError, check_writable
from .parameters import PRESETS, Parameters
from .workload import GRIDS, SMALL

SCHOOL = Parameters()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gs-course", description=__doc__)
    parser.add_argument("--version", action="version", version=f"gs-course {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser(
        "run",
        help="simulate, optionally saving V images to HDF5",
        description="Run the school's Gray-Scott model. Without -o nothing is written: V stays on "
        "the device until the end (the benchmark's compute mode).",
        epilog="exit codes: 0 done, 1 failed during the run, 2 bad input or backend unusable here, "
        "130 interrupted (the output keeps every completed image)",
    )
    run.add_argument("-n", "--images", type=int, help="images (default: the chosen grid's, 1000 at full size)")
    run.add_argument("-e", "--steps", type=int, default=32, help="steps between two images (default 32)")
    run.add_argument("-r", "--rows", type=int, help="rows (default: the grid that fits the GPU memory free, "
                     "1080 where it fits; GS_COURSE_SIZE names one)")
    run.add_argument("-c", "--cols", type=int, help="columns (default: the chosen grid's, 1920 at full size)")
    run.add_argument("-o", "--output", help="HDF5 file for the V images (default: none)")
    run.add_argument("-f", "--feed", type=float, help=f"feed rate F (default {SCHOOL.feed})")
    run.add_argument("-k", "--kill", type=float, help=f"kill rate k (default {SCHOOL.kill})")
    run.add_argument("-t", "--dt", type=float, help=f"time step (default {SCHOOL.dt})")
    run.add_argument("--du", type=float, help=f"diffusion rate of U (default {SCHOOL.du})")
    run.add_argument("--dv", type=float, help=f"diffusion rate of V (default {SCHOOL.dv})")
    run.add_argument("--preset", default="spots", help=f"(F, k) preset: {', '.join(PRESETS)} (default spots)")
    run.add_argument("--backend", help=f"{' | '.join(backends.BACKENDS)} (default: the fastest here)")
    run.add_argument("--formulation", help="the backend's formulation (default: its fastest)")
    run.add_argument("--deflate", type=int, default=5, choices=range(10), metavar="0-9",
                     help="HDF5 deflate level, 0 for none (default 5, as the school's programs)")
    run.add_argument("--no-progress", action="store_true", help="no progress bar, even on a terminal")
    run.add_argument("--processes", type=int, metavar="N",
                     help="run as N processes on this machine, joined as on N nodes (the jax backend's sharded "
                     "formulations; srun and mpirun start them on a cluster: docs/satellite-sites.md)")
    run.add_argument("--local-devices", type=int, metavar="M",
                     help="devices each process holds: on the CPU, M CPU devices (default 1); with GPUs, M of "
                     "them (default: an equal share)")

    transfer = commands.add_parser(
        "transfer",
        help="measure host<->GPU copies against the GPU's own memory (the PCIe toll)",
        description="Measure copy bandwidth and latency between host and GPU (pageable and pinned), "
        "the GPU's own copy bandwidth and an overlapped pipeline, and print the table; with --out, save "
        "the results (JSON, with provenance) and a figure. Without a GPU, show the figures recorded on "
        "the course's H200.",
    )
    transfer.add_argument("--max-size", type=int, default=1024, metavar="MIB",
                          help="largest copy in MiB (default 1024; smaller on small GPUs)")
    transfer.add_argument("--out", help="folder for transfer.json and transfer.png (default: nothing written; "
                          "results/h200 in the course's clone keeps the current ones)")

    bench = commands.add_parser(
        "bench",
        help="the course benchmark: every library and formulation, checked, then timed",
        description="Check every formulation against the reference, then time the course workload "
        "(1000 images x 32 steps on the grid that fits the GPU memory free: 1080 x 1920 where it fits) in "
        "compute mode and, for the fastest formulation of each GPU library, with the images written to "
        "HDF5 (in line and overlapped), each case --repeats times. Prints the table (median and range); "
        "with --out, saves the results (JSON, with provenance) and a bar chart.",
    )
    bench.add_argument("--quick", action="store_true",
                       help=f"the small grid ({SMALL.grid}, {SMALL.images} images), as GS_COURSE_SIZE=small")
    bench.add_argument("--only", nargs="+", metavar="WORD", help="only cases whose backend/formulation contains a WORD")
    bench.add_argument("--budget", type=float, default=20.0,
                       help="seconds a slow case may run before its total is extrapolated (default 20)")
    bench.add_argument("--repeats", type=int, default=3, help="times each case is timed (default 3)")
    bench.add_argument("--output-dir", default=tempfile.gettempdir(),
                       help="where the HDF5 files go while timed, removed after (default: the system's temporary "
                       f"folder, {tempfile.gettempdir()})")
    bench.add_argument("--no-output", action="store_true", help="compute mode only")
    bench.add_argument("--same-process", action="store_true",
                       help="run every library in this process, not each in its own (they can slow each other)")
    bench.add_argument("--out", help="folder for bench.json and bench.png (default: nothing written)")

    instructor = commands.add_parser(
        "instructor-check",
        help="before a session: doctor, then every solved notebook at full size, then a summary",
        description="Run gs-course doctor, then each notebook of solutions/ through nbval (outputs "
        "compared) at the chosen size, and print a summary table: notebook, pass/fail, run time, GPU, "
        "the most GPU memory the notebook took. "
        "Run it from a clone of the course repository, on the GPU node the students will use.",
    )
    instructor.add_argument("notebooks", nargs="*", metavar="NOTEBOOK",
                            help="only these notebooks of solutions/, by name or number (default: all)")
    instructor.add_argument("--size", choices=("auto", *(w.name for w in GRIDS)),
                            help="grid for the notebooks (default full, auto with --free-gb; auto: the one the GPU "
                            "memory free allows, as students get)")
    instructor.add_argument("--summary", help="also write the summary table (Markdown) to this file")
    instructor.add_argument("--out", help="folder for the record: instructor-check.json (small-gpu-<B>gb.json with "
                            "--free-gb), with provenance, e.g. results/h200; with --students or --ramp, classroom.json "
                            "(default: nothing written)")
    instructor.add_argument("--free-gb", type=float, metavar="B",
                            help="rehearse a small GPU: a helper process holds all but B GB of the GPU's memory while "
                            "the notebooks run (needs CuPy and a GPU)")
    instructor.add_argument("--timeout", type=float, default=1200.0, metavar="SECONDS",
                            help="a notebook running longer is stopped, with its kernels, and fails (default 1200)")
    classroom = instructor.add_argument_group(
        "a classroom on one GPU",
        "N students at once, started --stagger seconds apart, each running the notebooks in the school's "
        "order (3, 2, 1, 4; or those named) in fresh kernels with the course's shared-GPU settings (Legate "
        "sized to 1/N of the GPU memory free): "
        "per student and notebook pass/fail, time, CPU time, that student's peak GPU memory, the first failure")
    classroom.add_argument("--students", type=int, metavar="N", help="N students at once")
    classroom.add_argument("--ramp", metavar="N,N,...", help="classrooms of growing size, e.g. 1,4,8,16 (one student "
                           "alone first), stopping at the first that fails: every notebook must pass for every "
                           "student, each within 2x of its time alone")
    classroom.add_argument("--alone", metavar="RECORD", help="the times alone from an instructor check's record "
                           "(instructor-check.json of a run at the same size and commit) instead of a first "
                           "classroom of one student")
    classroom.add_argument("--stagger", type=float, default=5.0, metavar="SECONDS",
                           help="seconds between two students' starts (default 5)")
    classroom.add_argument("--shared-cores", action="store_true",
                           help="every student on every core, as on a hub without cpusets (by default each "
                           "student keeps to 1/N of the cores, one at least)")

    kernels = commands.add_parser(
        "kernels",
        help="install the JupyterHub kernels that run the course inside its Apptainer image",
        description="Install two Jupyter kernels (Python on GPU; cuPyNumeric with Legate) that start "
        "inside the course's Apptainer image with --nv and the shared-GPU settings.",
    )
    kernels.add_argument("--image", required=True, help="the course's .sif image, as the hub's nodes see it")
    kernels.add_argument("--prefix", help="install for every user of this Jupyter prefix (e.g. the hub's)")
    kernels.add_argument("--apptainer", default="apptainer", help="the apptainer command (default apptainer)")

    notebooks = commands.add_parser(
        "notebooks",
        help="copy the student notebooks into your folder, or bring in the course's updates",
        description="Copy the student notebooks into FOLDER. Run again, it brings in new and updated "
        "notebooks and never overwrites one you have changed: the course's new version arrives beside it.",
    )
    notebooks.add_argument("folder", nargs="?", default=str(handout.DEFAULT_FOLDER),
                         help="your folder (default ~/gs-course-notebooks)")
    notebooks.add_argument("--reset", metavar="NOTEBOOK",
                         help="a fresh copy of this notebook (name or number); yours is kept as a backup")

    show = commands.add_parser(
        "show",
        help="a run's HDF5 images as a picture or a movie (PNG, GIF, MP4)",
        description="Save an image of a run file (.png: the last image, or --image N) or all its images "
        "in order as an animation (.gif, .mp4), reading one image at a time.",
    )
    show.add_argument("run_file", metavar="RUN.h5", help="an HDF5 file written by gs-course run -o (or the school's programs)")
    show.add_argument("--out", required=True, help="output file: frame.png, run.gif or run.mp4")
    show.add_argument("--image", type=int, default=-1, help="for .png: which image (default -1, the last)")
    show.add_argument("--fps", type=int, default=10, help="for .gif and .mp4: images per second (default 10)")

    peak = commands.add_parser(
        "peak-memory",
        help="run a command and say the most GPU memory in use meanwhile",
        description="Run COMMAND while nvidia-smi samples the GPU's used memory every 200 ms, then print the "
        "peak, above what was in use at the start: what a smaller card would need. Exits with COMMAND's code.",
    )
    peak.add_argument("command_line", nargs=argparse.REMAINDER, metavar="COMMAND...",
                      help="the command and its arguments, e.g. gs-course bench --quick")

    tune = commands.add_parser(
        "tune",
        help="sweep the shapes of CuPy's multistep kernel and JAX's Pallas block, each checked, then timed",
        description="Check each shape of the fused multistep kernel (tile, halo, depth, threads) and each block "
        "of the Pallas kernel against the reference, time those that pass on the benchmark's grid, print the "
        "fastest; with --out, save the sweep (multistep-sweep.json, with provenance). Needs a GPU.",
    )
    tune.add_argument("--only", choices=("cupy", "jax"), nargs="+", default=["cupy", "jax"],
                      help="which sweeps (default both)")
    tune.add_argument("--budget", type=float, default=90.0, help="seconds the sweeps may take in all (default 90)")
    tune.add_argument("--out", help="folder for multistep-sweep.json (default: nothing written)")
    tune.add_argument("--apply-best", action="store_true",
                      help="with --out: also write multistep-defaults.diff, the change that makes the fastest "
                      "shapes the defaults (apply it with patch -p1 or git apply; no file is changed here)")

    doctor = commands.add_parser("doctor", help="what runs here: GPU, driver, libraries, settings")
    doctor.add_argument("--require-gpu", action="store_true", help="exit 1 unless a backend runs on a GPU")

    from .measurement import scale

    scale.add_parser(commands)
    return parser


def _writable_folder(option: str, folder: str | None) -> Path | None:
    """The folder an option names, made where only it is missing, checked before anything runs."""
    if folder is None:
        return None
    problem = paths.output_folder_problem(option, folder)
    if problem:
        raise UsageError(problem)
    return Path(folder)


def _transfer(args: argparse.Namespace) -> int:
    from .measurement import transfer

    if args.max_size < 1:
        raise UsageError(f"--max-size must be at least 1 MiB, got {args.max_size}")
    out = _writable_folder("--out", args.out)
    try:
        results = transfer.run(args.max_size * transfer.MIB, log=lambda m: print(f"  {m}", file=sys.stderr))
    except transfer.NoGPU as err:
        results = transfer.recorded()
        print(f"{err}\nNothing was measured here. The course's GPU recorded ({transfer.label(results)}):\n")
        print(transfer.table(results))
        return 0
    print(transfer.table(results))
    if out is not None:
        transfer.save(results, out / "transfer.json")
        transfer.figure(results).savefig(out / "transfer.png", dpi=120)
        print(f"\nsaved {out / 'transfer.json'} and {out / 'transfer.png'}")
    return 0


def _bench(args: argparse.Namespace) -> int:
    from .measurement import bench

    if args.budget <= 0:
        raise UsageError(f"--budget must be > 0 seconds, got {args.budget}")
    if args.repeats < 1:
        raise UsageError(f"--repeats must be at least 1, got {args.repeats}")
    output_dir = None if args.no_output else _writable_folder("--output-dir", args.output_dir)
    out = _writable_folder("--out", args.out)
    if args.quick:
        workload = SMALL
    else:
        chosen = sizing.choice()
        print(chosen.line)
        workload = chosen.workload
    results = bench.run(workload, args.budget, args.only, output_dir, isolate=not args.same_process,
                        repeats=args.repeats)
    print()
    print(bench.table(results))
    if out is not None:
        bench.save(results, out / "bench.json")
        bench.figure(results).savefig(out / "bench.png", dpi=120)
        print(f"\nsaved {out / 'bench.json'} and {out / 'bench.png'}")
    failed = [c["name"] for c in results["cases"] if c["status"] != "ok"]
    if failed:
        print(f"gs-course: error: not timed: {', '.join(failed)}", file=sys.stderr)
    return EXIT_FAILURE if failed else 0


def _classroom(args: argparse.Namespace) -> int:
    from .delivery import classroom, instructor

    if args.summary:
        raise UsageError("--summary is the single check's; the classroom writes classroom.md to --out FOLDER")
    if args.stagger < 0 or args.timeout <= 0:
        raise UsageError(f"--stagger must be >= 0 and --timeout > 0 seconds, got {args.stagger:g} and {args.timeout:g}")
    out = _writable_folder("--out", args.out)
    try:
        counts = classroom.ramp_counts(args.students, args.ramp, alone_given=args.alone is not None)
        solved = instructor.solved_notebooks()
        chosen = instructor.select_notebooks(solved, args.notebooks or list(classroom.SCHOOL_ORDER))
        alone = None if args.alone is None else classroom.times_alone(args.alone, chosen, args.size)
    except (classroom.ClassroomError, instructor.NotebookError) as err:
        raise UsageError(str(err)) from None
    try:
        passed = classroom.check(chosen, counts, args.stagger, args.timeout, args.size, out, alone,
                                 own_cores=not args.shared_cores)
    except KeyboardInterrupt:
        print("\ngs-course: interrupted: every student's notebook was stopped"
              f"{'; the classroom sizes finished are in --out' if out else ''}", file=sys.stderr)
        return EXIT_INTERRUPTED
    return 0 if passed else EXIT_FAILURE


def _instructor_check(args: argparse.Namespace) -> int:
    from .delivery import instructor

    if args.students is not None or args.ramp is not None:
        if args.free_gb is not None:
            raise UsageError("--free-gb is the single check's: a classroom shares the whole GPU")
        args.size = args.size or "full"
        return _classroom(args)
    if args.free_gb is not None and args.free_gb <= 0:
        raise UsageError(f"--free-gb must be > 0 GB, got {args.free_gb:g}")
    size = args.size or ("auto" if args.free_gb is not None else "full")
    out = _writable_folder("--out", args.out)
    if args.summary:
        check_writable(args.summary)
    if args.timeout <= 0:
        raise UsageError(f"--timeout must be > 0 seconds, got {args.timeout:g}")
    try:
        passed = instructor.check(args.notebooks, size, args.summary, out, args.free_gb, args.timeout)
    except (instructor.NotebookError, instructor.FreeMemoryError) as err:
        raise UsageError(str(err)) from None
    except KeyboardInterrupt:
        print("\ngs-course: interrupted: the running notebook and its kernels were stopped; nothing written",
              file=sys.stderr)
        return EXIT_INTERRUPTED
    return 0 if passed else EXIT_FAILURE


def _peak_memory(args: argparse.Namespace) -> int:
    from .delivery import instructor

    command = args.command_line[1:] if args.command_line[:1] == ["--"] else args.command_line
    if not command:
        raise UsageError("give the command to run, e.g. gs-course peak-memory gs-course bench --quick")
    try:
        return instructor.peak_memory(command)
    except FileNotFoundError:
        raise UsageError(f"no program {command[0]!r} here: give a command on PATH") from None


def _tune(args: argparse.Namespace) -> int:
    from .measurement import tune

    if args.budget <= 0:
        raise UsageError(f"--budget must be > 0 seconds, got {args.budget:g}")
    if args.apply_best and args.out is None:
        raise UsageError("--apply-best writes multistep-defaults.diff to --out FOLDER: give --out")
    out = _writable_folder("--out", args.out)
    try:
        found = tune.run(args.only, args.budget, out)
    except tune.TuneError as err:
        raise UsageError(str(err)) from None
    if args.apply_best:
        print(tune.write_defaults_diff(found, out / "multistep-defaults.diff"))
    return 0 if all(found[f"{sweep}_best"] for sweep in tune.SWEEPS if sweep in args.only) else EXIT_FAILURE


def _show(args: argparse.Namespace) -> int:
    from .lessons import view

    if args.fps < 1:
        raise UsageError(f"--fps must be at least 1, got {args.fps}")
    check_writable(args.out)
    try:
        with view.Run(args.run_file) as run:
            if not -len(run.reader) <= args.image < len(run.reader):
                raise UsageError(f"--image {args.image}: {run.note}")
            print(run.note)
            out = run.save(args.out, fps=args.fps, index=args.image)
    except (RunFileError, ValueError) as err:
        raise UsageError(str(err)) from None
    except OSError as err:  # HDF5 cannot read an image: a damaged chunk (check_writable vouched for --out)
        raise UsageError(f"{args.run_file}: an image cannot be read, the file is damaged "
                         f"({str(err).splitlines()[0]}); write it again with gs-course run -o") from None
    print(f"saved {out}")
    return 0


def _kernels(args: argparse.Namespace) -> int:
    from .delivery import jupyter_kernels as kernels

    if not Path(args.image).is_file():
        raise UsageError(f"no image at {args.image}: build it with apptainer build gs-course.sif apptainer.def")
    try:  # the path as given, made absolute: a kernel starts from whatever folder the hub is in
        installed = kernels.install(os.path.abspath(args.image), prefix=args.prefix, apptainer=args.apptainer)
    except OSError as err:
        where = f"--prefix {args.prefix}" if args.prefix else "your Jupyter data folder"
        raise UsageError(f"cannot install the kernels in {where} ({err.strerror or err}): give a prefix you can "
                         "write (inside the image: bind it, apptainer exec --bind PREFIX)") from None
    for folder in installed:
        print(f"installed {folder}")
    return 0


def _notebooks(args: argparse.Namespace) -> int:
    folder = Path(args.folder).expanduser()
    try:
        said = handout.reset(folder, args.reset) if args.reset else handout.sync(folder)
    except handout.HandoutError as err:
        raise UsageError(str(err)) from None
    for line in said:
        print(line)
    print(f"{folder}: {'up to date' if not said else 'done'}; open it in JupyterLab")
    return 0


def _scale(args: argparse.Namespace) -> int:
    from .measurement import scale

    try:
        return scale.run_command(args)
    except scale.ScaleError as err:
        raise UsageError(str(err)) from None


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # what `run --processes` starts again
    command = {"run": run_command.run, "doctor": lambda args: doctor.doctor(args.require_gpu), "transfer": _transfer, "bench": _bench,
               "instructor-check": _instructor_check, "kernels": _kernels, "show": _show, "notebooks": _notebooks,
               "scale": _scale, "peak-memory": _peak_memory, "tune": _tune}[args.command]
    try:
        return command(args)
    except Exception as err:
        code = failure(err)
        if code is None:
            raise
        return code


if __name__ == "__main__":
    sys.exit(main())
