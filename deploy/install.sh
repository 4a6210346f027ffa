#!/usr/bin/env bash
# The course's one install recipe: the Dockerfile and apptainer.def both run it, and the tests run
# it outside any container. The dependency list itself lives in pyproject.toml only.
#
#   deploy/install.sh VENV EXTRAS [PART]      e.g. deploy/install.sh /opt/gs-course/venv cuda12,lab,test
#
# PART is all (the default), or dependencies then package in two steps: the Dockerfile installs the
# dependencies (gigabytes of CUDA wheels) from pyproject.toml alone, in a layer of their own, so that
# a change to a notebook or to gs_course reinstalls only the package (seconds).
set -euo pipefail
venv=$1
extras=$2
part=${3:-all}
here=$(cd "$(dirname "$0")/.." && pwd)
pip=("$venv/bin/python" -m pip install --no-cache-dir --quiet)
case $part in
  all | dependencies)
    python3 -m venv "$venv"
    "${pip[@]}" --upgrade pip ;;
  package) ;;
  *) echo "install.sh: PART is all, dependencies or package, not $part" >&2; exit 2 ;;
esac
case $part in
  all) "${pip[@]}" "$here${extras:+[$extras]}" ;;
  dependencies)
    "$venv/bin/python" - "$here/pyproject.toml" "$extras" >"$venv/requirements.txt" <<'PY'
import sys, tomllib
project = tomllib.load(open(sys.argv[1], "rb"))["project"]
extras = [e for e in sys.argv[2].split(",") if e]
print("\n".join(project["dependencies"] + [d for e in extras for d in project["optional-dependencies"][e]]))
PY
    "${pip[@]}" -r "$venv/requirements.txt" ;;
  package) "${pip[@]}" --no-deps "$here" ;;
esac
[[ $part == dependencies ]] || "$venv/bin/gs-course" --version
