"""Walk a parsed submission once and record every way it leaves its exercise's subset, with its line.

Each node is judged by what it is and where it stands (its parent): a module may
only be the base of an attribute access (``F.relu``), never a value; ``getattr`` only
ever called; a dunder attribute only from a short list; an attribute chain rooted at
a module is checked against the policy as the path it resolves to
(``grader.subset.policy``), and any attribute, on any value, against the
exercise's forbidden names (``grader.subset.rules``). String annotations are
parsed and judged too: ``typing.get_type_hints`` and ``functools.singledispatch``
evaluate them.
"""

from __future__ import annotations

import ast
import fnmatch
import types
from dataclasses import dataclass, field

from grader.subset import policy as P
from grader.subset import torch_objects
from grader.subset.annotations import Annotations
from grader.subset.fixes import fix_for
from grader.subset.names import Names, constant_str
from grader.subset.policy import Policy, Verdict, _short
from grader.subset.rules import ForbiddenRules
from grader.reports.model import ForbiddenHit, Violation, ViolationCode

#: Functions whose only safe use is a direct call with arguments the judge can read (``torch.load``'s
#: ``weights_only`` must stay True: anything else unpickles code).
CHECKED_CALLS = frozenset({"torch.load"})


@dataclass
class Found:
    violations: list[Violation] = field(default_factory=list)
    forbidden: list[ForbiddenHit] = field(default_factory=list)


