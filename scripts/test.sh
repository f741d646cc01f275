#!/usr/bin/env bash
# The test suite, on a fresh machine: set up, then run pytest (extra args pass through).
# CI runs this with GRADER_REQUIRE_DOCKER=1 and GRADER_REQUIRE_BROWSER=1, so tests needing Docker or
# Debian's chromium fail instead of skipping.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
bash scripts/browser.sh
exec .venv/bin/python -m pytest "$@"
