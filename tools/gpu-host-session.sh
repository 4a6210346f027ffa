#!/usr/bin/env bash
# One GPU session on the 2 x H200 host (the device tool's nvidia-h200-x2). cuPyNumeric travels in
# six parts, one a device call (../shared/gpu/README.md); so that the GPUs work while the parts
# travel, the work runs in chains started in the background (their own process session: they
# outlive the call that starts them, and live as long as the host) and collected by a later call.
#
#   COMMIT=<hash> bash tools/gpu-host-session.sh launch CHAIN...      start chains, return at once
#   bash tools/gpu-host-session.sh collect SECONDS [CHAIN...]          wait for them (at most SECONDS),
#                                                                      then pack what they made
#   COMMIT=<hash> bash tools/gpu-host-session.sh run SECONDS CHAIN...  both in one call
#
# Chains (one GPU each, CUDA_VISIBLE_DEVICES; the scaling chains take both, alone):
#   lesson0   the test suite without cuPyNumeric, the instructor check of tutorials 1 and 3 at
#             full size, the same with 4 GB free                                          (GPU 0)
#   lesson1   the CuPy lessons' timings, the explorer's frames per second, the CuPy tutorial's
#             wrong answers, tutorials 1 and 3 executed at full size, the check with 2 GB (GPU 1)
#   probe     which way of making cuPyNumeric's arrays costs what, under the course's Legate
#             settings (GPU 0) and the calibration's (GPU 1); then the whole test suite, every
#             backend required                                                            (both)
#   scale     cuPyNumeric, then JAX, on one and two GPUs (tools/gpu-host-scale.sh,
#             tools/gpu-host-jax-scale.sh)                                                (both)
#   cn0       the instructor check of tutorials 2 and 4 at full size, the course benchmark,
#             the PCIe demo                                                               (GPU 0)
#   cn1       tutorials 2 and 4 executed at full size, then checked with 4 GB and 2 GB free (GPU 1)
#   final0    what the first run of the chains left undone: cuPyNumeric's part of the course
#             benchmark alone, then the whole benchmark with a smaller budget              (GPU 0)
#   final1    the test suite, tutorial 2's instructor check and execution at full size, the
#             checks with 4 GB (tutorials 1-3) and 2 GB (2 and 4) free                    (GPU 1)
#   profile   where a two-GPU JAX step goes: each multi-device formulation on one and two GPUs,
#             three unroll factors, timed, its compiled program kept
#             (tools/gpu-host-jax-profile.py)                                             (both)
#   small2    tutorials 1, 3 and 4 with 2 GB free again, after the fixes of 2026-11-30  (GPU 1)
#   jax18     the profile at 8192 x 8192, then JAX's scaling, every formulation          (both)
#   bench0    the course benchmark, budget 5 s a case                                     (GPU 0)
#   benchcn   cuPyNumeric's part of the course benchmark alone                            (GPU 0)
#   check0    the instructor check of the four tutorials at full size                    (GPU 0)
#   tests1    the test suite, every backend required                                     (GPU 1)
#   today     (one H200) the suite without cuPyNumeric, the benchmark of the fast CuPy and JAX
#             formulations, JAX's compiled programs, a sweep of the persistent kernel's options;
#             once cuPyNumeric has arrived its tests, then the classroom: each student alone,
#             then 16 at once                                                            (GPU 0)
#   day       (one H200, 2026-12-01) the GPU tests of the checkers (and their harness's GPU
#             cases), the cuda.core route and the backends; once
#             cuPyNumeric has arrived, the instructor check of the four tutorials in the
#             school's order, alone; then 16 students at once                           (GPU 0)
#
# Each chain writes /tmp/gs-chains/CHAIN/{log,rc,out/}; `collect` packs every chain's out/ and log
# into $OUT/CHAIN.tar.gz (the device tool returns at most 8 files), finished or not. Each step of a
# chain has its own time limit, so a slow notebook cannot hold a GPU for the rest of the session.
set -uo pipefail
chains=/tmp/gs-chains
mkdir -p "$chains"
# shellcheck disable=SC1091
source .gpuwheels/install-on-gpu-host.sh >&2
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 COMMIT=${COMMIT:-unknown}
export XLA_PYTHON_CLIENT_PREALLOCATE=false
# The course's Jupyter kernels (tutorial 2 declares gs-course-legate): nbval runs each notebook under its own.
export JUPYTER_PATH=$PWD/deploy/jupyter${JUPYTER_PATH:+:$JUPYTER_PATH}
# The `legate` launcher, which pip would install beside Python (the wheels here are unpacked only).
mkdir -p /tmp/gs-bin
printf '#!/bin/sh\nexec python3 -c "import sys; from legate.driver import main; sys.argv[0] = \\"legate\\"; sys.exit(main())" "$@"\n' >/tmp/gs-bin/legate
chmod +x /tmp/gs-bin/legate
# The course's Jupyter kernels start `python`, which an image may only have as python3.
command -v python >/dev/null || ln -sf "$(command -v python3)" /tmp/gs-bin/python
export PATH=/tmp/gs-bin:$PATH

