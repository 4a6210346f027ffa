#!/usr/bin/env bash
# Pack the CUDA 12 stack the images install, for the offline GPU test host (x86-64, Python 3.12, a
# CUDA 13 image with cupy-cuda13x and jax's CUDA 13 plugin, ../shared/gpu/README.md), so that the
# instructor check runs there with what students get from the images: the versions of
# constraints/py3.12.txt, one group of packages at a time.
#
#   tools/pack-cuda12-wheels.sh [--sizes] GROUP...     GROUP: cupy, jax or cupynumeric
#
# .gpuwheels/cu12-GROUP/partNN + MANIFEST: the group's wheels unpacked into one folder (identical
# shared libraries linked, not copied), as one xz tarball split into parts of at most 60 MiB, each
# small enough to travel to the host in a run of its own (64 MiB a run);
# .gpuwheels/install-cu12-on-gpu-host.sh: source it on the host, from the repository root, after each
# part arrives: parts gather in /tmp/gpucu12-GROUP; once all are there it checks their SHA-256,
# unpacks the group into /tmp/gpusite-cu12 and puts that folder first on PYTHONPATH (before the
# image's CUDA 13 packages of the same import names). --sizes only downloads and prints each
# wheel's size and each group's packed size. Nothing of it is committed (.gpuwheels/ is excluded).
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
sizes_only=0
[[ ${1:-} == --sizes ]] && { sizes_only=1; shift; }
[[ $# -gt 0 ]] || { echo "usage: tools/pack-cuda12-wheels.sh [--sizes] cupy|jax|cupynumeric ..." >&2; exit 2; }

# What each group needs beyond the host's image (its CUDA 13 libraries have other package names).
group_packages() {
  case $1 in
    cupy) echo cupy-cuda12x nvidia-cuda-runtime-cu12 nvidia-cuda-nvrtc-cu12 nvidia-cublas-cu12 nvidia-nvjitlink-cu12 nvidia-cuda-cccl-cu12 ;;
    jax) echo jax-cuda12-plugin jax-cuda12-pjrt nvidia-cuda-runtime-cu12 nvidia-cuda-nvrtc-cu12 nvidia-cublas-cu12 \
      nvidia-cuda-cupti-cu12 nvidia-cuda-nvcc-cu12 nvidia-cudnn-cu12 nvidia-cufft-cu12 nvidia-cusolver-cu12 \
      nvidia-cusparse-cu12 nvidia-nccl-cu12 nvidia-nvjitlink-cu12 nvidia-nvshmem-cu12 ;;
    cupynumeric) echo nvidia-cupynumeric-cu12 legate-cu12 cutensor-cu12 nvidia-cuda-runtime-cu12 nvidia-cublas-cu12 \
      nvidia-cufft-cu12 nvidia-cusolver-cu12 nvidia-cusparse-cu12 nvidia-nccl-cu12 nvidia-nvjitlink-cu12 nvidia-cuda-nvrtc-cu12 ;;
    *) echo "pack-cuda12-wheels.sh: no group $1 (cupy, jax, cupynumeric)" >&2; exit 2 ;;
  esac
}
pinned() { # NAME -> NAME==VERSION from the tested versions
  grep -i "^$1==" constraints/py3.12.txt || { echo "pack-cuda12-wheels.sh: $1 is not in constraints/py3.12.txt" >&2; exit 2; }
}

