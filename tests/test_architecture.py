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
import re
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
     "userfile", "progress"),
    ("atomic", "errors", "untrusted"),
]

#: No module needs scrolling.
MAX_LINES = 400
#: A module's docstring says what it does and why; reasons, history and figures go to docs/decisions/.
MAX_DOCSTRING_LINES = 10
#: An issue number in code ("issue 25.4", "(issues 30)", "issue #7") means nothing to a reader of the code.
ISSUE_NUMBER = re.compile(r"\bissues?\s+#?\d+", re.IGNORECASE)
#: Third-party files shipped as they are: they cite their own project's issues.
VENDORED = PACKAGE / "serve" / "static" / "codemirror"


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


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_docstring_over_the_line_limit(module):
    """A module docstring says what the module does and why, in at most ten lines (its quotes included)."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    if ast.get_docstring(tree) is None:
        return
    first = tree.body[0]
    lines = first.end_lineno - first.lineno + 1
    assert lines <= MAX_DOCSTRING_LINES, (
        f"{MODULES[module].relative_to(PACKAGE.parent)}: a {lines}-line module docstring; keep what the module does "
        f"and why in {MAX_DOCSTRING_LINES} lines, and move reasons, history and figures to "
        "docs/decisions/<short-name>.md (one short file per decision), linked as 'See docs/decisions/<name>.md.'")


def test_no_file_under_grader_cites_an_issue_number():
    """Code says what holds and why in words; the issue tracker's numbers belong to commits and docs/decisions/."""
    cited = []
    for path in sorted(p for p in PACKAGE.rglob("*") if p.is_file() and VENDORED not in p.parents):
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        cited += [f"{path.relative_to(PACKAGE.parent)}:{text.count(chr(10), 0, m.start()) + 1}: {m.group()}"
                  for m in ISSUE_NUMBER.finditer(text)]
    assert cited == [], "say what the issue decided instead of its number (the reason, if long, in docs/decisions/)"


def test_the_issue_number_pattern_finds_citations_and_nothing_else():
    assert all(ISSUE_NUMBER.search(t) for t in ("(issue 25.4)", "issues 30 and 31", "Issue #7", "issue\n26"))
    assert not any(ISSUE_NUMBER.search(t) for t in ("issued 3 keys", "an issue with 3 checks", "tissue 4", "issue"))


def test_what_is_staged_into_the_sandbox_imports_nothing_of_ours_but_itself():
    """The worker and its kit run beside the candidate's code: of grader, they may import only files staged with them
    (the rest is absent there, and must stay so)."""
    staged = {_module_name(PACKAGE.parent / rel.removeprefix("lib/")) for rel in LIB_FILES}
    assert "grader.sandbox.worker" in staged and "grader.wire.protocol" in staged
    reached = {m: GRAPH[m] - staged for m in sorted(staged)}
    assert {m: t for m, t in reached.items() if t} == {}


def test_the_cli_imports_a_commands_module_only_when_that_command_runs():
    """``grader submit`` loads neither the service nor the batch: each command's module is imported on its first use,
    and every command the table lists is the command of that name."""
    import subprocess
    import sys

    script = ("import sys\nfrom click.testing import CliRunner\nfrom grader.cli import main\n"
              "loaded = lambda: sorted(m for m in sys.modules if m.startswith('grader.cli.'))\n"
              "print(loaded())\nCliRunner().invoke(main, ['submit', '--help'])\nprint(loaded())\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    at_import, after_submit = (eval(line) for line in done.stdout.splitlines()[:2])  # noqa: S307 (our own output)
    assert not [m for m in at_import if m.endswith(("_cmd", ".submit"))]  # only the group's own helpers
    assert "grader.cli.submit" in after_submit
    assert not {"grader.cli.serve_cmd", "grader.cli.batch_cmd", "grader.cli.validate_cmd"} & set(after_submit)

    import click
    from click.testing import CliRunner

    from grader.cli import COMMANDS, main

    context = click.Context(main, info_name="grader")
    for name in COMMANDS:
        assert main.get_command(context, name).name == name
    assert CliRunner().invoke(main, ["--help"]).exit_code == 0


def test_the_host_tells_its_judge_a_grading_in_one_request():
    """The judge's pytest gets one ``--grader-*`` option from the host, ``--grader-request`` (a ``GradingRequest``);
    the plugin's other options are an author's shorthand for their own runs, never the host's."""
    from grader.host.runner import grading_request, pytest_args
    from grader.exercise import load_exercise
    from grader.wire.grant import GpuRequest

    ex = load_exercise(PACKAGE.parent / "tests" / "fixtures" / "toy")
    asked = grading_request(ex, ex.stub, sandbox="docker", seed=3, grading_id="g", gpus=GpuRequest(count=1),
                            image="i", runtime="runsc", local_gpu_env={"A": "b"}, prestarted=("c", Path("/s")),
                            only=["x"])
    args = pytest_args(ex, Path("/tmp/request.json"), seed=3, ini=Path("/tmp/pytest.ini"))
    assert [a for a in args if a.startswith("--grader")] == ["--grader-request"]
    assert type(asked).model_validate_json(asked.model_dump_json()) == asked
    plugin = (PACKAGE / "judge" / "plugin.py").read_text()
    import re
    options = set(re.findall(r'addoption\("(--grader-[a-z-]+)"', plugin))
    assert options == {"--grader-request", "--grader-submission", "--grader-exercise", "--grader-sandbox",
                       "--grader-events"}, options


#: What reads text to decide on it: a module that decides what a candidate sees from fields uses none of these.
TEXT_MODULES = {"re", "regex", "fnmatch", "shlex", "string"}
TEXT_METHODS = {"splitlines", "split", "rsplit", "partition", "rpartition", "startswith", "endswith", "find",
                "rfind", "removeprefix", "removesuffix", "match", "fullmatch", "search", "findall", "finditer", "sub"}


def text_parsing(source: str) -> list[str]:
    """Where ``source`` imports a text-matching module or calls a method that reads a string's parts."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [f"line {node.lineno}: import {a.name}" for a in node.names if a.name.split(".")[0] in TEXT_MODULES]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in TEXT_MODULES:
            found.append(f"line {node.lineno}: from {node.module} import ...")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in TEXT_METHODS:
            found.append(f"line {node.lineno}: .{node.func.attr}(...)")
    return found


def test_redaction_decides_from_fields_and_parses_no_text():
    """What a candidate sees is chosen by fields (``said``, a trace's frames, ``probe``), never by matching text."""
    found = text_parsing((PACKAGE / "reports" / "redact.py").read_text(encoding="utf-8"))
    assert found == [], "grader/reports/redact.py reads text to decide what a candidate sees: " + "; ".join(found)


def test_the_text_parsing_rule_finds_what_it_names():
    sample = ("import re\nfrom fnmatch import fnmatch\n"
              "def f(check):\n    for line in check.details.splitlines():\n"
              "        if line.startswith('E'):\n            return _P.sub('', line)\n")
    assert text_parsing(sample) == ["line 1: import re", "line 2: from fnmatch import ...", "line 4: .splitlines(...)",
                                    "line 5: .startswith(...)", "line 6: .sub(...)"]
    assert text_parsing("def f(c):\n    return c.model_copy(update={'said': None})\n") == []