step() { # step SECONDS GPUS NAME COMMAND...: one step of a chain, its files in $out/NAME
  local limit=$1 gpus=$2 name=$3 started=$SECONDS
  shift 3
  mkdir -p "$out/$name"
  echo "== $(date -u +%H:%M:%S) $name (GPU $gpus, at most $limit s)"
  CUDA_VISIBLE_DEVICES=$gpus OUT=$out/$name timeout "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  echo "== $name: exit $rc after $((SECONDS - started)) s"
  tail -n 15 "$out/$name.log"
}

suite() { # suite SECONDS GPU [VAR=value...]: the test suite as a step (the instructor check's own test
  # and the notebooks' tests left out: the chains run the instructor check themselves)
  local limit=$1 gpu=$2
  shift 2
  step "$limit" "$gpu" tests env "$@" bash tools/gpu-host-tests.sh -n 8 -m "not packaging and not browser" \
    --ignore=tests/test_notebooks.py \
    --deselect tests/test_cli.py::test_instructor_check_runs_every_solution_notebook_and_summarises tests
}

wait_for_cupynumeric() { # wait_for_cupynumeric SECONDS: until the last part has arrived and unpacked
  local deadline=$((SECONDS + $1))
  while [ ! -f /tmp/gpusite-cn/.done ] && [ $SECONDS -lt $deadline ]; do sleep 5; done
  # shellcheck disable=SC1091
  source .gpuwheels/install-on-gpu-host.sh >&2
}

classroom16() { # 16 students at once, the four notebooks each, in the school's order
  step 720 0 classroom python3 -m gs_course.cli instructor-check --students 16 --stagger 3 --timeout 420 \
    --out "$out/classroom"
}

