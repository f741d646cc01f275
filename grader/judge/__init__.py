"""The judge zone: trusted code that runs the hidden checks and scores them.

What an exercise's checks import::

    from grader.judge import expect_tensor, expect_close, expect_gradient, candidate_raises, CandidateError, Opaque
    from grader.judge import expect_scalar, expect_bounded   # numbers: NaN and inf never pass
    from grader.judge import weights_only_refusal            # why torch.load(weights_only=True) refused

and the ``sandbox`` fixture the pytest plugin (``grader.judge.plugin``) provides.
Markers: ``points(n)``, ``visibility("visible"|"hidden")``, ``hint("...")``, ``gpu``.

Exports load lazily: the grading parent process imports ``grader.judge.runner``
and must not pay for importing torch, which only the checks need.
"""

import importlib

_EXPORTS = {
    "CandidateError": "grader.judge.calls",
    "ProtocolViolation": "grader.judge.calls",
    "ResultTooLarge": "grader.judge.calls",
    "SandboxCrash": "grader.judge.calls",
    "SandboxFailure": "grader.judge.calls",
    "SandboxTimeout": "grader.judge.calls",
    "candidate_raises": "grader.judge.expect",
    "expect_close": "grader.judge.expect",
    "expect_gradient": "grader.judge.expect",
    "expect_tensor": "grader.judge.expect",
    "expect_bounded": "grader.judge.numbers",
    "expect_scalar": "grader.judge.numbers",
    "Opaque": "grader.protocol",
    "weights_only_refusal": "grader.judge.weights_only",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'grader.judge' has no attribute {name!r}")
