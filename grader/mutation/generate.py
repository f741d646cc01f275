"""Mutants of a reference, made from its source: each a named, located, one-token-sized change.

A mutant's id is ``OPERATOR@LINE:COL`` (1-based, where the change starts), with ``#K`` when the same
operator makes several there: it says what changed and where, reads the same on every run, and is what
an equivalence record names (:mod:`grader.mutation.equivalents`); an edit above moves it and the record
goes stale, reported. Mutants come in a stable order (operators, then place). One that does not parse,
is the reference's own program, or repeats an earlier mutant is dropped with its reason before grading.
"""

from __future__ import annotations

import ast
import difflib
from dataclasses import dataclass, field

import parso
from cosmic_ray.ast import Visitor

from grader.mutation.operators import Entry, catalogue


@dataclass(frozen=True)
class Mutant:
    """One mutant: where and how it differs from the reference, and its whole source."""

    id: str
    operator: str
    line: int  # 1-based, in the reference
    col: int  # 1-based
    line_text: str  # the reference's line, stripped: what an equivalent's record must still match
    source: str
    diff: str  # unified diff against the reference, as a mutant patch in solutions/ would hold it


@dataclass(frozen=True)
class Dropped:
    id: str
    reason: str


@dataclass
class Generation:
    """Every mutant of one source, and the ones dropped before grading, with why."""

    mutants: list[Mutant] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)


class _Positions(Visitor):
    """Walks a tree as cosmic-ray's mutation visitor does, listing each (node start, index) it could mutate."""

    def __init__(self, operator):
        self.operator, self.found = operator, []

    def visit(self, node):
        for index, (start, _end) in enumerate(self.operator.mutation_positions(node)):
            self.found.append((start, index))
        return node


class _Apply(Visitor):
    """Makes the ``target``-th mutation (counted as :class:`_Positions` lists them) and no other."""

    def __init__(self, operator, target: int):
        self.operator, self.target, self.count, self.applied = operator, target, 0, False

    def visit(self, node):
        for index, _ in enumerate(self.operator.mutation_positions(node)):
            if self.count == self.target:
                node = _tidy(node, self.operator.mutate(node, index))
                self.applied = True
            self.count += 1
            if self.applied:
                break
        return node


def _tidy(old, new):
    """A replacement node with the whitespace before it that the old one had: cosmic-ray's number replacer
    writes ``" 2"`` and its unary deletion keeps the operand's own space, so ``dim=-1`` became ``dim=- 2``
    and ``if not ok`` became ``if  ok``; the change is the token, not the spacing."""
    if new is None:
        return new
    if new is old:  # a deleted unary operator is an empty leaf: its operand's space goes with it
        children = getattr(new, "children", [])
        if len(children) > 1 and not hasattr(children[0], "children") and children[0].value == "":
            children[1].get_first_leaf().prefix = ""
        return new
    prefix = old.get_first_leaf().prefix
    first = new.get_first_leaf()
    first.prefix = prefix
    if first.type == "number":
        first.value = first.value.lstrip()
    return new


def generate(source: str, filename: str = "reference.py", operators: tuple[Entry, ...] | None = None) -> Generation:
    """Every mutant of ``source`` (a reference that parses) by ``operators`` (default: the catalogue)."""
    reference_ast = _program(source)
    protected = _protected(source)
    lines = source.splitlines()
    out = Generation()
    seen: dict[str, str] = {reference_ast: ""}
    ids: set[str] = set()
    for entry in operators if operators is not None else catalogue():
        finder = _Positions(entry.operator)
        finder.walk(parso.parse(source))
        for target, (start, index) in enumerate(finder.found):
            if entry.index is not None and index != entry.index:
                continue
            if any(lo <= start < hi for lo, hi in protected):
                continue
            line, col = start[0], start[1] + 1
            mutant_id = f"{entry.name}@{line}:{col}"
            k = 1
            while mutant_id in ids:  # the same operator again at the same place
                mutant_id, k = f"{entry.name}@{line}:{col}#{k}", k + 1
            ids.add(mutant_id)
            applier = _Apply(entry.operator, target)
            mutated = applier.walk(parso.parse(source)).get_code()
            try:
                key = _program(mutated)
            except (SyntaxError, ValueError):
                out.dropped.append(Dropped(mutant_id, "does not parse"))
                continue
            if key in seen:
                same = seen[key]
                out.dropped.append(Dropped(mutant_id, f"the same program as {same}" if same else
                                           "the same program as the reference"))
                continue
            seen[key] = mutant_id
            out.mutants.append(Mutant(mutant_id, entry.name, line, col, lines[line - 1].strip(), mutated,
                                      unified_diff(source, mutated, filename)))
    return out


class _NotNot(ast.NodeTransformer):
    """``not not x`` as ``x`` where only its truth counts (an ``if``, ``while`` or ``assert`` test)."""

    def _test(self, node):
        self.generic_visit(node)
        while (isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not)
               and isinstance(node.test.operand, ast.UnaryOp) and isinstance(node.test.operand.op, ast.Not)):
            node.test = node.test.operand.operand
        return node

    visit_If = visit_While = visit_Assert = visit_IfExp = _test


def _program(source: str) -> str:
    """What a mutant is compared by: its ``ast`` (formatting and comments aside), ``not not`` in a test unwrapped
    (cosmic-ray's add_not on ``if not x`` makes the same program as dropping that ``not``)."""
    return ast.dump(_NotNot().visit(ast.parse(source)))


def unified_diff(before: str, after: str, filename: str) -> str:
    """``diff -u`` of the reference and a mutant, named as a patch in ``mutants/`` names it (``--- NAME``)."""
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        fromfile=filename, tofile=filename))


def _protected(source: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Spans no mutant touches: type annotations (never run), f-strings (a message's wording, not behaviour: a
    check pinning ``shape[2:]`` inside an error message would be brittle, not stronger) and
    ``if __name__ == "__main__":`` blocks (never imported by a check), as ((line, col), (end line, end col)) with 0-based columns like parso's."""
    spans = []

    def span(node: ast.AST) -> None:
        spans.append(((node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset)))

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.arg) and node.annotation is not None:
            span(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            span(node.returns)
        elif isinstance(node, ast.AnnAssign):
            span(node.annotation)
        elif isinstance(node, ast.JoinedStr):
            span(node)
        elif isinstance(node, ast.If) and "__main__" in ast.unparse(node.test) and "__name__" in ast.unparse(node.test):
            span(node)
    return spans