chain() { # the body of one chain, run in the background by `launch`
  out=$chains/$1/out  # outside the repository's copy, which `collect` does not pack
  mkdir -p "$out"
  case $1 in
    lesson0)
      suite 300 0 GS_COURSE_REQUIRE_BACKENDS=numpy,jax,cupy
      step 300 0 check13 python3 -m gs_course.cli instructor-check --summary "$out/check13/instructor-check.md" 1 3
      step 420 0 small4-13 env NOTEBOOKS="1 3" bash tools/gpu-host-small-gpu.sh 4 ;;
    lesson1)
      step 240 1 cupy-topics python3 tools/gpu-host-cupy-topics.py
      step 120 1 explorer python3 tools/gpu-host-explorer-fps.py
      step 240 1 wrong python3 tools/gpu-host-wrong-answers.py
      step 300 1 executed13 env GS_COURSE_SIZE=full python3 tools/gpu-host-execute.py solutions/1_*.ipynb solutions/3_*.ipynb
      step 420 1 small2-13 env NOTEBOOKS="1 3" bash tools/gpu-host-small-gpu.sh 2 ;;
    probe)
      step 200 0 variants-course python3 tools/gpu-host-cupynumeric-variants.py 1080 1920 20 &
      step 200 1 variants-calibration env LEGATE_CONFIG="--gpus 1 --cpus 2 --sysmem 4000 --fbmem 8000" \
        python3 tools/gpu-host-cupynumeric-variants.py 1080 1920 20
      wait
      suite 400 0 ;;
    scale)
      step 330 0,1 legate-scale bash tools/gpu-host-scale.sh
      step 300 0,1 jax-scale bash tools/gpu-host-jax-scale.sh ;;
    cn0)
      step 480 0 check24 python3 -m gs_course.cli instructor-check --summary "$out/check24/instructor-check.md" 2 4
      # shellcheck disable=SC2016  # $OUT: the step's folder, expanded by the inner shell
      step 300 0 bench bash -c 'bash tools/gpu-host-measure.sh bench bench --budget 10 --out "$OUT"'
      # shellcheck disable=SC2016
      step 200 0 transfer bash -c 'bash tools/gpu-host-measure.sh transfer transfer --out "$OUT"' ;;
    cn1)
      step 480 1 executed24 env GS_COURSE_SIZE=full python3 tools/gpu-host-execute.py solutions/2_*.ipynb solutions/4_*.ipynb
      step 420 1 small4-24 env NOTEBOOKS="2 4" bash tools/gpu-host-small-gpu.sh 4
      step 420 1 small2-24 env NOTEBOOKS="2 4" bash tools/gpu-host-small-gpu.sh 2 ;;
    final0) # what the first run of the chains above left to do, on GPU 0
      # shellcheck disable=SC2016
      step 150 0 bench-cupynumeric bash -c 'bash tools/gpu-host-measure.sh bench bench --only cupynumeric/ --budget 35 --repeats 1 --out "$OUT"'
      # shellcheck disable=SC2016
      step 330 0 bench bash -c 'bash tools/gpu-host-measure.sh bench bench --budget 5 --out "$OUT"' ;;
    final1) # and on GPU 1
      suite 200 1
      step 150 1 check2 python3 -m gs_course.cli instructor-check --summary "$out/check2/instructor-check.md" 2
      step 150 1 executed2 env GS_COURSE_SIZE=full python3 tools/gpu-host-execute.py solutions/2_*.ipynb
      step 200 1 small4-123 env NOTEBOOKS="1 2 3" bash tools/gpu-host-small-gpu.sh 4
      step 200 1 small2-24 env NOTEBOOKS="2 4" bash tools/gpu-host-small-gpu.sh 2 ;;
    profile) step 400 0,1 jax-profile python3 tools/gpu-host-jax-profile.py ;;
    small2) step 300 1 small2-134 env NOTEBOOKS="1 3 4" bash tools/gpu-host-small-gpu.sh 2 ;;
    jax18)
      step 240 0,1 jax-profile env SIZES=8192 python3 tools/gpu-host-jax-profile.py
      step 420 0,1 jax-scale bash tools/gpu-host-jax-scale.sh ;;
    # shellcheck disable=SC2016
    bench0) step 560 0 bench bash -c 'bash tools/gpu-host-measure.sh bench bench --budget 5 --out "$OUT"' ;;
    # shellcheck disable=SC2016
    benchcn) step 300 0 bench-cupynumeric bash -c 'bash tools/gpu-host-measure.sh bench bench --only cupynumeric/ --budget 35 --repeats 1 --out "$OUT"' ;;
    check0) step 400 0 check python3 -m gs_course.cli instructor-check --summary "$out/check/instructor-check.md" 1 2 3 4 ;;
    tests1) suite 400 1 ;;
    day)
      step 240 0 gputests env GS_COURSE_REQUIRE_BACKENDS=numpy,jax,cupy bash tools/gpu-host-tests.sh -n 8 \
        -m "not packaging and not browser" tests/test_check_gpu.py tests/test_check_harness.py \
        tests/test_check_classes.py tests/test_cuda_core_route.py tests/test_backends.py
      wait_for_cupynumeric 400
      step 360 0 check python3 -m gs_course.cli instructor-check --summary "$out/check/instructor-check.md" 3 2 1 4
      classroom16 ;;
    classroom16) classroom16 ;;
    today)  # (one H200, 2026-12-01, second session) after the layers and the persistent kernel
      suite 420 0 GS_COURSE_REQUIRE_BACKENDS=numpy,jax,cupy
      step 300 0 bench python3 -m gs_course.cli bench --only cupy/strip cupy/multistep cupy/persistent \
        jax/stacked jax/pallas --no-output --budget 10 --out "$out/bench"
      step 120 0 compiled python3 -m gs_course.measurement.compiled --out "$out/compiled"
      step 120 0 persistent-sweep python3 -c '
