"""The judge zone: trusted code that runs the hidden checks and scores them.

What an exercise's checks import::

    from grader.judge import expect_tensor, candidate_raises, CandidateError, Opaque

and the ``sandbox`` fixture the pytest plugin (``grader.judge.plugin``) provides.
Markers: ``points(n)``, ``visibility("visible"|"hidden")``, ``hint("...")``, ``gpu``.
"""

from grader.judge.calls import CandidateError, ProtocolViolation, SandboxCrash, SandboxFailure, SandboxTimeout
from grader.judge.expect import candidate_raises, expect_tensor
from grader.protocol import Opaque

__all__ = [
    "CandidateError", "Opaque", "ProtocolViolation", "SandboxCrash", "SandboxFailure", "SandboxTimeout",
    "candidate_raises", "expect_tensor",
]
