#!/usr/bin/env bash
# GPU smoke test, for a machine with an NVIDIA GPU, its driver, Docker and the NVIDIA
# Container Toolkit: builds the CUDA runtime image (grader-runtime-cuda:<hash>; the first
# build downloads several GB), grades mixed_precision_step's reference with --gpus all in
# the Docker sandbox, and checks that its CUDA checks ran (passed, not skipped). Prints
# what it saw; exits non-zero with one line saying why when anything is missing.
# Python: $PYTHON, else .venv/bin/python (scripts/setup.sh makes it), else python3.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

fail() { echo "gpu-smoke: FAILED: $*" >&2; exit 1; }

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    echo "gpu-smoke: no NVIDIA GPU on this machine (nvidia-smi lists none): run this on a GPU host" >&2
    exit 2
fi
PY=${PYTHON:-}
[ -n "$PY" ] || { [ -x .venv/bin/python ] && PY=.venv/bin/python; } || PY=python3
export GRADER_TAG=${GRADER_TAG:-gpu-smoke}
OUT=$(mktemp -d -t grader-gpu-smoke-XXXXXX)
trap 'rm -rf "$OUT"' EXIT

echo "== host GPUs"
nvidia-smi -L
echo "== building the CUDA image (grader sandbox build --cuda)"
"$PY" -m grader sandbox build --cuda || fail "the CUDA image did not build (see above)"
echo "== grading mixed_precision_step's reference with --gpus all"
set +e
"$PY" -m grader submit mixed_precision_step solutions/mixed_precision_step/amp_step.py --sandbox docker \
    --gpus all --audience panel --no-history --json "$OUT/report.json"
status=$?
set -e
[ -s "$OUT/report.json" ] || fail "no report was written (grader exit status $status)"
"$PY" - "$OUT/report.json" <<'PYEOF'
import json, sys

report = json.load(open(sys.argv[1]))
env = report["environment"]
print(f"== saw: image {env.get('image')}, torch {env.get('torch_version')}, CUDA {env.get('cuda_version')}, "
      f"GPUs asked {env.get('gpus')}, GPUs in the sandbox {env.get('sandbox_gpus')}")
cuda = [c for c in report["checks"] if "cuda" in c["id"].lower()]
for c in cuda:
    print(f"   {c['status']:8} {c['score']:g}/{c['max_score']:g}  {c['name']}" + (f"  ({c['message']})" if c.get("message") else ""))
problems = []
if not report["graded"]:
    problems.append(f"not graded: {report.get('not_graded_reason', '').splitlines()[0]}")
if not env.get("cuda_version"):
    problems.append("the sandbox's torch is not a CUDA build")
if not env.get("sandbox_gpus"):
    problems.append("the sandbox saw no GPU")
if not cuda:
    problems.append("no CUDA check was collected")
if any(c["status"] != "passed" for c in cuda):
    problems.append("a CUDA check did not pass: " + ", ".join(f"{c['name']} {c['status']}" for c in cuda if c["status"] != "passed"))
if problems:
    print("gpu-smoke: FAILED: " + "; ".join(problems), file=sys.stderr)
    sys.exit(1)
print(f"gpu-smoke: OK: {len(cuda)} CUDA checks ran and passed; score {report['score']:g}/{report['max_score']:g}")
PYEOF
