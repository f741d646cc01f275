"""Resolve what an expression of the submission refers to, as a dotted path, without running anything.

After ``import torch.nn.functional as F``, ``F.scaled_dot_product_attention``, ``getattr(F, "...")``
and ``f = F.scaled_dot_product_attention; f(...)`` all resolve to the same path. Names are looked up
in their scope (``grader.subset.scopes``): a parameter called ``F`` is not the module. A name with
several bindings resolves only when they all name the same path. What cannot be read this way
resolves to nothing: inside the subset that is a value the candidate made, never a module.
"""

from __future__ import annotations

import ast

from grader.subset.scopes import Binding, Scopes


def constant_str(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


class Names:
    """``resolve(expr)``: the dotted path an expression names, over the file's scopes."""

    def __init__(self, scopes: Scopes):
        self.scopes = scopes
        self._busy: set[int] = set()  # bindings being resolved: `a = b; b = a` ends

    def resolve(self, node: ast.AST) -> str | None:
        """The dotted path ``node`` refers to, or None when it is not a module's member or cannot be read."""
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            return None if base is None else f"{base}.{node.attr}"
        if isinstance(node, ast.Call) and self.is_builtin(node.func, "getattr") and len(node.args) >= 2 \
                and not any(isinstance(a, ast.Starred) for a in node.args[:2]):
            base, attr = self.resolve(node.args[0]), constant_str(node.args[1])
            return f"{base}.{attr}" if base is not None and attr is not None else None
        return None

    def name(self, node: ast.Name) -> str | None:
        bindings = self.scopes.bindings(node.id, self.scopes.scope(node))
        paths = {self._binding_path(b) for b in bindings}
        return paths.pop() if len(paths) == 1 else None

    def _binding_path(self, binding: Binding) -> str | None:
        if binding.kind == "import":
            return binding.path
        if binding.kind != "assign" or id(binding) in self._busy:
            return None
        self._busy.add(id(binding))
        try:
            return self.resolve(binding.value)
        finally:
            self._busy.discard(id(binding))

    def is_builtin(self, node: ast.AST, name: str) -> bool:
        """``node`` is the builtin ``name``: a bare name no binding in its scopes shadows."""
        return isinstance(node, ast.Name) and node.id == name and self.scopes.is_builtin(node)