class Walker:
    def __init__(self, names: Names, policy: Policy, forbidden: ForbiddenRules, filename: str):
        self.names = names
        self.scopes = names.scopes
        self.policy = policy
        self.forbidden = forbidden
        self.attribute_hits = forbidden.attribute_names()
        self.filename = filename
        self.out = Found()
        self.annotations = Annotations(self)
        self._bases: set[int] = set()  # nodes judged as part of a longer path: their path is not judged again
        self._compile_only: set[int] = set()  # decorators that only compile: taken out of the module that runs
        self._allowed_module_values: set[int] = set()  # getattr(module, "literal")'s module

    # ------------------------------------------------------------------ recording

    def violation(self, code: ViolationCode, text: str, node: ast.AST, *, fix: str | None = None,
                  path: str | None = None, builtin: str | None = None) -> None:
        """Record what left the subset at ``node``, with how to write it instead (``grader.subset.fixes``)."""
        line, col = getattr(node, "lineno", None), getattr(node, "col_offset", None)
        v = Violation(code=code, text=text, fix=fix if fix is not None else fix_for(code, path, builtin), line=line,
                      column=col)
        if not any(o.code == v.code and o.text == v.text and o.line == v.line for o in self.out.violations):
            self.out.violations.append(v)

    def verdict(self, verdict: Verdict | None, node: ast.AST, *, unused: str | None = None) -> None:
        """``unused``: the name an import binds, when nothing in the file uses it (then the fix is to remove it)."""
        if verdict is not None:
            fix = f"`{unused}` is not used in the file: remove the import" if unused else None
            self.violation(verdict.code, verdict.text, node, fix=fix, path=verdict.path)

    def hit(self, api: str, node: ast.AST, via: str = "") -> None:
        line = getattr(node, "lineno", None)
        where = f"{self.filename}:{line if line is not None else '?'}"
        if not any(h.api == api and h.where == where for h in self.out.forbidden):
            self.out.forbidden.append(ForbiddenHit(api=api, how="static", where=where, via=via, line=line))

    # ------------------------------------------------------------------ traversal

    def run(self, tree: ast.Module) -> Found:
        self._loaded = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        self.visit(tree, None)
        return self.out

    def _unused(self, name: str) -> str | None:
        return None if name in self._loaded else name

    def visit(self, node: ast.AST, parent: ast.AST | None) -> None:
        if id(node) in self._compile_only:
            return
        handler = getattr(self, f"visit_{type(node).__name__}", None)
        if handler is not None and handler(node, parent) is False:
            return  # the handler visited the children itself
        for child in ast.iter_child_nodes(node):
            self.visit(child, node)

    # ------------------------------------------------------------------ imports

    def _in_class_body(self, node: ast.AST) -> bool:
        return self.scopes.scope(node).is_class

    def visit_Import(self, node: ast.Import, parent) -> None:
        if self._in_class_body(node):
            self.violation(ViolationCode.IMPORT, "an import in a class body makes the module an attribute of the "
                                                 "class", node, fix="import at the top of the file")
        for alias in node.names:
            bound = alias.asname or alias.name.split(".")[0]
            self._binds(bound, node)
            if (api := self.forbidden.match(alias.name)) is not None:
                self.hit(api, node, "" if P._under(alias.name, api) else alias.name)
            self.verdict(self.policy.import_verdict(alias.name), node, unused=self._unused(bound))

    def visit_ImportFrom(self, node: ast.ImportFrom, parent) -> None:
        if node.level:
            self.violation(ViolationCode.IMPORT, "a relative import: the submission is one file", node,
                           fix="import modules by their full name")
            return
        module = node.module or ""
        if self._in_class_body(node):
            self.violation(ViolationCode.IMPORT, "an import in a class body makes its names attributes of the "
                                                 "class", node, fix="import at the top of the file")
        for alias in node.names:
            if alias.name == "*":
                self.violation(ViolationCode.IMPORT, f"`from {_short(module)} import *`", node,
                               fix=f"import the names you use (`from {_short(module)} import name`)")
                continue
            self._binds(alias.asname or alias.name, node)
            path = f"{module}.{alias.name}"
            if (api := self.forbidden.match(path)) is not None:
                self.hit(api, node, "" if P._under(path, api) else path)
            verdict = self.policy.import_verdict(module) if self.policy.import_verdict(module) is not None \
                else self.policy.member_verdict(path)
            self.verdict(verdict, node, unused=self._unused(alias.asname or alias.name))

    def _binds(self, name: str, node: ast.AST) -> None:
        if _dunder(name) and name not in P.DUNDER_ASSIGNABLE:
            self.violation(ViolationCode.DUNDER, f"binds the name `{_short(name)}`", node)

    # ------------------------------------------------------------------ names

    def visit_Name(self, node: ast.Name, parent) -> None:
        if _dunder(node.id):
            allowed = P.DUNDER_NAMES if isinstance(node.ctx, ast.Load) else P.DUNDER_ASSIGNABLE
            if node.id not in allowed:
                self.violation(ViolationCode.DUNDER, f"`{_short(node.id)}` is not part of the subset", node)
                return
        if not isinstance(node.ctx, ast.Load):
            return
        if self.scopes.is_builtin(node):
            if node.id in P.NEVER_BUILTINS and node.id not in self.policy.builtins:
                self.violation(ViolationCode.BUILTIN, f"the builtin `{node.id}` is not part of the subset", node,
                               builtin=node.id)
            elif node.id in P.ATTRIBUTE_BUILTINS and not _is_callee(node, parent):
                self.violation(ViolationCode.ATTRIBUTE_BUILTIN, f"`{node.id}` used as a value", node,
                               fix=f"call it directly, `{node.id}(obj, name, ...)`")
            return
        if id(node) in self._bases:
            return
        path = self.names.name(node)
        if path is not None:
            self._value(path, node, parent)

    # ------------------------------------------------------------------ attributes

    def visit_Attribute(self, node: ast.Attribute, parent) -> None:
        if id(node) in self._bases:  # a module on the way to a judged path: its name only
            self._attribute_name(node.attr, node, load=False)
            self._mark_bases(node.value)
            return
        path = self.names.resolve(node)
        # On a value the judge cannot follow, a forbidden name is the API; on a module, the path decides.
        self._attribute_name(node.attr, node, load=path is None and isinstance(node.ctx, ast.Load))
        if path is None:
            return
        self._mark_bases(node.value)
        self._path(path, node)
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            if _replaces_code(path):
                self.violation(ViolationCode.MODULE_WRITE, f"assigns `{_short(path)}`: a submission may set a "
                                                           "module's flags, never its functions, classes or modules",
                               node)
            return
        self._value(path, node, parent)

    def _mark_bases(self, node: ast.AST) -> None:
        """The base of a judged path is judged with it (``torch.nn`` in ``torch.nn.functional.relu``)."""
        self._bases.add(id(node))

    def _attribute_name(self, name: str, node: ast.AST, *, load: bool) -> None:
        """What an attribute name is on any value: a dunder, a frame's internals, a switch, a forbidden name."""
        if _dunder(name):
            if name not in P.DUNDER_ATTRIBUTES:
                self.violation(ViolationCode.DUNDER, f"the attribute `{_short(name)}` is not part of the subset",
                               node)
        elif name in P.FRAME_ATTRIBUTES:
            self.violation(ViolationCode.FRAME, f"`.{name}` reaches a frame, a code object or a traceback", node)
        elif any(fnmatch.fnmatchcase(name, p) for p in P.TORCH_SWITCHES):
            self.violation(ViolationCode.PRIVATE, f"`.{_short(name)}` switches torch's dispatch", node)
        if load and name in self.attribute_hits:
            self.hit(self.attribute_hits[name], node, f".{name}")

    def _path(self, path: str, node: ast.AST) -> None:
        """A reference to ``path`` (a module member) read from the source: a forbidden API (named on the
        scorecard) and a member of the subset or not (a violation), each decided on its own."""
        if (api := self.forbidden.match(path)) is not None:
            self.hit(api, node, "" if P._under(path, api) else path)
        self.verdict(self.policy.member_verdict(path), node)

    def _value(self, path: str, node: ast.AST, parent) -> None:
        """What may be done with an expression that names ``path``, by where it stands."""
        if _canonical_torch(path) in CHECKED_CALLS and not _is_callee(node, parent):
            self.violation(ViolationCode.UNSAFE_LOAD, f"`{_short(path)}` used other than called directly", node)
        if not self._is_module(path, node) or id(node) in self._allowed_module_values:
            return
        if isinstance(parent, ast.Attribute) and parent.value is node or isinstance(parent, ast.Expr):
            return
        if isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is node and self._single_alias(parent):
            return
        self.violation(ViolationCode.MODULE_VALUE, f"the module `{_short(path)}` used as a value: a module is only "
                                                   "ever `module.name`", node,
                       fix=f"import what you use instead ({_import_hint(path)})")

    def _is_module(self, path: str, node: ast.AST) -> bool:
        known = self.policy.is_module(path)
        if known is not None:
            return known
        if isinstance(node, ast.Name):  # a module the judge cannot look up: bound by `import x`
            return any(b.kind == "import" and b.path == path and "." not in b.path and isinstance(b.node, ast.alias)
                       for b in self.scopes.bindings(node.id, self.scopes.scope(node)))
        return False

    def _single_alias(self, stmt: ast.Assign | ast.AnnAssign) -> bool:
        """``F = torch.nn.functional``: one plain name, bound once in its scope, reads as an import alias."""
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if len(targets) != 1 or not isinstance(targets[0], ast.Name):
            return False
        target = targets[0]
        scope = self.scopes.scope(target)
        return not scope.is_class and len(self.scopes.bindings(target.id, scope)) == 1

    # ------------------------------------------------------------------ calls

    def visit_Call(self, node: ast.Call, parent) -> None:
        func, args = node.func, node.args
        fetch = next((b for b in P.ATTRIBUTE_BUILTINS if self.names.is_builtin(func, b)), None)
        if fetch is not None and len(args) >= 2 and not any(isinstance(a, ast.Starred) for a in args[:2]):
            name = constant_str(args[1])
            base = self.names.resolve(args[0])
            on_module = base is not None and self._is_module(base, args[0])
            if name is not None:
                self._attribute_name(name, node, load=fetch in ("getattr", "hasattr") and not on_module)
                if on_module:
                    self._allowed_module_values.add(id(args[0]))
                    self._mark_bases(args[0])
                    self._path(f"{base}.{name}", node)
                    if fetch in ("setattr", "delattr") and _replaces_code(f"{base}.{name}"):
                        self.violation(ViolationCode.MODULE_WRITE, f"`{fetch}` on `{_short(base)}.{_short(name)}`: "
                                                                   "a module's functions are never replaced", node)
                    if fetch == "getattr":
                        self._mark_bases(node)
                        self._value(f"{base}.{name}", node, parent)
        target = self.names.resolve(func)
        if target is not None and _canonical_torch(target) == "torch.load":
            self._load_call(node)
        self._namespace_from_data(node, target)
        if target is not None and target in ("typing.TypeVar", "typing_extensions.TypeVar"):
            for arg in [*args[1:], *(k.value for k in node.keywords if k.arg == "bound")]:
                self.annotations.judge(arg)  # a bound or constraint given as a string is evaluated later

    def _namespace_from_data(self, node: ast.Call, target: str | None) -> None:
        """``type(name, bases, namespace)``, ``TypedDict("T", {...})``, ``Enum("E", {...})``: a class whose
        attributes (``__annotations__`` included) are named by data, where no name is ever judged."""
        three_arg_type = self.names.is_builtin(node.func, "type") and len(node.args) == 3
        typing_call = target in ("typing.TypedDict", "typing.NamedTuple")
        enum_call = target is not None and P._under(target, "enum") and len(node.args) >= 2 and \
            constant_str(node.args[1]) is None
        if three_arg_type or typing_call or enum_call:
            self.violation(ViolationCode.DATA_NAMESPACE, "builds a class whose attributes are named by data", node)

    def _load_call(self, node: ast.Call) -> None:
        """``torch.load`` unpickles only tensors and plain containers when ``weights_only`` is True (the default)."""
        kwargs = {k.arg: k.value for k in node.keywords}
        weights_only = kwargs.get("weights_only")
        unsafe = (None in kwargs or "pickle_module" in kwargs or len(node.args) > 2
                  or any(isinstance(a, ast.Starred) for a in node.args)
                  or (weights_only is not None and not (isinstance(weights_only, ast.Constant)
                                                        and weights_only.value is True)))
        if unsafe:
            self.violation(ViolationCode.UNSAFE_LOAD, "`torch.load` may unpickle code here", node,
                           fix="leave `weights_only` out or pass `weights_only=True`, and no `pickle_module`")

    # ------------------------------------------------------------------ definitions and patterns

    def visit_arg(self, node: ast.arg, parent) -> None:
        self._binds(node.arg, node)
        if node.annotation is not None:
            self.annotations.judge(node.annotation)

    def _decorated(self, node) -> None:
        """``@torch.jit.script`` and the like only compile: not judged, and never run (``compile_only``)."""
        self._compile_only |= {id(d) for d in compile_only(node, self.names)}

    def visit_ClassDef(self, node: ast.ClassDef, parent) -> None:
        self._decorated(node)

    def visit_FunctionDef(self, node: ast.FunctionDef, parent) -> None:
        self._decorated(node)
        if node.name in P.NEVER_DEFINED:
            self.violation(ViolationCode.DUNDER, f"defines `{node.name}`: copy and pickle set attributes from the "
                                                 "state it returns, named by data", node,
                           fix="remove it: `copy.deepcopy` and `torch.save` work without it")
        if node.returns is not None:
            self.annotations.judge(node.returns)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_AnnAssign(self, node: ast.AnnAssign, parent) -> None:
        self.annotations.judge(node.annotation)

    def visit_ExceptHandler(self, node: ast.ExceptHandler, parent) -> None:
        if node.name:
            self._binds(node.name, node)

    def visit_MatchClass(self, node: ast.MatchClass, parent) -> None:
        for name in node.kwd_attrs:  # `case C(attr=...)` reads subject.attr
            self._attribute_name(name, node, load=True)

    def visit_MatchAs(self, node: ast.MatchAs, parent) -> None:
        if node.name:
            self._binds(node.name, node)

    visit_MatchStar = visit_MatchAs


