#!/usr/bin/env bash
# The course's one install recipe: the Dockerfile and apptainer.def both run it, and the tests run
# it outside any container. The dependency list itself lives in pyproject.toml only, the tested
# versions in constraints/pyX.Y.txt (for the Python that makes the venv).
#
#   deploy/install.sh VENV EXTRAS [PART]      e.g. deploy/install.sh /opt/gs-course/venv cuda12,lab,test
#
# PART is all (the default: the package installed as a wheel would be), or dependencies then package
# in two steps, as both images do: the dependencies (gigabytes of CUDA wheels) from pyproject.toml and
# the constraints alone, in a layer of their own, so that a change to a notebook or to gs_course
# reinstalls only the package (seconds); the package then as an editable install of the course's folder
# (/opt/gs-course), which the image keeps whole: gs-course instructor-check and nbval need its
# solutions/ and pyproject.toml's test settings, as in a clone.
set -euo pipefail
venv=$1
extras=$2
part=${3:-all}
here=$(cd "$(dirname "$0")/.." && pwd)
constraints=$here/constraints/py$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])').txt
[[ -f $constraints ]] || { echo "install.sh: no tested versions for this Python ($constraints): use Python 3.11 or 3.12" >&2; exit 2; }
pip=("$venv/bin/python" -m pip install --no-cache-dir --quiet -c "$constraints")
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
  package) "${pip[@]}" --no-deps -e "$here" ;;
esac
[[ $part == dependencies ]] || "$venv/bin/gs-course" --version
