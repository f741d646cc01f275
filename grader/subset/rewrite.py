"""The judge's rewrite of a submission: every attribute, item, call, iteration and ``with`` guarded.

The source check (``audit``) decides what may be written; this rewrite makes what is written
go through the sandbox's runtime subset (``grader.sandbox.runtime_subset``), which sees each
value as it is reached, whatever path produced it (RestrictedPython's idea, with our policy:
``self._cache`` stays legal, ``obj.x += 1`` too). The guards are called by dunder names
(``grader.wire.guarded``) no submission can write. Every new node takes the position of the
node it wraps, so line numbers and carets stay the candidate's; annotations that Python
keeps as strings (``from __future__ import annotations``) are left as written.
"""

from __future__ import annotations

import ast

from grader.wire import guarded as G
from grader.wire import module_ast


def rewrite_source(source: str | bytes, *, filename: str) -> ast.Module:
    """The module the sandbox runs for ``source``: parsed, every guarded operation rewritten."""
    from grader.subset.names import Names
    from grader.subset.scopes import Scopes
    from grader.subset.walk import compile_only

    tree = ast.parse(source, filename=filename)
    lazy = any(isinstance(node, ast.ImportFrom) and node.module == "__future__"
               and any(a.name == "annotations" for a in node.names) for node in tree.body)
    names = Names(Scopes(tree))
    dropped = {id(d) for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                     ast.ClassDef))
               for d in compile_only(node, names)}
    tree = _Rewriter(lazy_annotations=lazy, dropped=dropped).visit(tree)
    return ast.fix_missing_locations(tree)


def rewritten_json(source: str | bytes, *, filename: str) -> str:
    """:func:`rewrite_source` as the JSON the sandbox's loader compiles (``grader.wire.module_ast``)."""
    return module_ast.encode(rewrite_source(source, filename=filename))


def unpack_depth(target: ast.AST) -> int:
    """How deep a target unpacks: 0 for a name, 1 for ``a, b``, 2 for ``i, (a, b)``."""
    if isinstance(target, (ast.Tuple, ast.List)):
        return 1 + max((unpack_depth(e) for e in target.elts), default=0)
    if isinstance(target, ast.Starred):
        return unpack_depth(target.value)
    return 0


def _at(node: ast.AST, like: ast.AST) -> ast.AST:
    """A new ``node`` at ``like``'s position (the nodes it holds are placed already)."""
    return ast.copy_location(node, like)


def _guard(name: str, like: ast.AST, *args: ast.AST) -> ast.Call:
    return _at(ast.Call(func=_at(ast.Name(id=name, ctx=ast.Load()), like), args=list(args), keywords=[]), like)


def _is_guard_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in G.ALL


