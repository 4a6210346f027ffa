#!/usr/bin/env bash
# One GPU session on one H200 (the device tool's nvidia-h200). cuPyNumeric travels in six parts,
# one a device call (../shared/gpu/README.md); so that the GPU works while the parts travel, the
# work runs in chains started in the background (their own process session: they outlive the call
# that starts them, and live as long as the host) and collected by a later call.
#
#   COMMIT=<hash> bash tools/gpu-host-session.sh launch CHAIN...      start chains, return at once
#   bash tools/gpu-host-session.sh collect SECONDS [CHAIN...]          wait for them (at most SECONDS),
#                                                                      then pack what they made
#   COMMIT=<hash> bash tools/gpu-host-session.sh run SECONDS CHAIN...  both in one call
#
# Chains (GPU 0; each waits for cuPyNumeric where it needs it). Chains launched together run at
# once on the one GPU; joined by '+' (check+classroom, bench+tune) they run one after another, in
# one background job whose files are packed as one (the timings want the GPU to themselves):
#   tests      the whole test suite, every backend required (numpy, jax, cupynumeric, cupy)
#   check      the instructor check of the four tutorials at full size in the school's order
#              (3 2 1 4): instructor-check.json, the record (and its Markdown summary)
#   small      the same with 4 GB, then 2 GB, of the GPU's memory left free (--free-gb):
#              small-gpu-4gb.json, small-gpu-2gb.json
#   classroom  classrooms of 1, 4, 8, 12, 16 students (--ramp), 3 s apart, each notebook at most 420 s:
#              classroom.json
#   bench      the GPU parity tests of CuPy's multistep and JAX's pallas; the benchmark of
#              cupy/strip, cupy/multistep, jax/stacked, jax/pallas (bench.json); Nsight Compute on
#              one launch of the fused kernel, where ncu is installed
#   benchall   the whole course benchmark, budget 10 s a case (bench-all/bench.json: results/h200/bench.json)
#   final      the last commit's checks, the most wanted first: the instructor check (instructor-check.json),
#              16 students held to its times alone through MPS where the host has it (classroom-mps/),
#              the checkers' harness and the suite, 16 students in the GPU's time slices (classroom/),
#              the small-GPU rehearsal at 2 GB free
#   harness    the checkers' harness with a GPU: its CuPy, JAX and synthesis cases, the three at once
#   diagnose   the CuPy tutorial alone, then 16 students on it at once (2 s apart, at most 300 s each),
#              the GPU's use (nvidia-smi dmon) and the CPUs' (vmstat) sampled each second meanwhile:
#              where a classroom's notebooks spend their time (each cell's start is in the logs)
#   tune       gs-course tune: the sweep of the multistep shapes and Pallas blocks (multistep-sweep.json),
#              its best applied to this chain's copy of the tree (multistep-defaults.diff), then the
#              four cases of `bench` again at those defaults
#
# Each chain (or group) writes /tmp/gs-chains/CHAIN/{log,rc,out/}; `collect` packs every chain's
# out/ and log into $OUT/CHAIN.tar.gz (a group's '+' as '-': bench-tune.tar.gz; the device tool
# returns at most 8 files), finished or not. Each step of a chain has its own time limit, so a slow
# notebook cannot hold the GPU for the rest of the session; its output is out/STEP.log
# (results/h200/logs/ where it is kept), its files out/STEP/.
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

suite() { # suite SECONDS [BACKENDS]: the test suite as a step, those backends required (all by default),
  # doctor first (the instructor check's own test and the notebooks' tests left out: the `check`
  # chain runs the check)
  step "$1" 0 tests env GS_COURSE_REQUIRE_BACKENDS="${2:-numpy,jax,cupynumeric,cupy}" bash -c \
    'python3 -m gs_course.cli doctor; python3 -m pytest -rA -p no:cacheprovider -n 8 -m "not packaging and not browser" \
       --ignore=tests/test_notebooks.py \
       --deselect tests/test_cli.py::test_instructor_check_runs_every_solution_notebook_and_summarises tests'
}

small_gpu() { # small_gpu GB: the instructor check with GB of the GPU's memory left free
  step 600 0 "small-gpu-${1}gb" python3 -m gs_course.cli instructor-check --timeout 200 --free-gb "$1" \
    --out "$out/small-gpu-${1}gb" 3 2 1 4
}

wait_for_cupynumeric() { # wait_for_cupynumeric SECONDS: until the last part has arrived and unpacked
  local deadline=$((SECONDS + $1))
  while [ ! -f /tmp/gpusite-cn/.done ] && [ $SECONDS -lt $deadline ]; do sleep 5; done
  # shellcheck disable=SC1091
  source .gpuwheels/install-on-gpu-host.sh >&2
}

