#!/usr/bin/env bash
# The take-home service on a fresh Debian machine, in one command (as root, like scripts/setup.sh):
# set up (venv, Docker, the sandbox image), then `grader serve` on http://127.0.0.1:8000/ (it asks for the
# first panel account's name and password when there is none). Arguments go to `grader serve`
# (e.g. --port 9000, --database postgresql://..., --engine ray). See docs/serve.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
exec .venv/bin/grader serve "$@"
