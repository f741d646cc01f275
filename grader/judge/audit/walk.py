"""Walk a parsed submission once and record every finding, with its line.

Each expression that resolves to a dotted path (see ``names``) is checked
against the rules as a whole and is not descended into again; what does not
resolve is descended into, so ``sys.modules["__main__"].x`` still reports its
``sys.modules``. Access that cannot be resolved is judged by what it is done to:
a computed name on a module is dynamic access (on the interpreter's own modules,
tampering); on any other object (``getattr(self, name)``) it is ordinary Python.
"""

from __future__ import annotations

import ast
import types
from dataclasses import dataclass, field

from grader.judge.audit import rules, torch_objects
from grader.judge.audit.names import NAMESPACE, Names, constant_str
from grader.judge.audit.rules import ForbiddenRules
from grader.reports.model import Finding, FindingKind, ForbiddenHit


@dataclass
class Findings:
    forbidden: list[ForbiddenHit] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


class Walker(ast.NodeVisitor):
    def __init__(self, names: Names, forbidden: ForbiddenRules, filename: str):
        self.names = names
        self.forbidden = forbidden
        self.filename = filename
        self.out = Findings()

    # ------------------------------------------------------------------ recording

    def _where(self, node: ast.AST) -> str:
        return f"{self.filename}:{getattr(node, 'lineno', '?')}"

    def _finding(self, kind: FindingKind, what: str, node: ast.AST) -> None:
        finding = Finding(kind=kind, what=what, where=self._where(node))
        if finding not in self.out.findings:
            self.out.findings.append(finding)

    def _path(self, path: str, node: ast.AST) -> None:
        """Everything a reference to ``path`` at ``node`` is."""
        if (api := self.forbidden.match(path)) is not None:
            via = "" if rules._under(path, api) else path
            hit = ForbiddenHit(api=api, how="static", where=self._where(node), via=via)
            if not any(h.api == api and h.where == hit.where for h in self.out.forbidden):
                self.out.forbidden.append(hit)
        if (what := rules.tampering(path)) is not None:
            self._finding(FindingKind.TAMPERING, what, node)
        if rules.private_torch(path):
            self._finding(FindingKind.PRIVATE_TORCH, path, node)
        module, namespace, rest = path.partition("." + NAMESPACE)
        if namespace and rest.lstrip(".") in _DICT_MUTATORS:
            self._namespace_write(path, node)
        elif namespace:  # vars(m) / m.__dict__ used other than to read one constant key
            self._module_dynamic(module, f"vars({module}){rest}", node)

    def _module_dynamic(self, module: str, what: str, node: ast.AST) -> None:
        kind = FindingKind.TAMPERING if rules.canonical(module).split(".")[0] in rules.STATE_MODULES \
            else FindingKind.DYNAMIC_ACCESS
        self._finding(kind, what, node)

    def _is_module(self, path: str) -> bool:
        """A name bound by an import of a module (or an alias of one), as far as the judge can tell."""
        known = torch_objects.is_module(path)
        if known is not None:
            return known
        root = path.split(".")[0]
        return path == root and root in self.names.import_bound or rules.canonical(path) in rules.STATE_MODULES

    # ------------------------------------------------------------------ imports

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._path(alias.name, node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if not node.module or node.level:
            return
        for alias in node.names:
            if alias.name == "*":
                self._path(node.module, node)
                if node.module.startswith("torch"):
                    self._finding(FindingKind.DYNAMIC_ACCESS, f"from {node.module} import *", node)
            else:
                self._path(f"{node.module}.{alias.name}", node)

    # ------------------------------------------------------------------ expressions

    def _resolved(self, node: ast.AST) -> bool:
        path = self.names.resolve(node)
        if path is None:
            return False
        self._path(path, node)
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)) and _replaces_code(path):
            self._finding(FindingKind.TAMPERING, f"assigns {rules.canonical(path)}", node)
        return True

    def visit_Name(self, node: ast.Name) -> None:
        if node.id == "__builtins__":
            self._finding(FindingKind.TAMPERING, "__builtins__", node)
        elif isinstance(node.ctx, ast.Load) and any(self.names.builtin(node, b) for b in rules.CODE_BUILTINS):
            self._finding(FindingKind.TAMPERING, node.id, node)
        else:
            self._resolved(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in rules.TAMPERING_ATTRIBUTES:
            self._finding(FindingKind.TAMPERING, f".{node.attr}", node)
        if not self._resolved(node):
            self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if isinstance(node.ctx, (ast.Store, ast.Del)) and (base := self.names.resolve(node.value)) is not None \
                and base.endswith("." + NAMESPACE):
            self._namespace_write(base, node)
        if self._resolved(node):
            self.visit(node.slice)
            return
        base = self.names.resolve(node.value)
        if base is not None and base.endswith("." + NAMESPACE):  # vars(F)[name] with a computed name
            module = base.removesuffix("." + NAMESPACE)
            self._module_dynamic(module, f"vars({module})[...]", node)
            self.visit(node.slice)
            return
        self.generic_visit(node)

    def _namespace_write(self, path: str, node: ast.AST) -> None:
        """``vars(torch)[k] = v``, ``torch.__dict__.update(...)``: rebinding a module's names."""
        module, _, rest = path.partition("." + NAMESPACE)
        if not rest or rest.lstrip(".") in _DICT_MUTATORS:
            self._finding(FindingKind.TAMPERING, f"writes into vars({rules.canonical(module)})", node)

    def visit_Call(self, node: ast.Call) -> None:
        self._dynamic_call(node)
        if self._resolved(node):
            for arg in [*node.args[1:], *(k.value for k in node.keywords)]:
                self.visit(arg)
            return
        self.generic_visit(node)

    def _dynamic_call(self, node: ast.Call) -> None:
        names, args = self.names, node.args
        for fetch in ("getattr", "setattr", "delattr", "hasattr"):
            if names.builtin(node.func, fetch) and len(args) >= 2:
                attr = constant_str(args[1])
                if attr in rules.TAMPERING_ATTRIBUTES:
                    self._finding(FindingKind.TAMPERING, f".{attr}", node)
                base = names.resolve(args[0])
                if base is None:
                    continue
                if fetch in ("setattr", "delattr") and self._is_module(base) and \
                        (attr is None or _replaces_code(f"{base}.{attr}")):
                    self._finding(FindingKind.TAMPERING, f"{fetch}({rules.canonical(base)}, ...)", node)
                elif attr is None and self._is_module(base):
                    self._module_dynamic(base, f"{fetch}({base}, <computed name>)", node)
        if names.builtin(node.func, "dir") and args and (base := names.resolve(args[0])) and self._is_module(base):
            self._module_dynamic(base, f"dir({base})", node)
        target = names.resolve(node.func)
        if target == "inspect.getmembers" and args and (base := names.resolve(args[0])) and self._is_module(base):
            self._module_dynamic(base, f"inspect.getmembers({base})", node)
        if (names.builtin(node.func, "__import__") or target == "importlib.import_module") and args \
                and constant_str(args[0]) is None:
            prefix = _leading_constant(args[0])
            if prefix.startswith("torch.") or prefix == "torch":
                self._finding(FindingKind.DYNAMIC_ACCESS, f"import of {prefix}<computed>", node)
            else:
                self._finding(FindingKind.TAMPERING, "import of a computed module name", node)


#: dict methods that rebind a module's names when called on its namespace.
_DICT_MUTATORS = frozenset({"update", "pop", "popitem", "setdefault", "clear", "__setitem__", "__delitem__"})


def _replaces_code(path: str) -> bool:
    """Assigning ``path`` rebinds code the grader relies on: anything in the interpreter's own
    modules, or a torch function, class or module (``torch.backends.cudnn.benchmark = False``
    sets a flag and is fine)."""
    if rules.canonical(path).split(".")[0] in rules.STATE_MODULES:
        return True
    if not path.startswith("torch"):
        return False
    obj = torch_objects.lookup(path)
    return obj is torch_objects.MISSING or callable(obj) or isinstance(obj, types.ModuleType)


def _leading_constant(node: ast.AST) -> str:
    """The constant text a computed string starts with: ``"torch." + x`` -> ``"torch."``."""
    while isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        node = node.left
    if isinstance(node, ast.JoinedStr) and node.values:
        node = node.values[0]
    return constant_str(node) or ""