#: The four cases of several steps a launch (issue 32), and the tests of the two that fuse steps.
MULTISTEP=(cupy/strip cupy/multistep jax/stacked jax/pallas)
multistep_tests() { # multistep_tests SECONDS NAME
  step "$1" 0 "$2" python3 -m pytest -rs -p no:cacheprovider -o addopts= -q tests/test_multistep.py \
    tests/test_backends.py -k "(multistep or pallas) and not school_grid"
}

sampled() { # sampled NAME COMMAND...: COMMAND, the GPU's use (nvidia-smi dmon), the CPUs' (vmstat) and the
  # disk's free space (a classroom's notebooks write their run files there) sampled meanwhile, in
  # $out/{dmon,vmstat,df}-NAME.txt
  local name=$1
  shift
  nvidia-smi dmon -s um -d 1 >"$out/dmon-$name.txt" 2>&1 &
  local dmon=$!
  vmstat -t 1 >"$out/vmstat-$name.txt" 2>&1 &
  local vmstat=$!
  while sleep 5; do date -u +%T; df -m /tmp | tail -n 1; done >"$out/df-$name.txt" 2>&1 &
  local df=$!
  "$@"
  kill "$dmon" "$vmstat" "$df"
}

classroom_sampled() { # classroom_sampled NAME RAMP: classrooms of RAMP students held to the check's times
  # alone, `sampled`
  # The check's times alone where it passed every notebook; else the ramp runs one student alone first
  # (at 0b15db5 a failing check kept the classroom from starting at all)
  local alone=(--alone "$out/check/instructor-check.json")
  python3 -c 'import json, sys; sys.exit(not all(n["passed"] for n in json.load(open(sys.argv[1]))["notebooks"]))' \
    "${alone[1]}" 2>/dev/null || alone=()
  sampled "$1" step "${CLASSROOM_S:-800}" 0 "$1" python3 -m gs_course.cli instructor-check --ramp "$2" \
    --stagger 2 --timeout 150 "${alone[@]}" --out "$out/$1"
}

with_mps() { # with_mps COMMAND...: COMMAND with NVIDIA's Multi-Process Service running (a user's daemon,
  # the GPU's own settings untouched), its pipe given to every process; where the host lacks it or a
  # CUDA program cannot start through it, nothing runs and it fails
  local pipe=/tmp/gs-mps/pipe logs=/tmp/gs-mps/log status=0
  command -v nvidia-cuda-mps-control >/dev/null || { echo "== no nvidia-cuda-mps-control here: no MPS"; return 1; }
  mkdir -p "$pipe" "$logs"
  CUDA_MPS_PIPE_DIRECTORY=$pipe CUDA_MPS_LOG_DIRECTORY=$logs nvidia-cuda-mps-control -d || { echo "== MPS did not start"; return 1; }
  if CUDA_MPS_PIPE_DIRECTORY=$pipe timeout 60 python3 -c 'import cupy; assert int(cupy.arange(3).sum()) == 3'; then
    echo "== MPS started"
    CUDA_MPS_PIPE_DIRECTORY=$pipe CUDA_MPS_LOG_DIRECTORY=$logs "$@"
  else
    echo "== MPS started but CUDA does not run through it: no MPS"
    status=1
  fi
  echo quit | CUDA_MPS_PIPE_DIRECTORY=$pipe nvidia-cuda-mps-control
  cp -r "$logs" "$out/mps-log" 2>/dev/null
  return "$status"
}

