#!/usr/bin/env bash
# On the offline GPU test host: run one gs-course measurement command and keep its output and
# files in $OUT, with what ran, when and on which GPU.
#
#   COMMIT=<git hash> bash tools/gpu-host-measure.sh NAME gs-course-arguments...
#   e.g. bash tools/gpu-host-measure.sh bench bench --out "$OUT"      (results/h200/bench.*)
#        bash tools/gpu-host-measure.sh transfer transfer --out "$OUT" (results/h200/transfer.*)
#
# writes $OUT/NAME.txt; the JSON files carry their own provenance (gs_course.measurement.records). Expects the wheels of ../shared/gpu/pack-wheels.sh already on the host.
set -uo pipefail
out=${OUT:-gpu-results}
mkdir -p "$out"
name=$1
shift
# shellcheck disable=SC1091
source .gpuwheels/install-on-gpu-host.sh >&2
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
{
  echo "# gs-course $* on the GPU test host"
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "commit: ${COMMIT:-unknown}"
  echo "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | paste -sd ';')"
  echo "\$ gs-course $*"
  python3 -m gs_course.cli "$@" 2>&1 | grep --line-buffered -v -e 'cuInit(0)' -e 'discover the CUDA resources'
} 2>&1 | tee "$out/$name.txt"
exit "${PIPESTATUS[0]}"
