"""A submission's subset check, run where torch is already imported.

The check (``grader.subset.audit``) compares torch's objects by identity, so it needs torch. Run in
the warm server (``grader.host.warm``), which has it anyway, it costs the grader's own process
nothing and a batch's driver never imports torch; a process that has torch already runs it itself.
Either way it is the same trusted code on the same text; if the server cannot answer, the check runs
here. See docs/decisions/warm-judge.md.
"""

from __future__ import annotations

import copy
import functools
import sys

from grader.exercise import Exercise
from grader.host import warm
from grader.subset.audit import AUDIT_JSON, AuditRequest, SourceAudit, exercise_audit_request

#: Long enough for any file the judge agrees to read; past it, the check runs here instead.
AUDIT_TIMEOUT_S = 120.0


def audit_submission(ex: Exercise, source: str) -> SourceAudit:
    """The subset check of ``source`` under ``ex``'s rules (``audit_exercise_file``'s answer)."""
    return copy.deepcopy(_audit(exercise_audit_request(ex, source).model_dump_json()))  # callers own theirs


@functools.lru_cache(maxsize=8)  # `grader submit` asks before grading (answered alone?), then grade() asks again
def _audit(request_json: str) -> SourceAudit:
    if ask_the_server():
        answer = warm.run_audit(request_json, timeout=AUDIT_TIMEOUT_S)
        if answer is not None:
            return AUDIT_JSON.validate_json(answer)
    return AuditRequest.model_validate_json(request_json).run()


def ask_the_server() -> bool:
    """Whether the check runs in the warm server's child: only where it saves this process importing torch."""
    return "torch" not in sys.modules and warm.available()
