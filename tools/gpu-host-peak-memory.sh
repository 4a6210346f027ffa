#!/usr/bin/env bash
# On the GPU test host: run a command while gs_course.devices.GpuMemoryPeak samples the GPU's used
# memory (nvidia-smi, every 200 ms), then print the peak, to show what a smaller card would need.
#
#   bash tools/gpu-host-peak-memory.sh python3 -m gs_course.cli bench --quick ...
set -uo pipefail
PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} exec python3 - "$@" <<'PY'
import subprocess
import sys

from gs_course.devices import GpuMemoryPeak

with GpuMemoryPeak() as peak:
    status = subprocess.run(sys.argv[1:]).returncode
if peak.mib is None:
    print("GPU memory used: not measured (no GPU, or nvidia-smi gave no samples)")
else:
    print(f"GPU memory used: peak {peak.start_mib + peak.mib} MiB, {peak.mib} MiB above the "
          f"{peak.start_mib} MiB in use at the start (nvidia-smi every 200 ms)")
sys.exit(status)
PY