def _capture_names(pattern: ast.AST) -> list[str]:
    names = []
    for node in ast.walk(pattern):
        if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            names.append(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.append(node.rest)
    return names


class _Rewriter(ast.NodeTransformer):
    def __init__(self, *, lazy_annotations: bool, dropped: set[int] = frozenset()):
        self.lazy_annotations = lazy_annotations
        self.dropped = dropped  # decorators that only compile (``@torch.jit.script``): the function runs as written
        self.classes: list[str] = []  # enclosing class names, innermost last: private names are mangled by them

    def mangle(self, name: str) -> str:
        """``__x`` inside ``class C`` is ``_C__x`` to Python; as a string it must be written so."""
        if not self.classes or not name.startswith("__") or name.endswith("__"):
            return name
        owner = self.classes[-1].lstrip("_")
        return f"_{owner}{name}" if owner else name

    def _name(self, node: ast.Attribute) -> ast.Constant:
        return _at(ast.Constant(value=self.mangle(node.attr)), node)

    # ------------------------------------------------------------------ definitions

    def _decorators(self, decorators: list[ast.expr]) -> list[ast.expr]:
        """Each decorator is called with what it decorates: a bare name is checked like any called value."""
        out = [self.visit(d) for d in decorators if id(d) not in self.dropped]
        return [_guard(G.VALUE, d, d) if isinstance(d, ast.Name) else d for d in out]

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.ClassDef:
        node.decorator_list = self._decorators(node.decorator_list)
        node.bases = [self.visit(b) for b in node.bases]
        node.keywords = [self.visit(k) for k in node.keywords]
        self.classes.append(node.name)
        try:
            node.body = self._statements(node.body)
        finally:
            self.classes.pop()
        return node

    def _statements(self, body: list[ast.stmt]) -> list[ast.stmt]:
        out = []
        for stmt in body:
            result = self.visit(stmt)
            out.extend(result if isinstance(result, list) else [result])
        return out

    def _annotation(self, node: ast.AST | None) -> ast.AST | None:
        return node if node is None or self.lazy_annotations else self.visit(node)

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.annotation = self._annotation(node.annotation)
        return node

    def visit_FunctionDef(self, node):
        node.decorator_list = self._decorators(node.decorator_list)
        node.args = self.visit(node.args)
        node.returns = self._annotation(node.returns)
        node.body = self._statements(node.body)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AnnAssign:
        node.target = self.visit(node.target)
        node.annotation = self._annotation(node.annotation)
        if node.value is not None:
            node.value = self.visit(node.value)
        return node

    # ------------------------------------------------------------------ attributes and items

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        value = self.visit(node.value)
        if isinstance(node.ctx, ast.Load):
            return _guard(G.ATTR, node, value, self._name(node))
        guard = G.WRITE if isinstance(node.ctx, ast.Store) else G.DELETE
        node.value = _guard(guard, node, value, self._name(node))
        return node

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        node.value = self.visit(node.value)
        node.slice = self.visit(node.slice)
        if isinstance(node.ctx, ast.Load):
            return _guard(G.VALUE, node, node)
        node.value = _guard(G.CONTAINER, node, node.value)
        return node

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AugAssign:
        target = node.target
        if isinstance(target, ast.Attribute):
            target.value = _guard(G.UPDATE, target, self.visit(target.value), self._name(target))
        elif isinstance(target, ast.Subscript):
            target.value = _guard(G.CONTAINER, target, self.visit(target.value))
            target.slice = self.visit(target.slice)
        node.value = self.visit(node.value)
        return node

    # ------------------------------------------------------------------ values that come back

    def visit_Call(self, node: ast.Call) -> ast.AST:
        func = self.visit(node.func)
        node.func = func if _is_guard_call(func) else _guard(G.VALUE, node.func, func)
        node.args = [self.visit(a) for a in node.args]
        node.keywords = [self.visit(k) for k in node.keywords]
        return _guard(G.VALUE, node, node)

    def _returned(self, node):
        node.value = self.visit(node.value) if node.value is not None else None
        return _guard(G.VALUE, node, node)

    visit_Await = visit_Yield = visit_YieldFrom = _returned

    # ------------------------------------------------------------------ iteration and unpacking

    def _iterated(self, iterable: ast.AST, depth: int, like: ast.AST) -> ast.AST:
        return _guard(G.ITER, like, self.visit(iterable), _at(ast.Constant(value=depth), like))

    def visit_For(self, node):
        node.target = self.visit(node.target)
        node.iter = self._iterated(node.iter, unpack_depth(node.target), node.iter)
        node.body = self._statements(node.body)
        node.orelse = self._statements(node.orelse)
        return node

    visit_AsyncFor = visit_For

    def visit_comprehension(self, node: ast.comprehension) -> ast.comprehension:
        node.target = self.visit(node.target)
        node.iter = self._iterated(node.iter, unpack_depth(node.target), node.iter)
        node.ifs = [self.visit(i) for i in node.ifs]
        return node

    def visit_Assign(self, node: ast.Assign) -> ast.Assign:
        node.targets = [self.visit(t) for t in node.targets]
        depths = [unpack_depth(t) for t in node.targets]
        displayed = isinstance(node.value, (ast.Tuple, ast.List))  # each element is guarded where it is made
        if all(depths) and not displayed:
            node.value = self._iterated(node.value, min(depths) - 1, node.value)
        else:
            node.value = self.visit(node.value)
        return node

    def visit_withitem(self, node: ast.withitem) -> ast.withitem:
        node.context_expr = self.visit(node.context_expr)
        if node.optional_vars is not None:
            node.optional_vars = self.visit(node.optional_vars)
            depth = _at(ast.Constant(value=unpack_depth(node.optional_vars)), node.context_expr)
            node.context_expr = _guard(self._enter, node.context_expr, node.context_expr, depth)
        return node

    _enter = G.ENTER

    def visit_AsyncWith(self, node: ast.AsyncWith) -> ast.AsyncWith:
        self._enter = G.AENTER
        try:
            return self.generic_visit(node)
        finally:
            self._enter = G.ENTER

    def visit_match_case(self, node: ast.match_case) -> ast.match_case:
        node.pattern = self.visit(node.pattern)
        if node.guard is not None:
            node.guard = self.visit(node.guard)
        at = node.pattern
        checks = [_at(ast.Assign(targets=[_at(ast.Name(id=n, ctx=ast.Store()), at)],
                                 value=_guard(G.VALUE, at, _at(ast.Name(id=n, ctx=ast.Load()), at))), at)
                  for n in _capture_names(node.pattern)]
        node.body = checks + self._statements(node.body)
        return node
