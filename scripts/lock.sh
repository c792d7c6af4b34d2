#!/usr/bin/env bash
# Re-pins constraints.txt from pyproject.toml (issue 25): every dependency of the app, its test extras and its build
# extras, for every platform and Python the project supports, in one file. .ci/run installs through it
# (PIP_CONSTRAINT) and packaging/build.sh builds through it, so the app that is tested is the app that is shipped.
# Run it when pyproject.toml's dependencies change, or to take newer releases; then run the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
tool=$(mktemp -d)
trap 'rm -rf "$tool"' EXIT
python3 -m venv "$tool/venv"
"$tool/venv/bin/pip" install -q uv
"$tool/venv/bin/uv" pip compile --quiet --universal --python-version 3.11 --no-header --annotation-style line \
  --extra test --extra build pyproject.toml -o constraints.txt.new
{ echo "# Pinned by scripts/lock.sh from pyproject.toml (app + test + build extras, every platform); do not edit."
  cat constraints.txt.new; } > constraints.txt
rm constraints.txt.new
echo "constraints.txt: $(grep -c '==' constraints.txt) pins"
