"""No check compares a measured number by hand: a NaN passes ``if abs(got - want) > tol: fail``.

Every ordering comparison is False when a side is NaN, so a check that fails on
``error > tol`` passes a NaN (grad_accumulation's and ddp_step's loss checks did).
Checks compare numbers through grader.judge (``expect_scalar``, ``expect_bounded``,
``expect_close``), which prove the value finite first. This scan of every
exercise's checks/ keeps the pattern from coming back. It flags:

- ``allclose``/``isclose`` of any module, and ``equal_nan=``/``nan_ok=`` other than
  ``False`` (use ``expect_close(..., nan_where_expected=True)``);
- ``<``, ``<=``, ``>``, ``>=`` with a *measured* side: built with ``abs``/``min``/``max``/
  ``float``/``sum``, a reduction or ``.item()`` (``.abs()``, ``.norm()``, ``.max()``, ...),
  a subtraction; or a name assigned from one in the same function;
  or a call to a function of the exercise's checks that returns one.

Integer-valued sides (``len``, ``int``, ``.numel()``, ``.count()``, ``.index()``,
``.dim()``) are not measured. A comparison on the judge's own numbers (a
reference implementation) may carry ``# nan-safe: <why>`` on its line.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

EXERCISES = Path(__file__).resolve().parent.parent / "exercises"

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
class Finding:
    path: Path
    line: int
    code: str
    why: str

    def __str__(self) -> str:
        return f"{self.path.relative_to(EXERCISES.parent)}:{self.line}: {self.why}: {self.code}"


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


def scan_checks(folder: Path) -> list[Finding]:
    """Every hand-written comparison of a measured number in one exercise's checks/ folder."""
    files = sorted(folder.glob("*.py"))
    sources = {p: p.read_text(encoding="utf-8") for p in files}
    trees = {p: ast.parse(src, filename=str(p)) for p, src in sources.items()}
    measure = _Measure(_measuring_functions(list(trees.values())))
    findings = []
    for path, tree in trees.items():
        lines = sources[path].splitlines()

        def opted_out(node: ast.AST) -> bool:
            return any(OPT_OUT.search(lines[i - 1]) for i in range(node.lineno, node.end_lineno + 1))

        def flag(node: ast.AST, why: str) -> None:
            if not opted_out(node):
                findings.append(Finding(path, node.lineno, ast.unparse(node)[:120], why))

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
    return sorted(findings, key=lambda f: (str(f.path), f.line, f.code))


FOLDERS = sorted(p for p in EXERCISES.glob("*/checks") if p.is_dir())


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.parent.name)
def test_checks_compare_numbers_only_through_the_nan_safe_helpers(folder):
    findings = scan_checks(folder)
    if findings:
        pytest.fail("NaN could pass these comparisons:\n" + "\n".join(map(str, findings)), pytrace=False)


def _scan_source(tmp_path, source: str) -> list[str]:
    (tmp_path / "test_x.py").write_text(source, encoding="utf-8")
    return [f.code for f in scan_checks(tmp_path)]


def test_the_scan_finds_each_shape_of_the_pattern(tmp_path):
    source = '''
import math, torch

def _distance(u):
    return max(float(u.max()), float(-u.min()))

def test_a(got, want, tol, t, limit, a, b):
    if abs(got - want) > tol: fail()
    if not (got - want).norm() <= tol: fail()
    worst = float(t.abs().max())
    if worst > limit: fail()
    d, threshold = _distance(t), limit
    if d > threshold: fail()
    ok = torch.allclose(a, b) and math.isclose(got, want)
    torch.testing.assert_close(a, b, equal_nan=True)
    return bool(t.sum() < 3)
'''
    assert sorted(_scan_source(tmp_path, source)) == sorted([
        "abs(got - want) > tol", "(got - want).norm() <= tol", "worst > limit", "d > threshold",
        "torch.allclose(a, b)", "math.isclose(got, want)",
        "torch.testing.assert_close(a, b, equal_nan=True)", "t.sum() < 3",
    ])


def test_the_scan_leaves_integers_judge_inputs_and_opted_out_lines_alone(tmp_path):
    source = '''
def reference(metric, best, delta, t, warmup, x, events):
    if t < warmup: pass
    if len(x) <= 12 or x.numel() > 3 or int(x.max()) >= 4: pass
    if events.index("a") > events.index("b"): pass
    return metric < best - delta  # nan-safe: the judge's reference, on the judge's inputs
'''
    assert _scan_source(tmp_path, source) == []


# ------------------------------------------------ the attack, on the checks themselves


@pytest.fixture
def load_checks(monkeypatch):
    """Import one module of an exercise's checks as the judge does (``importable``: its folder on
    sys.path, its shared.py as ``shared``); what the import added to sys.modules leaves it at teardown."""
    import importlib
    import sys

    from grader.judge.plugin import importable

    before = set(sys.modules)
    monkeypatch.setattr(sys, "path", list(sys.path))

    def load(exercise: str, module: str):
        shared = EXERCISES / exercise / "shared.py"
        importable(EXERCISES / exercise / "checks", shared if shared.is_file() else None)
        return importlib.import_module(module)

    yield load
    for name in set(sys.modules) - before:
        if name.startswith(("_", "test_")) or name == "shared":
            del sys.modules[name]


@pytest.mark.parametrize("loss", [float("nan"), float("inf")])
def test_grad_accumulation_loss_check_fails_a_non_finite_loss(load_checks, loss):
    helpers = load_checks("grad_accumulation", "_grad_accumulation_helpers")
    case = helpers.Case(sizes=(2, 2, 2, 2, 2), k=2, seed=4)
    right = helpers.reference(case).losses
    helpers.check_losses({"losses": list(right)}, case)
    with pytest.raises(AssertionError, match=r"loss 0: expected a finite float close to .*, got (nan|inf)"):
        helpers.check_losses({"losses": [loss] * len(right)}, case)


class _FakeDdpSandbox:
    """Answers ddp_run as a correct implementation would, except for the loss every rank returns."""

    def __init__(self, helpers, loss):
        self.helpers, self.loss = helpers, loss

    def call(self, probe, runs):
        assert probe == "ddp_run"
        out = []
        for run in runs:
            expected = self.helpers.single_process(run["scenario"])
            losses = [{"type": "float", "value": self.loss(value)} for value in expected.losses]
            rank = {"params": expected.params, "grads": expected.grads, "losses": losses}
            out.append({"ranks": [rank] * run["world_size"]})
        return out


@pytest.mark.filterwarnings("ignore::pytest.PytestUnknownMarkWarning")  # the checks' points/hint marks
@pytest.mark.parametrize("loss", [float("nan"), float("inf")])
def test_ddp_step_loss_check_fails_a_non_finite_loss(load_checks, loss):
    checks = load_checks("ddp_step", "test_train_step")
    helpers = load_checks("ddp_step", "_ddp_step_helpers")
    checks.test_train_step_returns_mean_loss(_FakeDdpSandbox(helpers, lambda right: right))
    with pytest.raises(AssertionError, match=r"the loss rank 0 returned: expected a finite float close to .*, got"):
        checks.test_train_step_returns_mean_loss(_FakeDdpSandbox(helpers, lambda right: loss))
