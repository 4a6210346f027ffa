#!/usr/bin/env bash
# On the GPU test host: a small GPU rehearsed on the big one. A helper process (CuPy) holds all
# but B GB of GPU 0's memory, so that every library sees B GB free as on a small card; then the
# instructor check runs every solved notebook on the grid gs_course chooses from that (--size
# auto), with the peak of GPU memory each took above the helper's. For B = 4 and B = 2 by default.
#
#   COMMIT=<git hash> [NOTEBOOKS="1 3"] bash tools/gpu-host-small-gpu.sh [B ...]   (about 5 minutes a budget)
#
# writes $OUT/small-gpu-<B>gb.txt (the whole log) and $OUT/small-gpu-<B>gb.md (the summary, with
# provenance): results/h200/small-gpu-<B>gb.md. Expects the wheels of ../shared/gpu/pack-wheels.sh.
set -uo pipefail
out=${OUT:-gpu-results}
mkdir -p "$out"
# shellcheck disable=SC1091
source .gpuwheels/install-on-gpu-host.sh >&2
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
status=0
for budget in "${@:-4 2}"; do
  for b in $budget; do
    ready=$(mktemp -u)
    python3 - "$b" "$ready" <<'PY' &
import pathlib, sys, time
import cupy
keep = int(float(sys.argv[1]) * 1e9)
free, _ = cupy.cuda.runtime.memGetInfo()
held = cupy.empty(max(0, free - keep), dtype=cupy.uint8)  # allocated, never written: the driver maps it all
pathlib.Path(sys.argv[2]).write_text(str(held.nbytes))
time.sleep(3600)
PY
    holder=$!
    for _ in $(seq 120); do [ -s "$ready" ] && break; sleep 1; done
    log=$out/small-gpu-${b}gb.txt
    {
      echo "# the instructor check with ${b} GB of GPU memory left free (a helper holds the rest)"
      echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); commit: ${COMMIT:-unknown}"
      echo "helper holds: $(cat "$ready" 2>/dev/null || echo 'nothing (it failed)') bytes"
      nvidia-smi --query-gpu=name,memory.total,memory.used,memory.free --format=csv
      python3 -c "from gs_course import course; print('grid:', course.choice().line)"
      # shellcheck disable=SC2086  # NOTEBOOKS: names or numbers, split on purpose
      python3 -m gs_course.cli instructor-check --size auto --summary "$out/small-gpu-${b}gb.md" ${NOTEBOOKS:-} 2>&1 |
        grep -v -e 'cuInit(0)' -e 'discover the CUDA resources'
      echo "exit code: ${PIPESTATUS[0]}"
    } 2>&1 | tee "$log"
    grep -q '^exit code: 0$' "$log" || status=1
    kill "$holder"
    wait "$holder" 2>/dev/null
    rm -f "$ready"
  done
done
exit "$status"
