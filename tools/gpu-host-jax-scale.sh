#!/usr/bin/env bash
# On the 2 x H200 host (the device tool's nvidia-h200-x2): JAX on one and two GPUs.
#
#   COMMIT=<git hash> bash tools/gpu-host-jax-scale.sh
#
# First each multi-GPU formulation is checked on both GPUs against the float64 reference (odd
# columns, dt != 1); then `gs-course scale` times it on 1 and 2 GPUs at 8192 x 8192 and
# 16384 x 16384 (weak scaling: 2 x 8192 and 2 x 16384 rows on two GPUs):
#   sharded          the halo exchanged by lax.ppermute inside shard_map, stepped in place of the padding (strong and weak)
#   sharded-overlap  the step reordered to overlap the exchange, latency-hiding scheduler (strong only)
#   sharded-deep     32 ghost rows a side, exchanged every 32 steps (strong and weak)
#   sharded-auto     NamedSharding alone, XLA inserts the communication (strong and weak)
# Each point is a fresh process; about 28 points, 4 to 5 minutes in all. FORMULATIONS="..." checks and times only those. SIZES="64 128" (with
# JAX_PLATFORMS=cpu XLA_FLAGS=--xla_force_host_platform_device_count=2) tries the script on a CPU.
#
# Writes $OUT/jax-scale.txt (everything printed) and $OUT/jax-scale/<rows>/scale-jax-<formulation>
# .json, .md and .png (each JSON names its commit and date). Commit them as results/h200-x2/: the
# text as jax-scale.txt, the folder as jax-scale/ (the JAX tutorial and BENCHMARKS.md read them there).
set -uo pipefail
out=${OUT:-gpu-results}
mkdir -p "$out/jax-scale"
if [ -f .gpuwheels/install-on-gpu-host.sh ]; then
  # shellcheck disable=SC1091
  source .gpuwheels/install-on-gpu-host.sh >&2
fi
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
export FORMULATIONS=${FORMULATIONS:-sharded sharded-overlap sharded-deep sharded-auto}
(
  status=0
  echo "# JAX on one and two GPUs (tools/gpu-host-jax-scale.sh)"
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "commit: ${COMMIT:-unknown}"
  echo "gpus: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | paste -sd ';')"
  echo "## parity on all the GPUs here (256 x 383, 300 steps, dt 0.7, against the float64 reference)"
  python3 - <<'PY' || status=1
import os

import jax
import numpy as np

from gs_course import backends
from gs_course.model import PARITY_ATOL, reference_run
from gs_course.parameters import Parameters

params = Parameters(feed=0.03, kill=0.06, dt=0.7)
ref_u, ref_v = reference_run(256, 383, 300, params)
failed = False
for formulation in os.environ["FORMULATIONS"].split():
    sim = backends.create("jax", params, 256, 383, formulation)
    sim.advance(300)
    u, v = sim.fetch()
    error = max(np.abs(u - ref_u).max(), np.abs(v - ref_v).max())
    failed |= not error < PARITY_ATOL
    print(f"jax/{formulation} on {sim.devices} of the {len(jax.devices())} devices ({jax.devices()[0].device_kind}): "
          f"largest difference {error:.2e} "
          f"({'within' if error < PARITY_ATOL else 'OUTSIDE'} {PARITY_ATOL:g})")
raise SystemExit(1 if failed else 0)
PY
  for rows in ${SIZES:-8192 16384}; do
    mkdir -p "$out/jax-scale/$rows"
    for formulation in $FORMULATIONS; do
      modes="strong weak"
      [ "$formulation" = sharded-overlap ] && modes=strong
      echo "## jax/$formulation, $rows x $rows"
      # shellcheck disable=SC2086
      python3 -m gs_course.cli scale --backend jax --formulation "$formulation" --devices 1 2 \
        -r "$rows" -c "$rows" --mode $modes --steps 32 --repeats 10 --out "$out/jax-scale/$rows" || status=1
    done
  done
  exit "$status"
) 2>&1 | tee "$out/jax-scale.txt"
exit "${PIPESTATUS[0]}"
