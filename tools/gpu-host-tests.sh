#!/usr/bin/env bash
# Run the test suite on the offline GPU test host and write a result file (what ran, GPU, date,
# the pytest summary) to $OUT/pytest-gpu.txt: the current results/h200/pytest.txt.
#
#   COMMIT=<git hash> bash tools/gpu-host-tests.sh [pytest options]
#
# The host has no network and not the test extra's tools: the `packaging` tests (installing from
# the package index, hadolint) are deselected there; CI runs them.
# Expects the wheels that ../shared/gpu/pack-wheels.sh packs (.gpuwheels/), already sent to the
# host (see ../shared/gpu/README.md); the host's own python3 has CuPy, JAX, h5py and pytest.
set -uo pipefail
out=${OUT:-gpu-results}
mkdir -p "$out"
log=$out/pytest-gpu.txt
# shellcheck disable=SC1091
source .gpuwheels/install-on-gpu-host.sh >&2
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >&2 ||
  echo "could not install the console script: its test will fail" >&2
export GS_COURSE_REQUIRE_BACKENDS=${GS_COURSE_REQUIRE_BACKENDS:-numpy,jax,cupynumeric,cupy}
{
  echo "# gs-course test suite on the GPU test host"
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "commit: ${COMMIT:-unknown}"
  echo "command: GS_COURSE_REQUIRE_BACKENDS=$GS_COURSE_REQUIRE_BACKENDS python3 -m pytest -rA -m 'not packaging' $*"
  echo "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | paste -sd ';')"
  echo
  echo "## gs-course doctor"
  python3 -m gs_course.cli doctor 2>&1
  echo
  echo "## pytest"
} >"$log"
python3 -m pytest -rA -p no:cacheprovider -m "not packaging" "$@" 2>&1 | tee -a "$log"
exit "${PIPESTATUS[0]}"
