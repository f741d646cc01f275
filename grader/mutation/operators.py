"""Which mutations are made: cosmic-ray's operators, a chosen few, and three of ours in its interface.

cosmic-ray's operators are small classes over a parso tree that give back the source with every
untouched byte as it was, so a mutant's diff is the one changed token; only those classes are used,
never its runner. The operator pairs kept are mistakes someone writing PyTorch makes (``/`` for ``//``,
``<`` for ``<=``, a lost minus); pairs that are a TypeError on tensors, its random operators and its
exception replacer are left out. Ours add a dropped statement, two arguments swapped, and ``@`` read as
``*``. See docs/decisions/mutation-operators.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import parso.python.tree as tree
from cosmic_ray.operators import (
    binary_operator_replacement as binary,
    boolean_replacer as boolean,
    break_continue,
    comparison_operator_replacement as comparison,
    number_replacer,
    remove_decorator,
    unary_operator_replacement as unary,
    zero_iteration_for_loop,
)
from cosmic_ray.operators.operator import Example, Operator


@dataclass(frozen=True)
class Entry:
    """One operator as mutants are named by it: ``name`` starts every mutant id it makes.

    ``index`` picks one of an operator's several mutations of the same node (the number
    replacer's +1 and -1), so that each name makes one change per position."""

    name: str
    operator: Operator
    index: int | None = None


class DropStatement(Operator):
    """A statement in a function body replaced by ``pass``: a forgotten step (``zero_grad()``, ``x += y``).

    Left alone: docstrings, ``return``, imports, ``pass``, and an assignment that binds a plain
    name for the first time in its function (dropping it is a NameError: killed by anything,
    a grading spent on nothing)."""

    def mutation_positions(self, node):
        if _droppable(node):
            yield (node.start_pos, node.end_pos)

    def mutate(self, node, index):
        return tree.Keyword("pass", node.start_pos, prefix=node.get_first_leaf().prefix)

    @classmethod
    def examples(cls):
        return (Example("def f(x):\n    x += 1\n    return x\n", "def f(x):\n    pass\n    return x\n"),)


#: Calls whose first two arguments commute: swapping them makes an equivalent mutant, a grading spent on nothing.
SYMMETRIC_CALLS = frozenset({"transpose", "swapaxes", "swapdims", "maximum", "minimum", "add", "mul", "hypot",
                             "logical_and", "logical_or", "eq", "ne"})


class SwapArguments(Operator):
    """Two neighbouring positional arguments of a call swapped: ``matmul(k, q)``, ``clamp(x, hi, lo)``.

    Not in calls named in :data:`SYMMETRIC_CALLS` (``x.transpose(1, 2)``), whose swap changes nothing."""

    def mutation_positions(self, node):
        for _ in _swappable_pairs(node):
            yield (node.start_pos, node.end_pos)

    def mutate(self, node, index):
        i, j = _swappable_pairs(node)[index]
        a, b = node.children[i], node.children[j]
        a_code, b_code = a.get_code(include_prefix=False), b.get_code(include_prefix=False)
        # A leaf holding the other's text: parso writes a leaf's prefix and value back as they are.
        node.children[i] = tree.Name(b_code, a.start_pos, prefix=a.get_first_leaf().prefix)
        node.children[j] = tree.Name(a_code, b.start_pos, prefix=b.get_first_leaf().prefix)
        return node

    @classmethod
    def examples(cls):
        return (Example("f(a, b, c)", "f(b, a, c)"), Example("f(a, b, c)", "f(a, c, b)", occurrence=1))


class MatMulToMul(Operator):
    """``a @ b`` read as ``a * b``: a matrix product written as an elementwise one (broadcasts, silently)."""

    def mutation_positions(self, node):
        if node.type == "operator" and node.value == "@" and node.parent is not None and node.parent.type == "term":
            yield (node.start_pos, node.end_pos)

    def mutate(self, node, index):
        node.value = "*"
        return node

    @classmethod
    def examples(cls):
        return (Example("y = a @ b", "y = a * b"),)


def _droppable(node) -> bool:
    parent = node.parent
    if parent is None or parent.type != "simple_stmt" or node.type in ("newline", "operator"):
        return False
    if node.search_ancestor("funcdef") is None:
        return False  # module level: a constant or an import, dropping it is a NameError
    if node.type in ("return_stmt", "import_name", "import_from", "global_stmt", "nonlocal_stmt"):
        return False
    if node.type == "keyword" and node.value in ("pass", "break", "continue"):
        return False
    if node.type in ("string", "strings", "fstring"):
        return False  # a docstring
    if node.type == "expr_stmt" and _first_binding(node):
        return False
    return True


