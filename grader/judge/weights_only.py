"""Why ``torch.load(..., weights_only=True)`` refused a checkpoint, in the candidate's terms.

torch's refusal is a paragraph about trusting the file's source and allow-listing
globals, advice for someone loading a file, not for someone who wrote the
``state_dict()``. The one sentence that names what is wrong is its
``WeightsUnpickler error: Unsupported global: GLOBAL scheduler.Shape ...``; a check
quotes that, cut to its first sentence. The text comes from the sandbox: untrusted,
so it is only searched and cut here, and shown through the scorecard's escaping.
"""

from __future__ import annotations

import re

from grader.untrusted import without_ansi

_REASON = re.compile(r"WeightsUnpickler error:\s*(?P<reason>[^\n]*?)(?:\.\s|\.?$)", re.MULTILINE)
_MAX = 300


def weights_only_refusal(error_text: str) -> str:
    """``"Unsupported global: GLOBAL scheduler.Shape was not an allowed global by default"`` from torch's
    refusal; its first line (capped) when the text has no such sentence."""
    text = without_ansi(error_text if isinstance(error_text, str) else "")
    found = _REASON.search(text)
    reason = found["reason"] if found else (text.strip().splitlines() or [""])[0]
    return reason.strip()[:_MAX]
