"""Annotations are code typing evaluates: ``typing.get_type_hints``, which ``functools.singledispatch``'s
``register`` calls, runs every string in a function's or class's annotations with ``eval``, and looks
every name up in the module. A string there escapes the judge's other rules unless it is judged too,
and a name that is a *value* there (``T = list[s]`` with ``s`` built at run time) hands typing a
string the judge never saw.

So, in an annotation: every string typing evaluates is parsed and judged as if written out
(not a ``Literal``'s values, not ``Annotated``'s metadata), and every name names a type: a builtin,
an import, a class, a ``TypeVar``/``NewType``/``ParamSpec``, or an alias whose value is itself
such a type expression. Anything else is a violation that says so.
"""

from __future__ import annotations

import ast

from grader.subset.names import Names, constant_str
from grader.subset.scopes import Binding
from grader.reports.model import ViolationCode

#: What a name in an annotation may be bound to by an assignment: a typing factory's result.
TYPE_FACTORIES = frozenset({"typing.TypeVar", "typing.NewType", "typing.ParamSpec", "typing.TypeVarTuple"})


def evaluated_strings(node: ast.AST):
    """The string constants of an annotation that typing evaluates: not a ``Literal``'s values, not
    ``Annotated``'s metadata."""
    if constant_str(node) is not None:
        yield node
    elif isinstance(node, ast.Subscript):
        head = node.value.id if isinstance(node.value, ast.Name) else getattr(node.value, "attr", "")
        if head == "Literal":
            return
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        for part in parts[:1] if head == "Annotated" else parts:
            yield from evaluated_strings(part)
    elif isinstance(node, ast.BinOp):
        yield from evaluated_strings(node.left)
        yield from evaluated_strings(node.right)
    elif isinstance(node, (ast.Tuple, ast.List)):
        for part in node.elts:
            yield from evaluated_strings(part)


class AnnotationScopes:
    """The scopes a string annotation's names are looked up in: those of where the string stands."""

    def __init__(self, scopes, scope):
        self._scopes, self._scope = scopes, scope
        self.module = scopes.module

    def scope(self, node):
        return self._scope

    def binding_scope(self, name, scope):
        return self._scopes.binding_scope(name, self._scope)

    def bindings(self, name, scope):
        return self._scopes.bindings(name, self._scope)

    def is_builtin(self, node):
        return self._scopes.binding_scope(node.id, self._scope) is None


class Annotations:
    """Judges one annotation for a walker (``grader.subset.walk.Walker``)."""

    def __init__(self, walker):
        self.walker = walker

    def judge(self, node: ast.AST) -> None:
        """The annotation ``node``: its strings as code, its names as types."""
        walker = self.walker
        self._types(node, walker.names, set(), self._not_a_type)
        for const in evaluated_strings(node):
            try:
                parsed = ast.parse(constant_str(const).strip(), mode="eval")
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue  # not an expression: typing cannot evaluate it either
            for sub in ast.walk(parsed):
                if hasattr(sub, "lineno"):
                    sub.lineno, sub.col_offset = const.lineno, const.col_offset
            inner = type(walker)(walker.names, walker.policy, walker.forbidden, walker.filename)
            inner.scopes = AnnotationScopes(walker.scopes, walker.scopes.scope(const))
            inner.names = Names(inner.scopes)
            inner.out = walker.out
            inner.visit(parsed.body, None)
            self._types(parsed.body, inner.names, set(), self._not_a_type)

    def _types(self, node: ast.AST, names: Names, seen: set[int], fail) -> None:
        """Calls ``fail(node)`` for each part of the type expression ``node`` that is not a type."""
        if isinstance(node, ast.Subscript):
            head = node.value.id if isinstance(node.value, ast.Name) else getattr(node.value, "attr", "")
            self._types(node.value, names, seen, fail)
            if head == "Literal":
                return
            parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            for part in parts[:1] if head == "Annotated" else parts:
                self._types(part, names, seen, fail)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            self._types(node.left, names, seen, fail)
            self._types(node.right, names, seen, fail)
        elif isinstance(node, (ast.Tuple, ast.List)):
            for part in node.elts:
                self._types(part, names, seen, fail)
        elif isinstance(node, ast.Name):
            bindings = names.scopes.bindings(node.id, names.scopes.scope(node))
            if not all(self._is_type_binding(b, names, seen) for b in bindings):  # none: a builtin
                fail(node)
        elif isinstance(node, ast.Attribute):
            root = node
            while isinstance(root, ast.Attribute):
                root = root.value
            bound = isinstance(root, ast.Name) and names.scopes.bindings(root.id, names.scopes.scope(root))
            if (bound or not isinstance(root, ast.Name)) and names.resolve(node) is None:
                fail(node)  # `self.kind`: a value, looked up when typing evaluates it
        elif not (isinstance(node, ast.Constant) and (node.value is None or node.value is Ellipsis
                                                      or isinstance(node.value, str))):
            fail(node)

    def _is_type_binding(self, binding: Binding, names: Names, seen: set[int]) -> bool:
        if binding.kind == "import" or isinstance(binding.node, ast.ClassDef):
            return True
        if binding.kind != "assign" or id(binding) in seen:
            return False
        seen.add(id(binding))
        value = binding.value
        if isinstance(value, ast.Call):
            return names.resolve(value.func) in TYPE_FACTORIES
        if constant_str(value) is not None:
            return False  # an alias of a string: typing would evaluate whatever the string holds
        failed: list[ast.AST] = []
        self._types(value, names, seen, failed.append)
        if not failed:
            self.judge(value)  # the alias's own strings are evaluated too: judged as code, at its line
        return not failed

    def _not_a_type(self, node: ast.AST) -> None:
        what = " ".join(ast.unparse(node).split())
        what = what if len(what) <= 60 else what[:60] + "..."
        self.walker.violation(ViolationCode.ANNOTATION, f"the annotation names `{what}`, which is not a type: typing "
                                                        "evaluates annotations, so they may only name builtins, "
                                                        "imports, classes, TypeVars and aliases of them", node,
                              fix="annotate with one of those, or leave the annotation out")
