#!/usr/bin/env bash
# The course's one install recipe: the Dockerfile and apptainer.def both run it, and the tests run
# it outside any container. The dependency list itself lives in pyproject.toml only.
#
#   deploy/install.sh VENV EXTRAS      e.g. deploy/install.sh /opt/gs-course/venv cuda12,lab,test
set -euo pipefail
venv=$1
extras=$2
here=$(cd "$(dirname "$0")/.." && pwd)
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --no-cache-dir --quiet --upgrade pip
"$venv/bin/python" -m pip install --no-cache-dir --quiet "$here${extras:+[$extras]}"
"$venv/bin/gs-course" --version