chain() { # the body of one chain, run in the background by `launch` (in the folder of its group)
  out=$chains/${GROUP:-$1}/out  # outside the repository's copy, which `collect` does not pack
  mkdir -p "$out"
  case $1 in
    tests)
      wait_for_cupynumeric 400
      suite 900 ;;
    check)
      wait_for_cupynumeric 400
      step 600 0 check python3 -m gs_course.cli instructor-check --timeout 200 --out "$out/check" \
        --summary "$out/check/instructor-check.md" 3 2 1 4 ;;
    small)
      wait_for_cupynumeric 400
      small_gpu 4
      small_gpu 2 ;;
    classroom)
      wait_for_cupynumeric 400
      step "${CLASSROOM_S:-2400}" 0 classroom python3 -m gs_course.cli instructor-check --ramp 1,4,8,12,16 \
        --stagger 3 --timeout 420 --out "$out/classroom" ;;
    bench)
      multistep_tests 120 multistep-tests
      step 400 0 bench python3 -m gs_course.cli bench --only "${MULTISTEP[@]}" --out "$out/bench"
      if command -v ncu >/dev/null; then
        step 120 0 multistep-ncu ncu --kernel-name gray_scott_fused --launch-skip 4 --launch-count 1 \
          --section SpeedOfLight --section Occupancy --section MemoryWorkloadAnalysis python3 -c \
          'from gs_course import backends, parameters; s = backends.create("cupy", parameters.Parameters(), 1080, 1920, "multistep"); s.advance(64); s.synchronize()'
      fi ;;
    benchall)
      wait_for_cupynumeric 400
      step 600 0 bench-all python3 -m gs_course.cli bench --budget 10 --out "$out/bench-all" ;;
    tune)
      step 300 0 tune python3 -m gs_course.cli tune --budget 240 --apply-best --out "$out/tune"
      if [ -s "$out/tune/multistep-defaults.diff" ]; then
        patch -p1 <"$out/tune/multistep-defaults.diff" && multistep_tests 120 multistep-tests-tuned &&
          step 400 0 bench-tuned python3 -m gs_course.cli bench --only "${MULTISTEP[@]}" --out "$out/bench-tuned"
      fi ;;
    final)  # the last commit's GPU checks, the most wanted first (a machine may be taken back at any
      # time: collect often). Once cuPyNumeric is here, alone on the GPU: the instructor check (the
      # times alone); 16 students held to them, the GPU shared through NVIDIA's Multi-Process Service
      # where the host has it (classroom-mps/). Then the checkers' harness with a GPU (every
      # notebook's cases, the four at once) beside the suite (its files that use cuPyNumeric, then the
      # rest); 16 students in the GPU's time slices (classroom/); the small-GPU rehearsal at 2 GB
      # free. GPU, CPU and disk use are sampled in the classrooms; a notebook is stopped after 150 s.
      wait_for_cupynumeric 600
      step 400 0 check python3 -m gs_course.cli instructor-check --timeout 150 --out "$out/check" 3 2 1 4
      with_mps classroom_sampled classroom-mps 16
      for part in cupy jax synthesis cupynumeric; do
        step "${HARNESS_S:-300}" 0 "harness-$part" python3 -m gs_course.lessons.check_harness --gpu --only "$part" &
      done
      step 420 0 tests-cupynumeric env GS_COURSE_REQUIRE_BACKENDS=numpy,jax,cupynumeric,cupy python3 -m pytest -rA \
        -p no:cacheprovider -n 8 -m "not packaging and not browser" \
        --deselect tests/test_cli.py::test_instructor_check_runs_every_solution_notebook_and_summarises \
        $(grep -l cupynumeric tests/test_*.py)
      suite 420 numpy,jax,cupy
      wait
      classroom_sampled classroom 16
      small_gpu 2 ;;
    harness)
      for part in cupy jax synthesis; do
        step "${HARNESS_S:-300}" 0 "harness-$part" python3 -m gs_course.lessons.check_harness --gpu --only "$part" &
      done
      wait ;;
    diagnose)
      sampled classroom-cupy step 540 0 classroom-cupy python3 -m gs_course.cli instructor-check --ramp 1,16 \
        --stagger 2 --timeout 300 --out "$out/classroom-cupy" 3 ;;
    *) echo "unknown chain $1" >&2; return 2 ;;
  esac
}

launch() {
  python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1 ||
    echo "could not install the console script" >&2
  for name in "$@"; do
    rm -rf "${chains:?}/$name" && mkdir -p "$chains/$name"
    # Each chain runs in a copy of the repository: the device tool rewrites the working tree at
    # every call, and tests collected while it did so failed to import (2026-11-30). Where
    # .gpuwheels/tree.tar is (`git archive HEAD`), the copy is that commit's tree, whatever else the
    # working tree held when it travelled.
    if [ -f .gpuwheels/tree.tar ]; then
      mkdir -p "$chains/$name/repo" && tar -xf .gpuwheels/tree.tar -C "$chains/$name/repo" &&
        cp -a .gpuwheels "$chains/$name/repo/"
    else
      cp -a . "$chains/$name/repo"
    fi
    rm -rf "$chains/$name/repo/.gpuwheels/cn" "$chains/$name/repo/.gpuwheels/tree.tar"
    # A group (bench+tune) runs its chains one after another, in one copy, their files in one out/.
    setsid nohup bash -c "cd $chains/$name/repo && status=0 && for part in ${name//+/ }; do
        GROUP=$name bash tools/gpu-host-session.sh chain \$part || status=\$?; done >$chains/$name/log 2>&1; echo \$status >$chains/$name/rc" \
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
    tar -czf "${OUT:?}/${name//+/-}.tar.gz" -C "$chains/$name" --exclude=./repo . 2>/dev/null  # bench+tune: bench-tune.tar.gz
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