def compile_only(node, names: Names) -> list[ast.expr]:
    """The decorators of ``node`` that only compile (``policy.COMPILE_ONLY``, called or not, under any alias)."""
    return [d for d in node.decorator_list
            if (path := names.resolve(d.func if isinstance(d, ast.Call) else d)) is not None
            and _canonical_compile(path) in P.COMPILE_ONLY]


def _canonical_compile(path: str) -> str:
    for name in P.COMPILE_ONLY:
        if path == name or (path.startswith("torch.") and torch_objects.same(path, name)):
            return name
    return path


def _dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _is_callee(node: ast.AST, parent) -> bool:
    return isinstance(parent, ast.Call) and parent.func is node


def _canonical_torch(path: str) -> str:
    """``torch.serialization.load`` and other spellings of one torch function, by identity."""
    if not path.startswith("torch."):
        return path
    for name in CHECKED_CALLS:
        if path == name or torch_objects.same(path, name):
            return name
    return path


def _replaces_code(path: str) -> bool:
    """Assigning ``path`` rebinds code the grader relies on: anything outside torch, or a torch function,
    class or module (``torch.backends.cudnn.benchmark = False`` sets a flag and is fine)."""
    if not path.startswith("torch"):
        return True
    obj = torch_objects.lookup(path)
    return obj is torch_objects.MISSING or callable(obj) or isinstance(obj, types.ModuleType)


def _import_hint(path: str) -> str:
    head, _, last = path.rpartition(".")
    return f"`from {head} import {last}`" if head else f"`import {path}`"
