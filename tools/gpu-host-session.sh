#!/usr/bin/env bash
# One GPU session on the 2 x H200 host (the device tool's nvidia-h200-x2), in stages that each fit
# one call of the device tool and carry one of cuPyNumeric's parts (../shared/gpu/README.md), so
# that the parts travel while the GPUs work. Where a stage has independent work, GPU 0 and GPU 1 do
# it side by side (CUDA_VISIBLE_DEVICES); timings that compare GPU counts use both alone.
#
#   COMMIT=<hash> bash tools/gpu-host-session.sh STAGE
#
#   tests      the test suite without cuPyNumeric (GPU 0) | the CuPy lessons' and explorer's timings (GPU 1)
#   notebooks  instructor check of tutorials 1, 3, 4 at full size (GPU 0) | the same executed, outputs kept,
#              then the CuPy tutorial's wrong answers (GPU 1)
#   jax-scale  JAX on one and two GPUs (tools/gpu-host-jax-scale.sh)
#   small-gpu  tutorials 1, 3, 4 with 4 GB free (GPU 0) | with 2 GB free (GPU 1)
#   parts      nothing but the part it carries
#   legate     tutorial 2: instructor check then executed (GPU 0) | with 4 then 2 GB free (GPU 1);
#              then cuPyNumeric's tests
#   legate-scale  cuPyNumeric on one and two GPUs (tools/gpu-host-scale.sh)
#
# Everything lands in $OUT/STAGE/ and comes back as $OUT/STAGE.tar.gz (the device tool returns at
# most 8 files); the stage's log is printed too.
set -uo pipefail
stage=$1
out=${OUT:?}/$stage
mkdir -p "$out"
# shellcheck disable=SC1091
source .gpuwheels/install-on-gpu-host.sh >&2
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 COMMIT=${COMMIT:-unknown}
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1 ||
  echo "could not install the console script" >&2
on() { # on GPU OUTDIR COMMAND...: run on one GPU, its files in OUTDIR
  local gpu=$1 dir=$2
  shift 2
  mkdir -p "$dir"
  CUDA_VISIBLE_DEVICES=$gpu OUT=$dir "$@"
}
started=$SECONDS
nvidia-smi --query-gpu=index,name,driver_version,memory.total,memory.used --format=csv,noheader
case $stage in
  tests)
    # The notebooks' own tests need cuPyNumeric too: the legate stage runs them.
    on 0 "$out" env GS_COURSE_REQUIRE_BACKENDS=numpy,jax,cupy bash tools/gpu-host-tests.sh -n 12 \
      -m "not packaging and not browser" --ignore=tests/test_notebooks.py \
      --deselect tests/test_cli.py::test_instructor_check_runs_every_solution_notebook_and_summarises \
      tests >"$out/tests.log" 2>&1 &
    {
      on 1 "$out/cupy-topics" python3 tools/gpu-host-cupy-topics.py
      on 1 "$out/explorer" python3 tools/gpu-host-explorer-fps.py
    } >"$out/gpu1.log" 2>&1
    wait
    tail -n 25 "$out/tests.log"; tail -n 30 "$out/gpu1.log" ;;
  notebooks)
    on 0 "$out/check" python3 -m gs_course.cli instructor-check 1 3 4 --summary "$out/check/instructor-check.md" >"$out/check.log" 2>&1 &
    {
      on 1 "$out/executed" env GS_COURSE_SIZE=full python3 tools/gpu-host-execute.py \
        solutions/1_Python_GPU_JAX.ipynb solutions/3_Python_GPU_CuPy.ipynb solutions/4_Python_GPU_synthesis.ipynb
      on 1 "$out/wrong" python3 tools/gpu-host-wrong-answers.py
    } >"$out/gpu1.log" 2>&1
    wait
    tail -n 15 "$out/check.log"; tail -n 40 "$out/gpu1.log" ;;
  jax-scale)
    bash tools/gpu-host-jax-scale.sh 2>&1 | tee "$out/jax-scale.log" | tail -n 60 ;;
  small-gpu)
    on 0 "$out/4gb" env NOTEBOOKS="1 3 4" bash tools/gpu-host-small-gpu.sh 4 >"$out/4gb.log" 2>&1 &
    on 1 "$out/2gb" env NOTEBOOKS="1 3 4" bash tools/gpu-host-small-gpu.sh 2 >"$out/2gb.log" 2>&1
    wait
    tail -n 20 "$out/4gb.log" "$out/2gb.log" ;;
  parts) ;;
  legate)
    {
      on 0 "$out/check" python3 -m gs_course.cli instructor-check 2 --summary "$out/check/instructor-check.md"
      on 0 "$out/executed" env GS_COURSE_SIZE=full python3 tools/gpu-host-execute.py solutions/2_Python_GPU_cuPyNumeric.ipynb
    } >"$out/gpu0.log" 2>&1 &
    {
      on 1 "$out/4gb" env NOTEBOOKS=2 bash tools/gpu-host-small-gpu.sh 4
      on 1 "$out/2gb" env NOTEBOOKS=2 bash tools/gpu-host-small-gpu.sh 2
    } >"$out/gpu1.log" 2>&1
    wait
    on 0 "$out/tests" env GS_COURSE_REQUIRE_BACKENDS=numpy,jax,cupy,cupynumeric bash tools/gpu-host-tests.sh -n 8 \
      -m "not packaging and not browser" -k "cupynumeric or legate" tests >"$out/tests.log" 2>&1 &
    on 1 "$out/notebook-tests" env GS_COURSE_REQUIRE_BACKENDS=numpy,jax,cupy,cupynumeric GS_COURSE_SIZE=small \
      bash tools/gpu-host-tests.sh -n 4 tests/test_notebooks.py \
      tests/test_cli.py::test_instructor_check_runs_every_solution_notebook_and_summarises >"$out/notebook-tests.log" 2>&1
    wait
    tail -n 15 "$out/gpu0.log" "$out/gpu1.log"; tail -n 12 "$out/tests.log" "$out/notebook-tests.log" ;;
  legate-scale)
    bash tools/gpu-host-scale.sh 2>&1 | tee "$out/legate-scale.log" | tail -n 60 ;;
  *) echo "unknown stage $stage" >&2; exit 2 ;;
esac
echo "stage $stage: $((SECONDS - started)) s"
tar -czf "$OUT/$stage.tar.gz" -C "$OUT" "$stage" && rm -rf "$out"
ls -la "$OUT"
