#!/usr/bin/env bash
# GPU smoke test, for a machine with an NVIDIA GPU and its driver.
#
#   bash scripts/gpu-smoke.sh                    Docker: builds the CUDA runtime image
#                                                (grader-runtime-cuda:<hash>; the first build downloads
#                                                several GB) and grades in it; needs Docker and the
#                                                NVIDIA Container Toolkit.
#   bash scripts/gpu-smoke.sh --sandbox local    No Docker: grades with this checkout's Python and its own
#                                                CUDA build of torch, in the local sandbox (not isolated).
#                                                Run it from a checkout whose Python has the grader's
#                                                dependencies (pip install -e ., or wheels brought along).
#
# It grades, with --gpus all: mixed_precision_step's reference (its CUDA checks must run and pass, not
# skip) and the reference of every exercise whose gpu policy is "required" (full marks, no check
# skipped). It prints the GPU, torch, CUDA, what the sandbox saw and each grading's time, and exits 0
# only when all of that holds; 1 with one line saying why otherwise; 2 when there is no GPU here.
# Python: $PYTHON, else .venv/bin/python (scripts/setup.sh makes it), else python3.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

SANDBOX=docker
while [ $# -gt 0 ]; do
    case "$1" in
        --sandbox) SANDBOX=${2:-}; shift 2 ;;
        --sandbox=*) SANDBOX=${1#--sandbox=}; shift ;;
        -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
        *) echo "gpu-smoke: unknown argument $1 (expected --sandbox docker|local)" >&2; exit 2 ;;
    esac
done
case "$SANDBOX" in docker|local) ;; *) echo "gpu-smoke: --sandbox must be docker or local, not '$SANDBOX'" >&2; exit 2 ;; esac

fail() { echo "gpu-smoke: FAILED: $*" >&2; exit 1; }

PY=${PYTHON:-}
[ -n "$PY" ] || { [ -x .venv/bin/python ] && PY=.venv/bin/python; } || PY=python3
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    echo "gpu-smoke: no NVIDIA GPU on this machine (nvidia-smi lists none): run this on a GPU host" >&2
    exit 2
fi
export GRADER_TAG=${GRADER_TAG:-gpu-smoke}
OUT=$(mktemp -d -t grader-gpu-smoke-XXXXXX)
trap 'rm -rf "$OUT"' EXIT

echo "== host GPUs"
nvidia-smi -L
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
"$PY" -c "import grader" 2>/dev/null || fail "$PY cannot import grader: install the checkout (pip install -e .) or set PYTHON"

if [ "$SANDBOX" = docker ]; then
    echo "== building the CUDA image (grader sandbox build --cuda)"
    "$PY" -m grader sandbox build --cuda || fail "the CUDA image did not build (see above)"
else
    echo "== the local sandbox's torch (this Python's own)"
    "$PY" - <<'PYEOF' || fail "this Python's torch cannot use the GPU (see above)"
import sys
import torch
print(f"   torch {torch.__version__}, CUDA {torch.version.cuda}, cuda available: {torch.cuda.is_available()}, "
      f"devices: {torch.cuda.device_count() if torch.cuda.is_available() else 0}")
if torch.version.cuda is None or not torch.cuda.is_available():
    print("gpu-smoke: this Python's torch is a CPU build or sees no GPU; install a CUDA build of torch", file=sys.stderr)
    sys.exit(1)
PYEOF
fi

# The references graded: mixed_precision_step (optional: its CUDA checks), then every GPU-required exercise.
mapfile -t GRADINGS < <("$PY" - <<'PYEOF'
from grader.corpus import corpus
from grader.exercise import GpuPolicy, load_exercise
from grader.host.validation import all_exercise_names

names = ["mixed_precision_step"] + [n for n in all_exercise_names()
                                    if load_exercise(n).config.exercise.gpu is GpuPolicy.REQUIRED]
for name in names:
    print(f"{name} {corpus(load_exercise(name))[0].path}")
PYEOF
)
[ "${#GRADINGS[@]}" -gt 1 ] || fail "found no GPU-required exercise to grade"

for line in "${GRADINGS[@]}"; do
    name=${line%% *}; file=${line#* }
    echo "== grading $name's reference with --gpus all in the $SANDBOX sandbox"
    set +e
    "$PY" -m grader submit "$name" "$file" --sandbox "$SANDBOX" --gpus all --audience panel --no-history \
        --json "$OUT/$name.json" > "$OUT/$name.txt" 2>&1
    status=$?
    set -e
    [ -s "$OUT/$name.json" ] || { tail -20 "$OUT/$name.txt" >&2; fail "$name: no report was written (grader exit status $status)"; }
done

"$PY" - "$SANDBOX" "$OUT" "${GRADINGS[@]}" <<'PYEOF'
import json
import sys
from pathlib import Path

sandbox, out, gradings = sys.argv[1], Path(sys.argv[2]), [g.split(" ", 1)[0] for g in sys.argv[3:]]
problems = []
for name in gradings:
    report = json.loads((out / f"{name}.json").read_text())
    env = report["environment"]
    print(f"== {name}: sandbox {env.get('sandbox')}, image {env.get('image')}, torch {env.get('torch_version')}, "
          f"CUDA {env.get('cuda_version')}, GPUs asked {env.get('gpus')}, GPUs in the sandbox {env.get('sandbox_gpus')}, "
          f"passed on {env.get('local_gpu_env')}, {report.get('duration_s', 0):.1f} s")
    if not report["graded"]:
        problems.append(f"{name}: not graded: {(report.get('not_graded_reason') or '').splitlines()[0]}")
        continue
    for c in report["checks"]:
        print(f"   {c['status']:8} {c['score']:g}/{c['max_score']:g}  {c['duration_s'] or 0:6.2f} s  {c['name']}"
              + (f"  ({c['message'][:160]})" if c.get("message") and c["status"] != "passed" else ""))
    if env.get("sandbox") != sandbox:
        problems.append(f"{name}: graded in the {env.get('sandbox')} sandbox, not {sandbox}")
    if not env.get("cuda_version"):
        problems.append(f"{name}: the sandbox's torch is not a CUDA build")
    if not env.get("sandbox_gpus"):
        problems.append(f"{name}: the sandbox saw no GPU")
    skipped = [c["name"] for c in report["checks"] if c["status"] == "skipped"]
    if skipped:
        problems.append(f"{name}: checks skipped with --gpus all: {', '.join(skipped)}")
    if report["score"] < report["max_score"]:
        lost = [f"{c['name']} {c['status']}" for c in report["checks"] if c["score"] < c["max_score"]]
        problems.append(f"{name}: the reference lost points: {', '.join(lost)}")
    if name == "mixed_precision_step" and not [c for c in report["checks"] if "cuda" in c["id"].lower()]:
        problems.append(f"{name}: no CUDA check was collected")
if problems:
    print("gpu-smoke: FAILED: " + "; ".join(problems), file=sys.stderr)
    sys.exit(1)
print(f"gpu-smoke: OK: {len(gradings)} references graded with --gpus all in the {sandbox} sandbox, every check ran "
      "and passed")
PYEOF
