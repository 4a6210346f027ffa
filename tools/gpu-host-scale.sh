#!/usr/bin/env bash
# On the 2 x H200 host (the device tool's nvidia-h200-x2): cuPyNumeric on one and two GPUs (issue 14).
#
#   COMMIT=<git hash> bash tools/gpu-host-scale.sh
#
# 1. parity on both GPUs: every cuPyNumeric formulation (our task with 1, 5 and 32 steps a task)
#    against the float64 reference on 517 x 383, dt 0.7, with --min-gpu-chunk 1 so that Legate
#    splits even this grid; a task with a halo narrower than its steps must go wrong (it proves
#    the split);
# 2. the task's halo width (steps a task) on two GPUs at 8192 x 8192, strong scaling;
# 3. `gs-course scale` on 1 and 2 GPUs: slices, convolve and task at 8192 x 8192 (strong and weak)
#    and at the course's 1080 x 1920 (strong).
# About 20 Legate processes, each a few seconds to start: under 3 minutes on the 2 x H200 host
# (results/h200-x2/cupynumeric-scale.txt). Progress is printed.
#
# Writes $OUT/cupynumeric-scale.txt (everything printed) and $OUT/cupynumeric-scale/<rows>/scale-cupynumeric-<formulation>[-<width>].{json,md,png}.
# Commit them as results/h200-x2/ (the text as cupynumeric-scale.txt, the folders as they are):
# BENCHMARKS.md and the cuPyNumeric tutorial read them there.
set -uo pipefail
out=${OUT:-gpu-results}
mkdir -p "$out/cupynumeric-scale"
if [ -f .gpuwheels/install-on-gpu-host.sh ]; then
  # shellcheck disable=SC1091
  source .gpuwheels/install-on-gpu-host.sh >&2
fi
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
start=$(date +%s)
step() { echo; echo "## [$(( $(date +%s) - start )) s] $*"; }
(
  status=0
  echo "# cuPyNumeric on one and two GPUs (tools/gpu-host-scale.sh)"
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "commit: ${COMMIT:-unknown}"
  echo "gpus: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | paste -sd ';')"

  step "1. parity on 2 GPUs (517 x 383, dt 0.7, against the float64 reference)"
  LEGATE_CONFIG="--gpus 2 --cpus 2 --sysmem 4000 --fbmem 8000 --min-gpu-chunk 1" CUDA_VISIBLE_DEVICES=0,1 \
  python3 - <<'PY' || status=1
import numpy as np

from gs_course.backends import cupynumeric_backend as cn_backend
from gs_course.model import PARITY_ATOL, reference_run
import cupynumeric

from gs_course.model import initial_state
from gs_course.parameters import Parameters
from legate.core import TaskTarget, get_machine

params = Parameters(feed=0.03, kill=0.06, dt=0.7)
rows, cols, steps = 517, 383, 100
want = reference_run(rows, cols, steps, params)
print(f"Legate sees {get_machine().count(TaskTarget.GPU)} GPUs")
failed = False
for formulation, options in (("slices", {}), ("convolve", {}), ("task", {"steps_per_task": 1}),
                             ("task", {"steps_per_task": 5}), ("task", {})):
    sim = cn_backend.FORMULATIONS[formulation](params, rows, cols, **options)
    sim.advance(steps)
    error = max(float(np.abs(g - w).max()) for g, w in zip(sim.fetch(), want))
    failed |= not error < PARITY_ATOL
    print(f"cupynumeric/{formulation} {options or ''}: largest difference {error:.2e} "
          f"({'within' if error < PARITY_ATOL else 'OUTSIDE'} {PARITY_ATOL:g})")
uv = cupynumeric.array(np.stack(initial_state(rows, cols)))
for _ in range(steps // 4):
    out = cupynumeric.empty_like(uv)
    cn_backend.steps_task(1)(uv, out, 4, params.du, params.dv, params.feed, params.kill, params.dt)
    uv = out
error = max(float(np.abs(g - w).max()) for g, w in zip(np.asarray(uv), want))
split = error > 100 * PARITY_ATOL
failed |= not split
print(f"a one-cell halo for 4 steps a task: largest difference {error:.2e} "
      f"({'wrong, as it must be: the grid was split' if split else 'RIGHT: the grid was not split, nothing tested'})")
raise SystemExit(1 if failed else 0)
PY

  step "2. the task's halo width on 2 GPUs, 8192 x 8192 (strong scaling, 2 GPUs only)"
  mkdir -p "$out/cupynumeric-scale/width"
  for width in 4 16 64; do
    python3 -m gs_course.cli scale --backend cupynumeric --formulation task --devices 2 -r 8192 -c 8192 \
      --mode strong --steps 64 --repeats 5 --option steps_per_task=$width --out "$out/cupynumeric-scale/width" \
      || status=1
    mv "$out/cupynumeric-scale/width/scale-cupynumeric-task.json" "$out/cupynumeric-scale/width/scale-cupynumeric-task-$width.json"
    mv "$out/cupynumeric-scale/width/scale-cupynumeric-task.md" "$out/cupynumeric-scale/width/scale-cupynumeric-task-$width.md"
    rm -f "$out/cupynumeric-scale/width/scale-cupynumeric-task.png"
  done

  for rows in 8192 1080; do
    cols=$rows; modes="strong weak"
    if [ "$rows" = 1080 ]; then cols=1920; modes=strong; fi
    mkdir -p "$out/cupynumeric-scale/$rows"
    for formulation in slices convolve task; do
      # Steps timed in proportion to each formulation's speed: a NumPy-style step takes
      # milliseconds at 8192 x 8192, the task's a fraction of one.
      case $formulation in
        slices) steps=8 repeats=3 ;;
        convolve) steps=8 repeats=3 ;;
        *) steps=32 repeats=5 ;;
      esac
      step "3. cupynumeric/$formulation, $rows x $cols, 1 and 2 GPUs ($modes)"
      # shellcheck disable=SC2086
      python3 -m gs_course.cli scale --backend cupynumeric --formulation "$formulation" --devices 1 2 \
        -r "$rows" -c "$cols" --mode $modes --steps "$steps" --repeats "$repeats" --out "$out/cupynumeric-scale/$rows" || status=1
    done
  done
  step "done"
  exit "$status"
) 2>&1 | tee "$out/cupynumeric-scale.txt"
exit "${PIPESTATUS[0]}"
