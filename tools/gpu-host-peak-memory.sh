#!/usr/bin/env bash
# On the GPU test host: run a command while sampling the GPU's used memory every 100 ms, then
# print the peak (all processes on the GPU), to show what a smaller card would need.
#
#   bash tools/gpu-host-peak-memory.sh python3 -m gs_course.cli bench --quick ...
set -uo pipefail
samples=$(mktemp)
nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 >"$samples" &
sampler=$!
"$@"
status=$?
kill "$sampler"
wait "$sampler" 2>/dev/null
echo "GPU memory used: peak $(sort -n "$samples" | tail -1) MiB, idle $(head -1 "$samples") MiB ($(wc -l <"$samples") samples, every 100 ms)"
rm -f "$samples"
exit "$status"
