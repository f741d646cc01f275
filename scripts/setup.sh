#!/usr/bin/env bash
# Set up everything grader needs on a fresh Debian machine, idempotently:
#   1. a virtual environment in .venv with grader installed, torch pinned by constraints.txt
#   2. Docker (docker.io), a running dockerd, and the sandbox runtime image (sandbox/bootstrap.sh)
# Both README commands (scripts/demo.sh and scripts/test.sh) start with this.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PY=.venv/bin/python
if [ ! -x "$PY" ]; then
    echo "setup: creating .venv"
    python3 -m venv .venv
fi
# The constraints file pins torch==2.13.0 (a CPU wheel): an unpinned torch would pull
# the newest CUDA build, several GB.
echo "setup: installing grader into .venv (torch pinned by constraints.txt)"
"$PY" -m pip install --quiet --disable-pip-version-check -c constraints.txt -e ".[test]" 2>&1 \
    | grep -v "is ignored: it is neither a file nor a directory" || true
"$PY" -c "import torch, sys; v = torch.__version__.split('+')[0]; sys.exit(0 if v == '2.13.0' else f'setup: expected torch 2.13.0, got {v}')"
touch .venv/.installed  # scripts/test.sh --fast reinstalls only when pyproject.toml or constraints.txt is newer

PYTHON="$PY" bash sandbox/bootstrap.sh