from gs_course import backends
from gs_course.measurement import bench
from gs_course.parameters import Parameters
from gs_course.workload import FULL
for halo in (2, 4, 8):
    for chunk in (4, 8):
        sim = backends.create("cupy", Parameters(), FULL.rows, FULL.cols, "persistent", halo=halo, chunk=chunk)
        r = bench.time_simulation(sim, FULL, 4, 3)
        print(halo, chunk, sim.tiles, round(r["seconds"], 4), flush=True)'
      wait_for_cupynumeric 600
      step 300 0 cupynumeric-tests env GS_COURSE_REQUIRE_BACKENDS=numpy,jax,cupy,cupynumeric python3 -m pytest -q -n 8 \
        -m "not packaging and not browser" -k "cupynumeric or legate or unpinned" tests
      step 900 0 classroom python3 -m gs_course.cli instructor-check --ramp 1,16 --stagger 3 --timeout 420 \
        --out "$out/classroom" ;;
    *) echo "unknown chain $1" >&2; return 2 ;;
  esac
}

launch() {
  python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1 ||
    echo "could not install the console script" >&2
  for name in "$@"; do
    rm -rf "${chains:?}/$name" && mkdir -p "$chains/$name"
    # Each chain runs in a copy of the repository: the device tool rewrites the working tree at
    # every call, and tests collected while it did so failed to import (2026-11-30).
    cp -a . "$chains/$name/repo" && rm -rf "$chains/$name/repo/.gpuwheels/cn"
    setsid nohup bash -c "cd $chains/$name/repo && bash tools/gpu-host-session.sh chain $name >$chains/$name/log 2>&1; echo \$? >$chains/$name/rc" \
      </dev/null >/dev/null 2>&1 &
    echo "started $name"
  done
}

collect() {
  local wait=$1 deadline
  shift
  local names=("$@")
  [ ${#names[@]} -gt 0 ] || mapfile -t names < <(ls "$chains")
  deadline=$((SECONDS + wait))
  for name in "${names[@]}"; do
    while [ ! -f "$chains/$name/rc" ] && [ $SECONDS -lt $deadline ]; do sleep 5; done
  done
  for name in "${names[@]}"; do
    [ -d "$chains/$name" ] || continue
    echo "### $name: $([ -f "$chains/$name/rc" ] && echo "finished, exit $(cat "$chains/$name/rc")" || echo "still running")"
    grep -h -e '^== ' "$chains/$name/log" | tail -n 12
    tar -czf "${OUT:?}/$name.tar.gz" -C "$chains/$name" --exclude=./repo . 2>/dev/null
  done
  nvidia-smi --query-gpu=index,memory.used,utilization.gpu --format=csv,noheader
}

case ${1:-} in
  chain) chain "$2" ;;
  launch) shift; launch "$@" ;;
  collect) shift; collect "$@" ;;
  run) shift; limit=$1; shift; launch "$@"; collect "$limit" "$@" ;;
  *) echo "usage: gpu-host-session.sh launch CHAIN... | collect SECONDS [CHAIN...] | run SECONDS CHAIN..." >&2; exit 2 ;;
esac
