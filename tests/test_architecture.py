"""The shape of grader/: its import graph has no cycle, its packages are layered, no module needs scrolling.

The graph is read from the source (``ast``), so it holds every import a reader sees: at
the top of a module, inside a function, and under ``if TYPE_CHECKING:`` (a type-only
import ties two modules together for whoever changes one of them, just as a real one does).

``LAYERS`` is the one place the order is written down. Top to bottom, each line is one
process or one concept, and a unit (a package under grader/, or a top-level module) may
import only units on a line below its own: never one above it, and never a neighbour on its
own line (neighbours are independent of each other by design). Why this order:

- the command line drives everything, so it is on top; under it the take-home service (``serve``),
  which calls the batch (its engines, rows and panel page), the evidence, practice's packing and the
  host's ``grade()``, and which nothing but the command line imports; what is built from whole gradings
  (practice packs, the authoring rules, mutation scores, batches, evidence) sits under it;
- the three processes come next, side by side and independent: ``host`` (the grader's own
  process: grading, the runner, the warm server, validation), ``judge`` (the judge child:
  the pytest plugin and the check kit) and ``sandbox`` (what runs inside the sandbox, which
  reaches nothing of ours but the wire);
- what the host uses after and around scoring: ``hindsight`` (diagnosis, interview, mistake
  records, which read only the report model), ``backends`` (how the judge reaches a sandbox)
  and ``catalogs``; then the image ``build``, the ``corpus``, the ``exercise`` with its
  ``subset`` policy;
- at the bottom, the types every process shares: the ``wire`` (what crosses a process
  boundary), the ``reports`` model, and small foundations (errors, atomic writes, ...).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import grader
from grader.backends.staging import LIB_FILES

PACKAGE = Path(grader.__file__).resolve().parent

#: Top to bottom; a unit imports only units on lower lines (see the module's docstring).
LAYERS: list[tuple[str, ...]] = [
    ("__main__",),
    ("cli",),
    ("serve",),
    ("practice", "authoring", "mutation", "scaffold"),
    ("batch",),
    ("evidence",),
    ("host", "judge", "sandbox"),
    ("hindsight", "backends", "catalogs"),
    ("build", "corpus"),
    ("exercise",),
    ("subset",),
    ("wire",),
    ("reports", "unknown_exercise", "mutant_patch", "scaffold_corpus", "datadir", "processes", "child_python",
     "userfile"),
    ("atomic", "errors", "untrusted"),
]

#: No module needs scrolling.
MAX_LINES = 400


def _module_name(path: Path) -> str:
    parts = ("grader", *path.relative_to(PACKAGE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES: dict[str, Path] = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _resolve(name: str) -> str | None:
    """The grader module ``name`` lives in (``grader.a.b.C`` -> ``grader.a.b``), None outside grader."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str) -> set[str]:
    """The grader modules ``module`` imports anywhere in its source (``TYPE_CHECKING`` blocks and functions too)."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1])
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module or ""
            # ``from grader.x import y``: the module y when there is one, else x (whose name y is).
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        else:
            continue
        for name in names:
            if name.split(".")[0] == "grader" and (target := _resolve(name)) and target != module:
                found.add(target)
    return found


GRAPH: dict[str, set[str]] = {m: imports_of(m) for m in MODULES}


def unit_of(module: str) -> str | None:
    """``grader.host.grading`` -> ``host``; ``grader.errors`` -> ``errors``; the package root -> None."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_graph_sees_every_kind_of_import():
    """The reader itself: relative, aliased, in-function and type-only imports are all edges."""
    assert "grader.reports.model" in GRAPH["grader.host.grading"]
    assert all(m in MODULES for targets in GRAPH.values() for m in targets)
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_in_grader():
    assert cycles(GRAPH) == []


def test_every_unit_has_one_place_in_the_layers():
    placed = [u for line in LAYERS for u in line]
    assert len(placed) == len(set(placed)), "a unit is named twice in LAYERS"
    units = {u for m in MODULES if (u := unit_of(m))}
    assert units - set(placed) == set(), "new units: give them a line in LAYERS"
    assert set(placed) - units == set(), "LAYERS names units that no longer exist"


def test_no_unit_imports_one_above_it_or_beside_it():
    level = {u: i for i, line in enumerate(LAYERS) for u in line}
    wrong = sorted(f"{m} -> {t} ({unit_of(m)} is on line {level[unit_of(m)]}, {unit_of(t)} on line {level[unit_of(t)]})"
                   for m, targets in GRAPH.items() for t in targets
                   if unit_of(m) and unit_of(t) and unit_of(m) != unit_of(t) and level[unit_of(t)] <= level[unit_of(m)])
    assert wrong == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_over_the_line_limit(module):
    lines = MODULES[module].read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{MODULES[module].relative_to(PACKAGE.parent)}: {lines} lines; split it along its concepts"


def test_what_is_staged_into_the_sandbox_imports_nothing_of_ours_but_itself():
    """The worker and its kit run beside the candidate's code: of grader, they may import only files staged with them
    (the rest is absent there, and must stay so)."""
    staged = {_module_name(PACKAGE.parent / rel.removeprefix("lib/")) for rel in LIB_FILES}
    assert "grader.sandbox.worker" in staged and "grader.wire.protocol" in staged
    reached = {m: GRAPH[m] - staged for m in sorted(staged)}
    assert {m: t for m, t in reached.items() if t} == {}
