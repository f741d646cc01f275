"""Resolve what a name in the submission refers to, as a dotted path, without running anything.

``import torch.nn.functional as F`` binds ``F`` to ``torch.nn.functional``; after
that ``F.scaled_dot_product_attention``, ``getattr(F, "scaled_dot_product_attention")``,
``vars(F)["scaled_dot_product_attention"]``, ``F.__dict__.get(...)`` and
``f = F.scaled_dot_product_attention; f(...)`` all resolve to
``torch.nn.functional.scaled_dot_product_attention``. Whatever cannot be read
this way (a computed attribute name) resolves to nothing; the walker turns that
into a finding of its own.

Bindings are file-wide, not per scope: a name bound to a module anywhere is
taken to be that module everywhere. That can only add references, never hide
one, and honest code does not reuse a module's alias for something else.
"""

from __future__ import annotations

import ast

from grader.judge.audit import torch_objects

#: The suffix a resolved path carries when it names a module's namespace dict (``vars(m)``, ``m.__dict__``).
NAMESPACE = "__dict__"

#: Builtins that fetch an attribute, a namespace or a module by a name given as data.
NAME_TAKING_BUILTINS = ("getattr", "vars", "__import__")


def constant_str(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


class Names:
    """The file's bindings of names to dotted paths, and ``resolve(expr)`` over them."""

    def __init__(self, tree: ast.AST):
        self.aliases: dict[str, str] = {}
        self.star_modules: list[str] = []
        self.bound = _locally_bound(tree)
        self.import_bound: set[str] = set()  # names bound by `import x` / `import x.y as z`: modules
        self._collect(tree)

    # ------------------------------------------------------------------ bindings

    def _collect(self, tree: ast.AST) -> None:
        assignments = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    name = alias.asname or alias.name.split(".")[0]
                    self.aliases.setdefault(name, alias.name if alias.asname else name)
                    self.import_bound.add(name)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    if alias.name == "*":
                        self.star_modules.append(node.module)
                    else:
                        self.aliases.setdefault(alias.asname or alias.name, f"{node.module}.{alias.name}")
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                assignments += [(t.id, node.value) for t in targets if isinstance(t, ast.Name)]
        for _ in range(len(assignments) + 1):  # chains in any order: a = torch; b = a.nn; ...
            changed = False
            for name, value in assignments:
                if name not in self.aliases and (path := self.resolve(value)) is not None:
                    self.aliases[name] = path
                    changed = True
            if not changed:
                break

    # ------------------------------------------------------------------ resolving

    def resolve(self, node: ast.AST) -> str | None:
        """The dotted path ``node`` refers to, or None when it is not a module's member or cannot be read."""
        if isinstance(node, ast.Name):
            return self._name(node.id)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            return None if base is None else f"{base}.{node.attr}"
        if isinstance(node, ast.Subscript):
            base, key = self.resolve(node.value), constant_str(node.slice)
            if base is not None and key is not None and base.endswith("." + NAMESPACE):
                return f"{base.removesuffix('.' + NAMESPACE)}.{key}"
            return None
        if isinstance(node, ast.Call):
            return self._call(node)
        return None

    def _name(self, name: str) -> str | None:
        if name in self.aliases:
            return self.aliases[name]
        if name in self.bound:
            return None
        for module in self.star_modules:  # `from torch.nn.functional import *`, then a bare name
            if torch_objects.has(f"{module}.{name}"):
                return f"{module}.{name}"
        return None

    def builtin(self, node: ast.AST, name: str) -> bool:
        """``node`` is the builtin ``name`` (a bare name nothing in the file rebinds, or ``builtins.name``)."""
        if isinstance(node, ast.Name):
            return node.id == name and node.id not in self.bound and node.id not in self.aliases
        return self.resolve(node) == f"builtins.{name}"

    def _call(self, node: ast.Call) -> str | None:
        func, args = node.func, node.args
        if self.builtin(func, "getattr") and len(args) >= 2:
            base, attr = self.resolve(args[0]), constant_str(args[1])
            return f"{base}.{attr}" if base is not None and attr is not None else None
        if self.builtin(func, "vars") and len(args) == 1:
            base = self.resolve(args[0])
            return f"{base}.{NAMESPACE}" if base is not None else None
        if self.builtin(func, "__import__") and args and (name := constant_str(args[0])) is not None:
            fromlist = args[3] if len(args) > 3 else next((k.value for k in node.keywords if k.arg == "fromlist"), None)
            wants_leaf = isinstance(fromlist, (ast.List, ast.Tuple)) and fromlist.elts
            return name if wants_leaf else name.split(".")[0]
        target = self.resolve(func)
        if target == "importlib.import_module" and args and (name := constant_str(args[0])) is not None:
            return name
        if target is not None and target.endswith(f".{NAMESPACE}.get") and args:
            key = constant_str(args[0])
            return f"{target.removesuffix(f'.{NAMESPACE}.get')}.{key}" if key is not None else None
        if isinstance(func, ast.Call) and len(args) == 1 and self.resolve(func.func) == "operator.attrgetter":
            base, attr = self.resolve(args[0]), constant_str(func.args[0]) if func.args else None
            return f"{base}.{attr}" if base is not None and attr is not None else None
        return None


def _locally_bound(tree: ast.AST) -> set[str]:
    """Every name the file binds other than by import: defs, classes, assignments, parameters, loops."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
    return bound
