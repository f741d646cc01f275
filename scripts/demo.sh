#!/usr/bin/env bash
# The main job, end to end on a fresh machine: set up, then grade the attention
# exercise's reference solution in the Docker sandbox, and its untouched stub, which the
# judge answers alone (every check "not run", no sandbox needed).
# Scorecards print here; JSON, HTML and Markdown reports land in out/. --no-history: the
# reference's full marks must not become your best score in `grader list`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
mkdir -p out
echo
echo "== grading the reference solution =="
.venv/bin/grader submit attention solutions/attention/attention.py --sandbox docker --audience panel --no-history \
    --json out/reference.json --html out/reference.html --md out/reference.md
echo
echo "== the untouched stub (answered by the judge alone) =="
.venv/bin/grader submit attention --sandbox docker --audience panel --no-history \
    --json out/stub.json --html out/stub.html --md out/stub.md
echo
echo "Reports written to out/ (open out/reference.html in a browser)."
