#!/usr/bin/env bash
# Write constraints/py3.11.txt and constraints/py3.12.txt: one version of every package the course
# installs, for each supported Python, as pip resolves pyproject.toml's extras (lab,test with each of
# cpu-cupynumeric, cuda12 and cuda13) on top of SEED, the versions that were tested:
#
#   tools/pin-versions.sh python3.11 SEED.txt   # SEED: pip freeze of the environment CI ran
#   tools/pin-versions.sh python3.12 SEED.txt   # SEED: the GPU host's versions (jax 0.11.2, cupy-cuda13x 14.2.0...)
#
# ./course, CI (.ci/run through ./course), deploy/install.sh (both images) and the GPU host's
# scripts install with `pip install -c constraints/pyX.Y.txt`. Nothing is installed here: each
# resolution is `pip install --dry-run --report` in a throwaway venv.
set -euo pipefail
python=$1 seed=$2
version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q --upgrade pip
grep -v -e '^-e ' -e '^gs-course' -e '^#' "$seed" >"$work/seed.txt"
for extra in cpu-cupynumeric cuda12 cuda13; do
  "$work/venv/bin/python" -m pip install -q --dry-run --ignore-installed --report "$work/$extra.json" \
    -c "$work/seed.txt" "$root[lab,test,$extra]" 2> >(grep -v "^WARNING: Location 'file" >&2)
done
"$work/venv/bin/python" - "$version" "$work"/*.json >"$root/constraints/py$version.txt" <<'PY'
import json, sys
version, reports = sys.argv[1], sys.argv[2:]
pins, wanted_by = {}, {}
for path in reports:
    extra = path.rsplit("/", 1)[1].removesuffix(".json")
    for item in json.load(open(path))["install"]:
        name, found = item["metadata"]["name"].lower().replace("_", "-"), item["metadata"]["version"]
        if name == "gs-course":
            continue
        if pins.setdefault(name, found) != found:
            sys.exit(f"{name}: {pins[name]} for {wanted_by[name]}, {found} for {extra}: give it in the seed")
        wanted_by.setdefault(name, extra)
print(f"# Tested versions for Python {version}, written by tools/pin-versions.sh (pip install -c this file).")
print("\n".join(f"{name}=={pins[name]}" for name in sorted(pins)))
PY
echo "wrote constraints/py$version.txt ($(grep -vc '^#' "$root/constraints/py$version.txt") pins)"