exclude=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$exclude")" && { grep -qxF /.gpuwheels/ "$exclude" 2>/dev/null || echo /.gpuwheels/ >>"$exclude"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p .gpuwheels
for group in "$@"; do
  mkdir -p "$tmp/$group/wheels" "$tmp/$group/site"
  for name in $(group_packages "$group"); do pinned "$name"; done >"$tmp/$group/requirements.txt"
  # The host's Python and platform (manylinux x86-64; this machine's glibc is newer than the tags).
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    -d "$tmp/$group/wheels" -r "$tmp/$group/requirements.txt" 2> >(grep -v "^WARNING: Location 'file" >&2)
  echo "$group: wheels"
  (cd "$tmp/$group/wheels" && ls -l --block-size=1 *.whl | awk '{printf "  %8.1f MiB  %s\n", $5 / 2^20, $9; s += $5} END {printf "  %8.1f MiB  in all\n", s / 2^20}')
  for wheel in "$tmp/$group"/wheels/*.whl; do python3 -m zipfile -e "$wheel" "$tmp/$group/site"; done
  # Wheels cannot hold symbolic links: identical shared libraries arrive as copies; link them again.
  python3 - "$tmp/$group/site" <<'PY'
import hashlib, os, sys
seen = {}
for folder, _, files in os.walk(sys.argv[1]):
    for name in sorted(files, key=len):
        path = os.path.join(folder, name)
        if os.path.islink(path) or os.path.getsize(path) < 1_000_000:
            continue
        digest = hashlib.sha1(open(path, "rb").read()).hexdigest()
        if digest in seen and os.path.dirname(seen[digest]) == folder:
            os.remove(path)
            os.symlink(os.path.basename(seen[digest]), path)
        else:
            seen.setdefault(digest, path)
PY
  find "$tmp/$group/site" -name '*.a' -delete
  tar -cf - -C "$tmp/$group/site" . | xz -T0 -6 >"$tmp/$group.tar.xz"
  parts=$(( ($(stat -c %s "$tmp/$group.tar.xz") + 60 * 2**20 - 1) / (60 * 2**20) ))
  echo "$group: $(du -m "$tmp/$group.tar.xz" | cut -f1) MiB packed, $parts parts of at most 60 MiB (one device run each)"
  ((sizes_only)) && continue
  rm -rf ".gpuwheels/cu12-$group" && mkdir -p ".gpuwheels/cu12-$group"
  split -b 60M -d -a 2 "$tmp/$group.tar.xz" ".gpuwheels/cu12-$group/part"
  echo "$parts $(sha256sum "$tmp/$group.tar.xz" | cut -d' ' -f1)" >".gpuwheels/cu12-$group/MANIFEST"
done
((sizes_only)) && exit 0

cat >.gpuwheels/install-cu12-on-gpu-host.sh <<'SH'
# Source on the GPU host from the repository root, after each run that brought parts: gathers the
# parts of .gpuwheels/cu12-GROUP in /tmp/gpucu12-GROUP, unpacks a group once all its parts are there
# (SHA-256 checked) into /tmp/gpusite-cu12, and puts that folder first on PYTHONPATH.
for _dir in .gpuwheels/cu12-*; do
  [[ -d $_dir ]] || continue
  _group=${_dir#.gpuwheels/cu12-}
  mkdir -p "/tmp/gpucu12-$_group" && cp -n "$_dir"/part* "$_dir"/MANIFEST "/tmp/gpucu12-$_group/" 2>/dev/null
done
for _gathered in /tmp/gpucu12-*; do
  [[ -f $_gathered/MANIFEST && ! -f $_gathered/.unpacked ]] || continue
  read -r _n _sha <"$_gathered/MANIFEST"
  if (($(ls "$_gathered"/part* | wc -l) < _n)); then
    echo "${_gathered#/tmp/gpucu12-}: $(ls "$_gathered"/part* | wc -l) of $_n parts here so far"
  elif [[ $(cat "$_gathered"/part* | sha256sum | cut -d' ' -f1) == "$_sha" ]]; then
    mkdir -p /tmp/gpusite-cu12 && cat "$_gathered"/part* | xz -d -T0 | tar -x -C /tmp/gpusite-cu12 && touch "$_gathered/.unpacked"
  else
    echo "${_gathered#/tmp/gpucu12-}: the parts do not match their MANIFEST: pack them again" >&2
  fi
done
export PYTHONPATH=/tmp/gpusite-cu12${PYTHONPATH:+:$PYTHONPATH}
unset _dir _group _gathered _n _sha
SH
echo "wrote .gpuwheels/install-cu12-on-gpu-host.sh"
