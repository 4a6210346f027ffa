"""`gs-course doctor`: what this machine has (GPUs, backends, the settings that matter on a shared
GPU), each backend probed in a child process of its own so that a library that aborts while it
starts cannot take the answer down."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

from .. import __version__, backends
from ..devices import gigabytes, gpus
from ..measurement.records import child_answer, child_failure
from ..sizing import default_legate_config, kernel_realm_args, visible_cores
from .exit_codes import EXIT_FAILURE

PROBE_MARKER = "gs-course-probe: "


def probe_isolated(name: str) -> backends.Probe:
    """Probe in a child process: a library that aborts while starting cannot take doctor down."""
    # Libraries print to standard output while they start (Legate's cuInit lines): the answer is
    # the one line that carries the marker.
    code = (
        "import dataclasses, json; from gs_course.backends import formulations, probe; "
        f"found = probe({name!r}); "
        f"found = dataclasses.replace(found, formulations=formulations({name!r})) if found.ok else found; "
        f"print({PROBE_MARKER!r} + json.dumps(dataclasses.asdict(found)))"
    )
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return backends.Probe(name, False, reason="crashed while loading: no answer after 300 s")
    answer = child_answer(done, PROBE_MARKER)
    if answer is not None:
        return backends.Probe(**answer)
    return backends.Probe(name, False, reason=f"crashed while loading: {child_failure(done)}")


def doctor(require_gpu: bool = False) -> int:
    print(f"Python {platform.python_version()} ({sys.executable}), gs-course {__version__}")
    for gpu in gpus():
        print(
            f"GPU {gpu.index}: {gpu.name}, driver {gpu.driver}, CUDA {gpu.cuda}, "
            f"{gigabytes(gpu.memory_total)} total, {gigabytes(gpu.memory_free)} free"
        )
    if not gpus():
        print("GPU: none found (no NVIDIA driver, or nvidia-smi sees no GPU): the course runs on the CPU, smaller grids")
    probes = [probe_isolated(name) for name in backends.BACKENDS]
    print("Backends:")
    for found in probes:
        status = f"runs on {found.device}" if found.ok else f"does not run here: {found.reason}"
        print(f"  {found.name:<12} {found.version or '-':<10} {status}")
    print("Formulations (gs-course run --formulation NAME; options: gs-course scale --option NAME=VALUE):")
    for found in probes:
        if found.formulations:
            listed = "; ".join(f"{name} ({options})" if options else name for name, options in found.formulations.items())
            print(f"  {found.name:<12} {listed}")
    print("Settings for a shared GPU:")
    preallocate = os.environ.get("XLA_PYTHON_CLIENT_PREALLOCATE")
    print(f"  XLA_PYTHON_CLIENT_PREALLOCATE={preallocate or '(unset)'}"
          + ("" if preallocate == "false" else "  -> gs_course sets false when it loads JAX; set it for other code too"))
    fraction = os.environ.get("XLA_PYTHON_CLIENT_MEM_FRACTION")
    print(f"  XLA_PYTHON_CLIENT_MEM_FRACTION={fraction or '(unset)'}"
          + ("" if fraction or not gpus() else "  -> JAX may take 75 % of the card"))
    legate = os.environ.get("LEGATE_CONFIG")
    print(f"  LEGATE_CONFIG={legate or '(unset)'}"
          + ("" if legate else f"  -> gs_course uses '{default_legate_config()}' at the first import"))
    realm, used = os.environ.get("REALM_DEFAULT_ARGS"), kernel_realm_args()
    print(f"  REALM_DEFAULT_ARGS={'(unset)' if realm is None else realm or '(empty: Realm chooses)'}"
          + (f"  -> gs_course uses '{used}' at the first import" if realm is None and used else "")
          + f"  ({visible_cores()} cores this process may run on: its cpuset, not a CPU quota)")
    core_map = os.environ.get("REALM_SYNTHETIC_CORE_MAP")
    print(f"  REALM_SYNTHETIC_CORE_MAP={'(unset)' if core_map is None else core_map}"
          + ("  (empty: Legate's threads unpinned)" if core_map == "" else
             "  -> Legate pins its threads: students side by side share the same cores"))
    on_gpu = [found.name for found in probes if found.on_gpu]
    if require_gpu and not on_gpu:
        print("gs-course: error: --require-gpu: no backend runs on a GPU here", file=sys.stderr)
        return EXIT_FAILURE
    return 0
