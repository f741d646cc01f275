"""Python's scopes, read from the syntax tree: which binding a name refers to, or that it is a builtin.

The subset's rules depend on what a bare name is: ``vars(x)`` is the builtin unless the
file binds ``vars`` where that line can see it; ``F.relu`` is a module member only if
``F`` is, in that scope, the alias of a module. Scopes follow the language: a function,
lambda or comprehension has its own; a class body's names are not visible to the
functions inside it; ``global``/``nonlocal`` redirect a binding; a name bound anywhere
in a scope is local to all of it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


@dataclass(eq=False)
class Binding:
    """One way a scope binds a name: ``kind`` is "import" (``path`` the module or member it binds),
    "assign" (``value`` the expression of a plain ``name = value``) or "other" (a def, a loop, a parameter...)."""

    kind: str
    node: ast.AST
    path: str | None = None
    value: ast.AST | None = None


@dataclass(eq=False)
class Scope:
    node: ast.AST
    parent: Scope | None
    is_class: bool = False
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    declared_global: set[str] = field(default_factory=set)
    declared_nonlocal: set[str] = field(default_factory=set)

    def bind(self, name: str, binding: Binding) -> None:
        self.bindings.setdefault(name, []).append(binding)


class Scopes:
    """Every scope of a module, and the scope each node stands in."""

    def __init__(self, tree: ast.Module):
        self.module = Scope(tree, None)
        self.scope_of: dict[int, Scope] = {}  # id(node) -> the scope its names are looked up in
        self._pending: list[tuple[Scope, str, Binding]] = []
        self._visit_body(tree, self.module)
        # A nonlocal name binds in an outer function, which may bind it later in its own body: those last.
        pending = sorted(self._pending, key=lambda p: p[1] in p[0].declared_nonlocal)
        for scope, name, binding in pending:
            self._target(scope, name).bind(name, binding)

    # ------------------------------------------------------------------ lookups

    def scope(self, node: ast.AST) -> Scope:
        return self.scope_of.get(id(node), self.module)

    def binding_scope(self, name: str, scope: Scope) -> Scope | None:
        """The scope whose binding ``name`` refers to from ``scope``; None: the builtin (or nothing)."""
        if name in scope.declared_global:
            return self.module if name in self.module.bindings else None
        if name in scope.bindings and name not in scope.declared_nonlocal:
            return scope
        outer = scope.parent
        while outer is not None:
            if not outer.is_class and name in outer.bindings and name not in outer.declared_global:
                return outer
            if name in outer.declared_global:
                break
            outer = outer.parent
        return self.module if name in self.module.bindings else None

    def bindings(self, name: str, scope: Scope) -> list[Binding]:
        found = self.binding_scope(name, scope)
        return found.bindings.get(name, []) if found is not None else []

    def is_builtin(self, node: ast.Name) -> bool:
        return self.binding_scope(node.id, self.scope(node)) is None

    # ------------------------------------------------------------------ building

    def _target(self, scope: Scope, name: str) -> Scope:
        if name in scope.declared_global:
            return self.module
        if name in scope.declared_nonlocal:
            outer = scope.parent
            while outer is not None and (outer.is_class or name not in outer.bindings) and outer is not self.module:
                outer = outer.parent
            return outer or self.module
        return scope

    def _bind(self, scope: Scope, name: str, binding: Binding) -> None:
        self._pending.append((scope, name, binding))

    def _visit_body(self, node: ast.AST, scope: Scope) -> None:
        for child in ast.iter_child_nodes(node):
            self._visit(child, scope)

    def _visit(self, node: ast.AST, scope: Scope) -> None:
        self.scope_of[id(node)] = scope
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self._bind(scope, node.name, Binding("other", node))
            for d in node.decorator_list:
                self._visit(d, scope)
            if isinstance(node, ast.ClassDef):
                for part in [*node.bases, *node.keywords]:
                    self._visit(part, scope)
                inner = Scope(node, scope, is_class=True)
                for stmt in node.body:
                    self._visit(stmt, inner)
                return
            self._arguments(node.args, node, scope)
            if node.returns is not None:
                self._visit(node.returns, scope)
            inner = Scope(node, scope)
            self._parameters(node.args, inner)
            self._declarations(node.body, inner)
            for stmt in node.body:
                self._visit(stmt, inner)
            return
        if isinstance(node, ast.Lambda):
            self._arguments(node.args, node, scope)
            inner = Scope(node, scope)
            self._parameters(node.args, inner)
            self._visit(node.body, inner)
            return
        if isinstance(node, _COMPREHENSIONS):
            inner = Scope(node, scope)
            for i, gen in enumerate(node.generators):
                self.scope_of[id(gen)] = inner
                self._visit(gen.iter, scope if i == 0 else inner)
                self._visit(gen.target, inner)
                for cond in gen.ifs:
                    self._visit(cond, inner)
            for part in ([node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]):
                self._visit(part, inner)
            return
        if isinstance(node, ast.Module):
            self._declarations(node.body, scope)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name == "*":
                    continue
                if isinstance(node, ast.Import):
                    name = alias.asname or alias.name.split(".")[0]
                    path = alias.name if alias.asname else name
                else:
                    name = alias.asname or alias.name
                    path = f"{node.module}.{alias.name}" if node.module and not node.level else None
                self._bind(scope, name, Binding("import", alias, path=path))
                self.scope_of[id(alias)] = scope
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            self._bind(scope, node.id, Binding("other", node))
        elif isinstance(node, ast.NamedExpr):
            home = scope
            while isinstance(home.node, _COMPREHENSIONS) and home.parent is not None:
                home = home.parent
            self._bind(home, node.target.id, Binding("assign", node.target, value=node.value))
            self.scope_of[id(node.target)] = home
            self._visit(node.value, scope)
            return
        elif isinstance(node, ast.ExceptHandler) and node.name:
            self._bind(scope, node.name, Binding("other", node))
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            self._bind(scope, node.name, Binding("other", node))
        elif isinstance(node, ast.MatchMapping) and node.rest:
            self._bind(scope, node.rest, Binding("other", node))
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if len(targets) == 1 and isinstance(targets[0], ast.Name):
                self._bind(scope, targets[0].id, Binding("assign", targets[0], value=node.value))
                self.scope_of[id(targets[0])] = scope
                for child in ast.iter_child_nodes(node):
                    if child is not targets[0]:
                        self._visit(child, scope)
                return
        self._visit_body(node, scope)

    def _arguments(self, args: ast.arguments, owner: ast.AST, scope: Scope) -> None:
        """Defaults and annotations are evaluated where the function is defined."""
        for default in [*args.defaults, *(d for d in args.kw_defaults if d is not None)]:
            self._visit(default, scope)
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
            if arg is not None and arg.annotation is not None:
                self._visit(arg.annotation, scope)

    def _parameters(self, args: ast.arguments, inner: Scope) -> None:
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
            if arg is not None:
                inner.bind(arg.arg, Binding("other", arg))
                self.scope_of[id(arg)] = inner

    @staticmethod
    def _declarations(body: list[ast.stmt], scope: Scope) -> None:
        """``global``/``nonlocal`` anywhere in a scope's own statements (not in nested scopes)."""
        stack = list(body)
        while stack:
            node = stack.pop()
            if isinstance(node, ast.Global):
                scope.declared_global.update(node.names)
            elif isinstance(node, ast.Nonlocal):
                scope.declared_nonlocal.update(node.names)
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda,
                                     *_COMPREHENSIONS)):
                stack.extend(ast.iter_child_nodes(node))
