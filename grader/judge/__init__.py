"""The judge zone: trusted code that runs the hidden checks and scores them.

The check kit, what an exercise's checks import (``from grader.judge import ...``): calling probes
(``call``, ``expect_returned``, ``candidate_raises``, ``expect_each_raises``, ``expect_raised``,
``CandidateError``); tensors (``expect_tensor``, ``expect_close``, ``expect_gradient``); numbers
(``expect_scalar``, ``expect_bounded``: NaN and inf never pass); nested data (``expect_equal``,
``first_difference``); ``Tolerances``, ``EXACT``; strategies (``seeds``, ``shapes``); statistics
(``expect_fits``, ``ks_*``); ``weights_only_refusal``, ``Opaque``; the ``sandbox`` fixture and markers.
Exports load lazily: the grading parent imports ``grader.host.runner`` and must not pay for torch.
"""

import importlib

_EXPORTS = {
    "CandidateError": "grader.judge.calls",
    "ProtocolViolation": "grader.judge.calls",
    "ResultTooLarge": "grader.judge.calls",
    "SandboxCrash": "grader.judge.calls",
    "SandboxFailure": "grader.judge.calls",
    "SandboxTimeout": "grader.judge.calls",
    "call": "grader.judge.answers",
    "expect_returned": "grader.judge.answers",
    "candidate_raises": "grader.judge.expect",
    "expect_close": "grader.judge.expect",
    "expect_gradient": "grader.judge.expect",
    "expect_raised": "grader.judge.expect",
    "expect_each_raises": "grader.judge.expect",
    "expect_tensor": "grader.judge.expect",
    "expect_bounded": "grader.judge.numbers",
    "expect_scalar": "grader.judge.numbers",
    "expect_fits": "grader.judge.stats",
    "ks_normal": "grader.judge.stats",
    "ks_threshold": "grader.judge.stats",
    "ks_uniform": "grader.judge.stats",
    "seeds": "grader.judge.strategies",
    "shapes": "grader.judge.strategies",
    "EXACT": "grader.judge.tolerance",
    "Tolerance": "grader.judge.tolerance",
    "Tolerances": "grader.judge.tolerance",
    "expect_equal": "grader.judge.trees",
    "first_difference": "grader.judge.trees",
    "Opaque": "grader.wire.protocol",
    "weights_only_refusal": "grader.judge.weights_only",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'grader.judge' has no attribute {name!r}")
