"""Find forbidden APIs in a submission's source, without running it.

This is one of two nets. The runtime tripwire in the worker decides credit (a
check during which a forbidden API ran gets none); this scan finds every place
the source reaches for one, through any alias, so the scorecard can point at the
line even when the call sits in a branch no check reached. It resolves
``import torch.nn.functional as F``, ``from torch.nn import functional``,
``from torch.nn.functional import scaled_dot_product_attention as f``, chains
like ``torch.nn.modules.activation.MultiheadAttention`` (matched by the last
name under ``torch``), and ``getattr(x, "name")`` / ``importlib`` strings.
"""

from __future__ import annotations

import ast
import threading

from grader.reports.model import ForbiddenHit


#: CPython 3.11 keeps one AST-construction depth counter per interpreter: ``ast.parse`` in several
#: threads at once (batch and validate grade in threads) can fail with a spurious "AST constructor
#: recursion depth mismatch" SystemError when a garbage collection lets another thread in mid-parse
#: (seen here; python/cpython#106905 is a relative). Parsing one file takes a millisecond: one at a time.
_PARSE_LOCK = threading.Lock()

#: Calls whose string arguments name an attribute or a module to fetch.
_NAME_TAKING = {"getattr", "import_module", "__import__", "attrgetter", "eval", "exec"}


def _last(api: str) -> str:
    return api.rsplit(".", 1)[-1]


class _Scanner(ast.NodeVisitor):
    def __init__(self, apis: list[str], filename: str):
        self.apis = apis
        self.by_last = {_last(a): a for a in apis}
        self.filename = filename
        self.aliases: dict[str, str] = {}
        self.hits: list[ForbiddenHit] = []

    def _hit(self, api: str, node: ast.AST, how: str = "") -> None:
        where = f"{self.filename}:{getattr(node, 'lineno', '?')}"
        if not any(h.api == api and h.where == where for h in self.hits):
            self.hits.append(ForbiddenHit(api=api, how="static", where=where))

    def _match(self, dotted: str) -> str | None:
        for api in self.apis:  # exact, or anything inside a forbidden package
            if dotted == api or dotted.startswith(api + "."):
                return api
        if dotted.startswith("torch.") and _last(dotted) in self.by_last:
            return self.by_last[_last(dotted)]
        return None

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:
                self.aliases[alias.asname] = alias.name
            else:
                root = alias.name.split(".")[0]
                self.aliases[root] = root
            if (api := self._match(alias.name)) is not None:
                self._hit(api, node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        for alias in node.names:
            full = f"{module}.{alias.name}"
            if alias.name == "*":
                for api in self.apis:
                    if api.rsplit(".", 1)[0] == module:
                        self.aliases[_last(api)] = api
                continue
            self.aliases[alias.asname or alias.name] = full
            if (api := self._match(full)) is not None:
                self._hit(api, node)

    def _dotted(self, node: ast.AST) -> str | None:
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        root = self.aliases.get(node.id)
        if root is None:
            return None
        return ".".join([root, *reversed(parts)])

    def visit_Attribute(self, node: ast.Attribute) -> None:
        dotted = self._dotted(node)
        if dotted is not None and (api := self._match(dotted)) is not None:
            self._hit(api, node)
            return
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        full = self.aliases.get(node.id)
        if full is not None and isinstance(node.ctx, ast.Load) and (api := self._match(full)) is not None:
            self._hit(api, node)

    def visit_Call(self, node: ast.Call) -> None:
        # getattr(F, "scaled_dot_product_attention"), importlib.import_module("torch.nn.functional")...
        # Only name-taking calls count: a message string like NotImplementedError("...") does not.
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if name in _NAME_TAKING:
            for arg in node.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    api = self.by_last.get(arg.value) or self._match(arg.value)
                    if api is not None:
                        self._hit(api, node)
        self.generic_visit(node)


def scan(source: str, apis: list[str], *, filename: str) -> list[ForbiddenHit]:
    """Static hits of ``apis`` in ``source``; a file that does not parse has none (its import fails anyway)."""
    if not apis:
        return []
    try:
        with _PARSE_LOCK:
            tree = ast.parse(source, filename=filename)
    except (SyntaxError, ValueError):
        return []
    scanner = _Scanner(apis, filename)
    scanner.visit(tree)
    return scanner.hits
