"""The subset check runs in the warm server's child, so the grader's own process never imports torch
(issue 29's memory), and answers exactly what the same check answers in process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from grader.exercise import load_exercise
from grader.host import source_check, warm
from grader.subset.audit import AUDIT_JSON, audit_exercise_file

ROOT = Path(__file__).resolve().parents[1]
SOURCES = {
    "reference": (ROOT / "solutions" / "attention" / "attention.py").read_text(),
    "forbidden": "import torch\nimport torch.nn.functional as F\n\ndef f(q, k, v):\n"
                 "    return F.scaled_dot_product_attention(q, k, v)\n",
    "by identity": "import torch\nm = torch.nn.modules.activation.MultiheadAttention(4, 2)\n",
    "violation": "import torch\nexec('1')\n",
}

# In a fresh interpreter: the in-process check is made to fail, so an answer can only come from the server.
DRIVER = """
import json, sys
from grader.exercise import load_exercise
from grader.host import source_check
from grader.subset import audit

def refuse(self):
    raise RuntimeError("the check ran in the grader's own process")

audit.AuditRequest.run = refuse
ex = load_exercise(sys.argv[1])
answers = {name: audit.AUDIT_JSON.dump_python(source_check.audit_submission(ex, src), mode="json")
           for name, src in json.loads(sys.stdin.read()).items()}
print(json.dumps({"answers": answers, "torch_imported": "torch" in sys.modules}))
"""


def test_the_servers_check_answers_as_the_check_in_process_and_the_driver_never_imports_torch():
    proc = subprocess.run([sys.executable, "-c", DRIVER, str(ROOT / "exercises" / "attention")],
                          input=json.dumps(SOURCES), capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.splitlines()[-1])
    assert out["torch_imported"] is False
    ex = load_exercise(ROOT / "exercises" / "attention")
    for name, src in SOURCES.items():
        here = AUDIT_JSON.dump_python(audit_exercise_file(ex, src), mode="json")
        assert out["answers"][name] == here, name
    assert out["answers"]["forbidden"]["forbidden"] and out["answers"]["violation"]["violations"]
    assert not out["answers"]["reference"]["forbidden"] and not out["answers"]["reference"]["violations"]


def test_without_an_answer_from_the_server_the_check_runs_in_process(monkeypatch):
    source_check._audit.cache_clear()
    asked = []
    monkeypatch.setattr(source_check, "ask_the_server", lambda: True)
    monkeypatch.setattr(warm, "run_audit", lambda request, timeout: asked.append(request))  # gives no answer
    ex = load_exercise(ROOT / "exercises" / "attention")
    got = source_check.audit_submission(ex, SOURCES["forbidden"])
    source_check._audit.cache_clear()
    assert asked, "the server was not asked"
    assert AUDIT_JSON.dump_python(got) == AUDIT_JSON.dump_python(audit_exercise_file(ex, SOURCES["forbidden"]))
    assert got.forbidden


def test_a_caller_owns_the_audit_it_gets(monkeypatch):
    source_check._audit.cache_clear()
    ex = load_exercise(ROOT / "exercises" / "attention")
    first = source_check.audit_submission(ex, SOURCES["forbidden"])
    first.forbidden.clear()
    assert source_check.audit_submission(ex, SOURCES["forbidden"]).forbidden
    source_check._audit.cache_clear()
