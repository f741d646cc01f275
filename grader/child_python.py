"""How the grader starts Python: never importing from the folder the user ran it in.

``python -m X`` puts the current folder first on ``sys.path``, so a ``random.py``
(or ``json.py``, ``torch.py``...) in the folder where ``grader submit`` runs would
shadow the real module in the judge, and every grading would be "not graded".
Every Python process the grader starts (the warm judge server, a cold judge, the
local sandbox worker, the worker inside the container) gets its command line
from :func:`python_argv`, which adds ``-P`` (Python 3.11's safe path: neither the
script's nor the current folder goes on ``sys.path``), and runs in a folder of its
own (a fresh temporary one; ``/tmp`` in the container), never the caller's.

Not ``-I``: isolated mode also ignores ``PYTHONPATH`` and the user site-packages,
which is how a development checkout or a ``pip install --user`` of the grader is
found, and the judge must import the same grader as the command that started
it. ``PYTHONPATH`` is passed on as :func:`child_environment` rewrites it: relative
entries made absolute against the folder the grader was started from (what they
meant there), empty ones, which mean "the current folder", dropped.
"""

from __future__ import annotations

import os
from collections.abc import Mapping


def python_argv(python: str, *args: str) -> list[str]:
    """``python -P args...``: a Python command line that imports nothing from its working folder."""
    return [python, "-P", *args]


def child_environment(env: Mapping[str, str]) -> dict[str, str]:
    """A copy of ``env`` whose ``PYTHONPATH`` cannot name the child's working folder."""
    out = dict(env)
    entries = [os.path.abspath(p) for p in out.get("PYTHONPATH", "").split(os.pathsep) if p]
    if entries:
        out["PYTHONPATH"] = os.pathsep.join(entries)
    else:
        out.pop("PYTHONPATH", None)
    return out
