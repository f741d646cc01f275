"""No check compares a measured number by hand: a NaN passes ``if abs(got - want) > tol: fail``.

Every ordering comparison is False when a side is NaN, so such checks pass a NaN (grad_accumulation's
and ddp_step's loss checks did). Checks compare through grader.judge (``expect_scalar``,
``expect_bounded``, ``expect_close``), which prove the value finite first. This scan of ``checks/``
flags ``allclose``/``isclose`` and ``equal_nan=``/``nan_ok=`` other than ``False``, and ``<``, ``<=``,
``>``, ``>=`` with a *measured* side (``abs``/``min``/``max``/``float``/``sum``, a reduction, ``.item()``,
a subtraction, a name or checks' function returning one). Integer-valued sides (``len``, ``.numel()``...)
are not measured; a comparison on the judge's own numbers may carry ``# nan-safe: <why>``.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from grader.authoring.findings import Finding, Rule
from grader.authoring.folder import Folder

ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
MEASURING_BUILTINS = {"abs", "max", "min", "float", "sum"}
MEASURING_METHODS = {"abs", "max", "min", "amax", "amin", "item", "norm", "vector_norm", "matrix_norm",
                     "sum", "mean", "std", "var", "dist"}
INTEGER_BUILTINS = {"int", "len", "bool"}
INTEGER_METHODS = {"numel", "count", "index", "dim", "nelement"}
HAND_COMPARISONS = {"allclose", "isclose"}
NAN_SWITCHES = {"equal_nan", "nan_ok"}
OPT_OUT = re.compile(r"#\s*nan-safe:\s*\S")


@dataclass(frozen=True)
class Comparison:
    """A comparison NaN could pass: where, its source (cut at 120 characters), and why it is one."""

    path: Path
    line: int
    code: str
    why: str


def _callee(call: ast.Call) -> tuple[str | None, bool]:
    """(name, is_method) of what is called: ``abs(x)`` -> ("abs", False); ``t.norm()`` -> ("norm", True)."""
    if isinstance(call.func, ast.Name):
        return call.func.id, False
    if isinstance(call.func, ast.Attribute):
        return call.func.attr, True
    return None, False


class _Measure:
    """Whether an expression is a measured number, given the tainted names and measuring functions."""

    def __init__(self, functions: set[str]):
        self.functions = functions

    def __call__(self, node: ast.AST, tainted: set[str]) -> bool:
        if isinstance(node, ast.Call):
            name, is_method = _callee(node)
            if name in (INTEGER_METHODS if is_method else INTEGER_BUILTINS):
                return False  # an integer, whatever it was computed from
            if name in (MEASURING_METHODS if is_method else MEASURING_BUILTINS) or name in self.functions:
                return True
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
            return True
        if isinstance(node, ast.Name) and node.id in tainted:
            return True
        return any(self(child, tainted) for child in ast.iter_child_nodes(node))


def _assignments(scope: ast.AST):
    """(target name, value) for the plain assignments of one scope (not of nested functions)."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(node))
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple) \
                        and len(target.elts) == len(node.value.elts):
                    yield from ((t.id, v) for t, v in zip(target.elts, node.value.elts) if isinstance(t, ast.Name))
                else:  # a name, or names unpacked; x[i] = ... and obj.a = ... taint nothing
                    names = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
                    yield from ((t.id, node.value) for t in names if isinstance(t, ast.Name))


def _tainted(scope: ast.AST, measure: _Measure) -> set[str]:
    """Names assigned a measured value anywhere in the scope (flow-insensitive, to a fixed point)."""
    tainted: set[str] = set()
    pairs = list(_assignments(scope))
    while True:
        grown = tainted | {name for name, value in pairs if measure(value, tainted)}
        if grown == tainted:
            return tainted
        tainted = grown


def _scopes(tree: ast.Module) -> list[ast.AST]:
    return [tree] + [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _measuring_functions(trees: list[ast.Module]) -> set[str]:
    """Functions of the checks folder (helpers included) that return a measured number, to a fixed point."""
    functions: set[str] = set()
    while True:
        measure = _Measure(functions)
        grown = set(functions)
        for tree in trees:
            for fn in _scopes(tree)[1:]:
                tainted = _tainted(fn, measure)
                returns = [n.value for n in ast.walk(fn) if isinstance(n, ast.Return) and n.value is not None]
                if any(measure(value, tainted) for value in returns):
                    grown.add(fn.name)
        if grown == functions:
            return functions
        functions = grown


def _own_nodes(scope: ast.AST):
    """The nodes of one scope, not of the functions nested in it (they are scopes of their own)."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            stack.extend(ast.iter_child_nodes(node))


def scan(sources: dict[Path, str]) -> list[Comparison]:
    """Every hand-written comparison of a measured number in one exercise's checks (path -> source; those that
    do not parse are left out: ``checks-parse`` names them)."""
    trees = {}
    for path, source in sources.items():
        try:
            trees[path] = ast.parse(source, filename=str(path))
        except (SyntaxError, ValueError):
            continue
    measure = _Measure(_measuring_functions(list(trees.values())))
    found = []
    for path, tree in trees.items():
        lines = sources[path].splitlines()

        def opted_out(node: ast.AST) -> bool:
            return any(OPT_OUT.search(lines[i - 1]) for i in range(node.lineno, node.end_lineno + 1))

        def flag(node: ast.AST, why: str) -> None:
            if not opted_out(node):
                found.append(Comparison(path, node.lineno, ast.unparse(node)[:120], why))

        for scope in _scopes(tree):
            tainted = _tainted(scope, measure)
            for node in _own_nodes(scope):
                if isinstance(node, ast.Call):
                    if _callee(node)[0] in HAND_COMPARISONS:
                        flag(node, "a hand-made closeness test (use expect_close or expect_scalar)")
                    for kw in node.keywords:
                        if kw.arg in NAN_SWITCHES and not (isinstance(kw.value, ast.Constant) and kw.value.value is False):
                            flag(node, f"{kw.arg}= lets NaN pass (use expect_close(..., nan_where_expected=True))")
                if isinstance(node, ast.Compare) and any(isinstance(op, ORDERING) for op in node.ops):
                    if any(measure(side, tainted) for side in [node.left, *node.comparators]):
                        flag(node, "an ordering comparison of a measured number passes NaN "
                                   "(use expect_scalar or expect_bounded)")
    return sorted(found, key=lambda c: (str(c.path), c.line, c.code))


def scan_checks(folder: Path) -> list[Comparison]:
    """:func:`scan` of the top-level modules of one ``checks/`` folder."""
    sources = {}
    for path in sorted(folder.glob("*.py")):
        try:
            sources[path] = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    return scan(sources)


def compared_nan_safely(folder: Folder) -> list[Finding]:
    return [Finding(Rule.NAN_SAFE, c.path, f"NaN could pass `{c.code}`: {c.why}. A comparison on the judge's own "
                    "numbers (a reference implementation) may say so with `# nan-safe: <why>` on its line.",
                    line=c.line) for c in scan_checks(folder.exercise.checks_dir)]


RULES = (compared_nan_safely,)
