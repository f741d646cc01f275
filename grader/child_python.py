"""How the grader starts Python: never importing from the folder the user ran it in.

A ``random.py`` in the folder where ``grader submit`` runs would shadow the real module in the judge.
So every Python process the grader starts gets its command line from :func:`python_argv`, which adds
``-P`` (neither the script's nor the current folder on ``sys.path``), and runs in a folder of its own,
never the caller's. Not ``-I``, which would drop ``PYTHONPATH`` and user site-packages, how a
development grader is found; :func:`child_environment` passes ``PYTHONPATH`` on with relative entries
made absolute and empty ones dropped. See docs/decisions/child-python.md.
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
