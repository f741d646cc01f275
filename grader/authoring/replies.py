"""Every probe declares the shape of its reply, judge side, in ``checks/replies.py``.

A check reads what a probe sent back; the sandbox that sent it is the candidate's. So the
judge checks each reply against its probe's declared shape (``grader.judge.replies``) before
any check reads it, and a reply that does not fit is the submission's failure on that check,
never a ``KeyError`` in the check's code. These rules hold the declarations to the probes:
``REPLIES`` is a dict literal with one ``Reply(...)`` per public function of ``probes.py``
(read as text here: the judge never imports the probes), and names no probe that is not there.
"""

from __future__ import annotations

import ast
from pathlib import Path

from grader.authoring.findings import Finding, Rule
from grader.authoring.folder import Folder
from grader.judge.replies import REPLIES_FILE


def _probes(path: Path) -> dict[str, int] | None:
    """The public module-level functions of probes.py, by name, with their lines (None: it does not parse)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (SyntaxError, ValueError, UnicodeDecodeError, OSError):
        return None
    return {n.name: n.lineno for n in tree.body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and not n.name.startswith("_")}


def _declared(path: Path) -> tuple[dict[str, int] | None, str | None, int | None]:
    """(probe name -> line, of REPLIES's entries; or None and why, with a line)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (SyntaxError, ValueError, UnicodeDecodeError, OSError) as e:
        return None, f"cannot be read as Python ({getattr(e, 'msg', e)})", getattr(e, "lineno", None)
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) \
            else []
        if any(isinstance(t, ast.Name) and t.id == "REPLIES" for t in targets):
            if not isinstance(node.value, ast.Dict):
                return None, "REPLIES is not a dict literal", node.lineno
            out = {}
            for key, value in zip(node.value.keys, node.value.values):
                if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                    return None, "a key of REPLIES is not a probe's name written as a string", node.lineno
                called = isinstance(value, ast.Call) and getattr(value.func, "id", getattr(value.func, "attr", "")) \
                    == "Reply"
                if not called:
                    return None, f"REPLIES[{key.value!r}] is not a Reply(...)", key.lineno
                out[key.value] = key.lineno
            return out, None, None
    return None, "it defines no REPLIES", None


def every_probe_declared(folder: Folder) -> list[Finding]:
    path = folder.exercise.checks_dir / REPLIES_FILE
    fix = ("declare each probe's reply: REPLIES = {\"probe\": Reply({\"key\": TENSOR, ...}), ...} "
           "(grader.judge.replies; AUTHORING.md, \"Reply shapes\")")
    probes = _probes(folder.exercise.probes)
    if probes is None:
        return []  # a probes.py that does not parse fails every grading with Python's own message
    if not path.is_file():
        return [Finding(Rule.REPLY_SHAPES, path, f"no {REPLIES_FILE} in checks/: the judge checks every reply "
                        f"against its probe's shape before a check reads it, and refuses a probe with none; {fix}.")]
    declared, why, line = _declared(path)
    if declared is None:
        return [Finding(Rule.REPLY_SHAPES, path, f"{why}: {fix}.", line=line)]
    out = [Finding(Rule.REPLY_SHAPES, path, f"no reply shape for the probe {name!r} (probes.py line {at}): every "
                   f"call of it would be a check error; {fix}.") for name, at in probes.items() if name not in declared]
    out += [Finding(Rule.REPLY_SHAPES, path, f"REPLIES names {name!r}, which probes.py does not define: remove it, "
                    "or correct the name.", line=at) for name, at in declared.items() if name not in probes]
    return out


RULES = (every_probe_declared,)