def _first_binding(stmt) -> bool:
    """``name = ...`` (or ``a, b = ...``) where some target name is bound nowhere before it in its function."""
    children = stmt.children
    if len(children) < 3 or children[1].type != "operator" or children[1].value != "=":
        return False  # augmented assignment, annotation, or an expression statement
    function = stmt.search_ancestor("funcdef")
    before = {leaf.value for leaf in _leaves(function) if leaf.type == "name" and leaf.start_pos < stmt.start_pos}
    targets = children[0]
    names = [targets] if targets.type == "name" else [c for c in getattr(targets, "children", []) if c.type == "name"]
    return bool(names) and any(n.value not in before for n in names)


def _leaves(node):
    if hasattr(node, "children"):
        for child in node.children:
            yield from _leaves(child)
    else:
        yield node


def _swappable_pairs(node) -> list[tuple[int, int]]:
    """Indices (in ``node.children``) of neighbouring positional arguments whose texts differ."""
    if node.type != "arglist" or node.parent is None or node.parent.type != "trailer":
        return []
    called = node.parent.get_previous_sibling()  # `f` in f(...), the `.name` trailer in x.name(...)
    if called is not None and called.get_code(include_prefix=False).lstrip(".") in SYMMETRIC_CALLS:
        return []
    args = [i for i, c in enumerate(node.children) if not (c.type == "operator" and c.value == ",")]
    positional = [i for i in args if not (node.children[i].type == "argument")]  # k=v, *a, **k are 'argument'
    pairs = []
    for i, j in zip(positional, positional[1:]):
        if j != i + 2:
            continue  # not neighbours: a keyword argument between them cannot be (positional after keyword)
        a, b = node.children[i], node.children[j]
        if a.get_code(include_prefix=False) != b.get_code(include_prefix=False):
            pairs.append((i, j))
    return pairs


class OutsideSignatures(Operator):
    """cosmic-ray's binary operator replacement, except on the bare ``*`` of a signature (``def f(a, *, b)``).

    cosmic-ray takes that keyword-only marker for a multiplication, and its ``/`` "mutant" is a
    positional-only marker: a different signature, no arithmetic mistake anyone makes."""

    def __init__(self, inner: Operator):
        self.inner = inner

    def mutation_positions(self, node):
        if node.parent is not None and node.parent.type in ("parameters", "typedargslist", "varargslist", "lambdef"):
            return
        yield from self.inner.mutation_positions(node)

    def mutate(self, node, index):
        return self.inner.mutate(node, index)

    @classmethod
    def examples(cls):
        return ()


def _binary(from_op: str, to_op: str) -> Entry:
    cls = getattr(binary, f"ReplaceBinaryOperator_{from_op}_{to_op}")
    return Entry(f"{from_op.lower()}_to_{to_op.lower()}", OutsideSignatures(cls()))


def _comparison(from_op: str, to_op: str) -> Entry:
    cls = getattr(comparison, f"ReplaceComparisonOperator_{from_op}_{to_op}")
    return Entry(f"{from_op.lower()}_to_{to_op.lower()}", cls())


def catalogue() -> tuple[Entry, ...]:
    """Every operator used, in the order mutants are made (a mutant's place in it is part of its id's stability)."""
    return (
        *(_binary(a, b) for a, b in [("Add", "Sub"), ("Sub", "Add"), ("Mul", "Div"), ("Div", "Mul"),
                                     ("Div", "FloorDiv"), ("FloorDiv", "Div"), ("Mul", "Pow"), ("Pow", "Mul"),
                                     ("Mod", "FloorDiv"), ("BitAnd", "BitOr"), ("BitOr", "BitAnd")]),
        Entry("matmul_to_mul", MatMulToMul()),
        *(_comparison(a, b) for a, b in [("Lt", "LtE"), ("LtE", "Lt"), ("Gt", "GtE"), ("GtE", "Gt"),
                                         ("Lt", "Gt"), ("Gt", "Lt"), ("Eq", "NotEq"), ("NotEq", "Eq"),
                                         ("Is", "IsNot"), ("IsNot", "Is")]),
        Entry("drop_minus", unary.ReplaceUnaryOperator_Delete_USub()),
        Entry("drop_not", unary.ReplaceUnaryOperator_Delete_Not()),
        Entry("add_not", boolean.AddNot()),
        Entry("true_to_false", boolean.ReplaceTrueWithFalse()),
        Entry("false_to_true", boolean.ReplaceFalseWithTrue()),
        Entry("and_to_or", boolean.ReplaceAndWithOr()),
        Entry("or_to_and", boolean.ReplaceOrWithAnd()),
        Entry("break_to_continue", break_continue.ReplaceBreakWithContinue()),
        Entry("continue_to_break", break_continue.ReplaceContinueWithBreak()),
        Entry("number_plus_one", number_replacer.NumberReplacer(), index=0),
        Entry("number_minus_one", number_replacer.NumberReplacer(), index=1),
        Entry("drop_decorator", remove_decorator.RemoveDecorator()),
        Entry("zero_iterations", zero_iteration_for_loop.ZeroIterationForLoop()),
        Entry("drop_statement", DropStatement()),
        Entry("swap_arguments", SwapArguments()),
    )
