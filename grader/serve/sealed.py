"""A finished grading's row, signed with the panel's key, and read back only when it verifies.

The service's database is where its results live, so a row edited there must not be
shown as a score: each finished grading carries an HMAC (``grader.evidence.signing``) of
what it says (who, which exercise, which bytes, the outcome, the report), and a report is
recomputed from its checks when read (``grader.reports.derived``), as the batch's store does.
"""

from __future__ import annotations

import functools
import json

from grader.evidence.signing import ALGORITHM, Key, Seal, seal_of
from grader.reports.derived import report_from_json
from grader.reports.model import Report
from grader.serve.models import Grading

_DOMAIN = "grader serve grading v1"
SEAL_WORDS = {
    Seal.EDITED: "does not match its signature: it was edited after it was stored",
    Seal.UNSIGNED: "is unsigned",
    Seal.OTHER_KEY: "is signed with another key (another panel machine's, or forged)",
    Seal.NO_KEY: "is signed, but this machine has no key to check it",
}


def _values(g: Grading) -> str:
    return json.dumps([g.id, g.assessment_id, g.invite_id, g.exercise, g.kind, g.filename, g.sha256, g.status,
                       g.attempts, g.report, g.reason], ensure_ascii=False, separators=(",", ":"))


def sign(g: Grading, key: Key) -> None:
    """Set ``g.signature`` for what the row says now (call after its last change)."""
    g.signature = f"{ALGORITHM}:{key.id}:{key.mac(_DOMAIN, _values(g))}"


def seal(g: Grading, key: Key | None) -> Seal:
    algorithm, _, rest = (g.signature or "").partition(":")
    key_id, _, mac = rest.partition(":")
    if g.signature and (algorithm != ALGORITHM or not key_id):
        return Seal.EDITED
    return seal_of(key, key_id if g.signature else None, lambda k: k.verifies(mac, _DOMAIN, _values(g)))


def stored_report(g: Grading, key: Key | None) -> tuple[Report | None, str]:
    """The finished grading's report and ``""``, or None and why it cannot be believed ("the stored result ...")."""
    if g.report is None:
        return None, ""
    state = seal(g, key)
    if state is not Seal.SIGNED:
        return None, f"the stored result {SEAL_WORDS[state]}"
    try:
        return _read(g.report), ""
    except ValueError as e:
        return None, f"the stored result holds a report the grader did not write: {str(e).splitlines()[0]}"


@functools.lru_cache(maxsize=256)
def _read(text: str) -> Report:
    """A verified row's report, parsed and recomputed once (the live table reads every hand-in each second).
    Shared: no reader edits a report in place (each stage makes a new one with ``model_copy``)."""
    return report_from_json(text)
