#!/usr/bin/env bash
# One GPU session on the 2 x H200 host (the device tool's nvidia-h200-x2), in stages that each fit
# one call of the device tool and carry one of cuPyNumeric's parts (../shared/gpu/README.md), so
# that the parts travel while the GPUs work. Where a stage has independent work, GPU 0 and GPU 1 do
# it side by side (CUDA_VISIBLE_DEVICES); the scaling runs have both GPUs to themselves.
#
#   COMMIT=<hash> bash tools/gpu-host-session.sh STAGE
#
#   tests         the test suite without cuPyNumeric (GPU 0) | the CuPy lessons' timings, the
#                 explorer's frames per second, the CuPy tutorial's wrong answers (GPU 1)
#   jax-scale     JAX on one and two GPUs (tools/gpu-host-jax-scale.sh)
#   parts         nothing but the part it carries
#   legate-scale  cuPyNumeric on one and two GPUs, and its benchmark (tools/gpu-host-scale.sh)
#   notebooks     the instructor check of every tutorial at full size (GPU 0) | the same executed,
#                 outputs kept (GPU 1)
#   rehearsal     cuPyNumeric's tests; every tutorial with 4 GB free (GPU 0) | with 2 GB free (GPU 1)
#
# Stage results land in $OUT/STAGE/ and come back as $OUT/STAGE.tar.gz (the device tool returns
# at most 8 files). What a later stage reads from results/ (the scaling runs the tutorials print)
# is kept in /tmp/gs-results, which lives as long as the host, and laid into results/ first.
set -uo pipefail
stage=$1
out=${OUT:?}/$stage
keep=/tmp/gs-results
mkdir -p "$out" "$keep"
# shellcheck disable=SC1091
source .gpuwheels/install-on-gpu-host.sh >&2
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 COMMIT=${COMMIT:-unknown}
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1 ||
  echo "could not install the console script" >&2
cp -r "$keep/." results/ 2>/dev/null
# Every command stops by the stage's deadline (STAGE_LIMIT seconds, under the device call's 600),
# so that what the stage made is still packed and comes back: two stages that ran past the call's
# limit on 2026-11-30 brought back nothing deeper than two folders.
deadline=$((SECONDS + ${STAGE_LIMIT:-540}))
left() { echo $((deadline - SECONDS > 1 ? deadline - SECONDS : 1)); }
on() { # on GPU OUTDIR COMMAND...: run on one GPU, its files in OUTDIR
  local gpu=$1 dir=$2
  shift 2
  mkdir -p "$dir"
  CUDA_VISIBLE_DEVICES=$gpu OUT=$dir timeout "$(left)" "$@"
}
started=$SECONDS
nvidia-smi --query-gpu=index,name,driver_version,memory.total,memory.used --format=csv,noheader
case $stage in
  tests)
    # The notebooks' own tests need cuPyNumeric: the rehearsal stage runs them.
    on 0 "$out" env GS_COURSE_REQUIRE_BACKENDS=numpy,jax,cupy bash tools/gpu-host-tests.sh -n 12 \
      -m "not packaging and not browser" --ignore=tests/test_notebooks.py \
      --deselect tests/test_cli.py::test_instructor_check_runs_every_solution_notebook_and_summarises \
      tests >"$out/tests.log" 2>&1 &
    {
      on 1 "$out/cupy-topics" python3 tools/gpu-host-cupy-topics.py
      on 1 "$out/explorer" python3 tools/gpu-host-explorer-fps.py
      on 1 "$out/wrong" python3 tools/gpu-host-wrong-answers.py
    } >"$out/gpu1.log" 2>&1
    wait
    tail -n 25 "$out/tests.log"; tail -n 40 "$out/gpu1.log" ;;
  jax-scale)
    OUT=$out timeout "$(left)" bash tools/gpu-host-jax-scale.sh >"$out/log" 2>&1
    mkdir -p "$keep/h200-x2" && cp -r "$out/jax-scale" "$out/jax-scale.txt" "$keep/h200-x2/"
    tail -n 60 "$out/log" ;;
  parts) ;;
  legate-scale)
    OUT=$out timeout "$(left)" bash tools/gpu-host-scale.sh >"$out/log" 2>&1
    mkdir -p "$keep/h200-x2" && cp -r "$out/cupynumeric-scale" "$out/cupynumeric-scale.txt" "$out/bench-cupynumeric" "$keep/h200-x2/"
    tail -n 70 "$out/log" ;;
  notebooks)
    on 0 "$out/check" python3 -m gs_course.cli instructor-check --summary "$out/check/instructor-check.md" >"$out/check.log" 2>&1 &
    on 1 "$out/executed" env GS_COURSE_SIZE=full python3 tools/gpu-host-execute.py solutions/[1-4]_*.ipynb >"$out/execute.log" 2>&1
    wait
    tail -n 15 "$out/check.log"; tail -n 15 "$out/execute.log" ;;
  rehearsal)
    on 0 "$out/tests" env GS_COURSE_REQUIRE_BACKENDS=numpy,jax,cupy,cupynumeric bash tools/gpu-host-tests.sh -n 8 \
      -m "not packaging and not browser" -k "cupynumeric or legate or scale" tests >"$out/tests.log" 2>&1
    on 0 "$out/4gb" bash tools/gpu-host-small-gpu.sh 4 >"$out/4gb.log" 2>&1 &
    on 1 "$out/2gb" bash tools/gpu-host-small-gpu.sh 2 >"$out/2gb.log" 2>&1
    wait
    tail -n 12 "$out/tests.log" "$out/4gb.log" "$out/2gb.log" ;;
  *) echo "unknown stage $stage" >&2; exit 2 ;;
esac
echo "stage $stage: $((SECONDS - started)) s"
tar -czf "$OUT/$stage.tar.gz" -C "$OUT" "$stage" && rm -rf "$out"
ls -la "$OUT"
