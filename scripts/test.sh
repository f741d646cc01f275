#!/usr/bin/env bash
# The test suite, on a fresh machine: set up, run pytest, then prove every exercise in Docker.
# CI runs this with GRADER_REQUIRE_DOCKER=1, GRADER_REQUIRE_BROWSER=1 and GRADER_REQUIRE_POSTGRES=1, so tests
# needing Docker, Debian's chromium or PostgreSQL (the service's suite runs on SQLite and on PostgreSQL) fail
# instead of skipping.
#
#   bash scripts/test.sh            the whole run: pytest, then `grader validate` over every exercise
#   bash scripts/test.sh ARGS...    pytest ARGS only (e.g. -k history), for quick runs while working
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
bash scripts/browser.sh
bash scripts/postgres.sh
if [ "$#" -gt 0 ]; then
    exec .venv/bin/python -m pytest "$@"
fi
# One pytest-xdist worker per core, at most four: much of a grading waits on containers and deadlines,
# so two workers nearly halve the run even on two cores. Tests marked `exclusive` still run alone.
.venv/bin/python -m pytest -n auto --maxprocesses 4 --dist worksteal
# Reference and variants full marks, stub zero, every mutant caught, in the Docker sandbox (exit 4 if not);
# and the reference, stub and first mutant score the same, check by check, in the local sandbox.
exec .venv/bin/grader validate --sandbox docker --jobs 2 --parity
