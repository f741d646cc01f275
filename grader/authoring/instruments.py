"""Probes measure out of the candidate's reach: nothing measured lives on an object the candidate is handed.

Whatever a probe gives the candidate's code (a model, a block, an optimizer, a scaler, a
tensor) is theirs to read and rewrite: its attributes, any list it holds, its hooks
(``module._forward_hooks``, ``tensor._backward_hooks``). A saved-tensor hooks context of
theirs runs inside the probe's and hides what autograd saves from it. So ``probes.py`` and
``shared.py`` register no hook, open no ``saved_tensors_hooks`` context and keep no log on an
object; they record in a ``probekit.Ledger`` the object finds by its identity
(``probekit.attached``) and measure what stays alive with ``probekit.Allocations``. A line
that registers a hook as part of the scenario under test (an owner's own hook the candidate
must leave alone) says so with a ``# not an instrument: <why>`` comment.

An exercise whose probes measure with the kit's instruments holds a mutant that forges them
(its description says "forges"): grading proves the forgery loses points.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from grader.authoring.findings import Finding, Rule
from grader.authoring.folder import Folder

#: Methods and functions that put a hook on an object (module, tensor, node) or around the candidate's code.
HOOKS = frozenset({
    "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
    "register_full_backward_pre_hook", "register_backward_hook", "register_hook", "register_post_accumulate_grad_hook",
    "register_module_forward_hook", "register_module_forward_pre_hook", "register_module_full_backward_hook",
    "register_module_full_backward_pre_hook", "register_module_backward_hook", "register_multi_grad_hook",
    "register_prehook", "saved_tensors_hooks", "save_on_cpu",
})
#: Methods that grow a container in place.
GROWS = frozenset({"append", "extend", "insert", "add", "update", "setdefault", "appendleft", "extendleft"})
#: The kit's instruments: a probe using one of these measures behaviour.
INSTRUMENTS = frozenset({"Ledger", "Allocations", "attached", "count_entries", "RecordingSGD"})
EXEMPT = re.compile(r"#\s*not an instrument:\s*\S")

_FIX = ("record in a probekit.Ledger kept in the probe's own variables, which the object finds by its identity "
        "(probekit.attached(self)), and measure what stays alive with probekit.Allocations (AUTHORING.md, "
        "\"Measuring behaviour\")")


def _sandbox_files(folder: Folder) -> list[Path]:
    return [p for p in (folder.exercise.probes, folder.exercise.shared) if p is not None and p.is_file()]


def _tree(path: Path) -> tuple[ast.Module, list[str]] | None:
    try:
        text = path.read_text(encoding="utf-8")
        return ast.parse(text, filename=str(path)), text.splitlines()
    except (SyntaxError, ValueError, UnicodeDecodeError, OSError):
        return None  # the grading fails on it with Python's own message; no rule here can read it


def _empty_container(node: ast.AST) -> bool:
    if isinstance(node, (ast.List, ast.Dict, ast.Set)):
        return not (getattr(node, "elts", None) or getattr(node, "keys", None))
    if isinstance(node, ast.Call) and not node.args and not node.keywords:
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        return name in ("list", "dict", "set", "deque", "OrderedDict", "defaultdict", "Counter")
    return isinstance(node, (ast.ListComp, ast.DictComp, ast.SetComp))


def _attribute_targets(node: ast.AST):
    """The attribute targets of an assignment, with the value each gets (None: unknown, a tuple unpacked)."""
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if isinstance(target, ast.Attribute):
                yield target, node.value
            elif isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple) \
                    and len(target.elts) == len(node.value.elts):
                yield from ((t, v) for t, v in zip(target.elts, node.value.elts) if isinstance(t, ast.Attribute))


def _root(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _modules(tree: ast.Module) -> set[str]:
    """The names ``import X`` / ``import X as Y`` bind: a module's own state (``os.environ``) is nobody's object."""
    return {(alias.asname or alias.name).split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
            for alias in node.names}


def _problems(tree: ast.Module):
    """(line, what) for every instrument the probe keeps within the candidate's reach."""
    modules = _modules(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name)):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
            if name in HOOKS:
                yield node.lineno, (f"`{name}`: a hook lives on the object it is registered on (or, for a hooks "
                                    "context, under the candidate's own, which runs inside it), where the "
                                    "candidate can remove or rewrite it")
            elif name in GROWS and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Attribute) \
                    and _root(node.func.value) not in modules:
                yield node.lineno, (f"`.{node.func.value.attr}.{name}(...)`: a log kept on an object the candidate "
                                    "can reach and rewrite")
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Attribute) \
                        and _root(target.value) not in modules:
                    yield node.lineno, (f"`.{target.value.attr}[...] = ...`: a record kept on an object the "
                                        "candidate can reach and rewrite")
                elif isinstance(node, ast.AugAssign) and isinstance(target, ast.Attribute):
                    yield node.lineno, (f"`.{target.attr} += ...`: a counter kept on an object the candidate "
                                        "can reach and rewrite")
        for target, value in _attribute_targets(node):
            if _empty_container(value):
                yield node.lineno, (f"`.{target.attr} = {ast.unparse(value)}`: a log started on an object the "
                                    "candidate can reach and rewrite")


def kept_out_of_reach(folder: Folder) -> list[Finding]:
    """No hook, no saved-tensor hooks context, no log or counter on an object, in probes.py or shared.py."""
    out = []
    for path in _sandbox_files(folder):
        read = _tree(path)
        if read is None:
            continue
        tree, lines = read
        for line, what in sorted(set(_problems(tree))):
            if 0 < line <= len(lines) and EXEMPT.search(lines[line - 1]):
                continue
            out.append(Finding(Rule.PROBE_INSTRUMENT, path, f"{what}: {_FIX}. A hook that is the scenario under "
                               "test, not a measurement, says so: `# not an instrument: <why>` on its line.",
                               line=line))
    return out


def _uses_instruments(folder: Folder) -> bool:
    for path in _sandbox_files(folder):
        read = _tree(path)
        if read is not None and any(isinstance(n, ast.Attribute) and n.attr in INSTRUMENTS
                                    or isinstance(n, ast.Name) and n.id in INSTRUMENTS for n in ast.walk(read[0])):
            return True
    return False


def forger_held(folder: Folder) -> list[Finding]:
    """An exercise whose probes measure with the kit's instruments holds a mutant that forges them."""
    if not _uses_instruments(folder):
        return []
    if any(item.kind == "mutant" and re.search(r"\bforges?\b", item.description() or "", re.IGNORECASE)
           for item in folder.corpus):
        return []
    return [Finding(Rule.PROBE_FORGER, folder.solutions / "mutants", "the probes measure what the candidate's code "
                    "does (probekit's instruments), and no mutant forges those measurements: add one (in mutants/ or "
                    "more_mutants/, its description saying it \"forges\" them) that makes a wrong answer try to pass "
                    "by rewriting what it is handed (a log, a flag, a hooks table, an inner saved_tensors_hooks), so "
                    "grading proves the forgery loses points.")]


RULES = (kept_out_of_reach, forger_held)
