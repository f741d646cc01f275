"""Every exercise folder is complete, as issue 6 asks of each: checked from the files, in a second.

Whether the checks tell the corpus apart (reference and variants full marks, stub
zero, every mutant caught) is `grader validate`, which `scripts/test.sh` runs in
Docker after this suite.
"""

import ast
import re
from pathlib import Path

import pytest

from grader.corpus import SOLUTIONS_DIR, corpus
from grader.exercise import Exercise, load_exercise
from grader.exercise import SubsetConfig
from grader.judge.audit import audit_exercise_file, audit_source
from grader.validation import all_exercise_names

NAMES = all_exercise_names()

#: CI grades every mutant in mutants/ on every run, for every exercise: a covering set belongs there (every
#: check catching one, the forbidden-API and NaN mistakes), the rest in more_mutants/ (`grader validate --more`).
MAX_HELD_IN_MUTANTS = 8


@pytest.mark.parametrize("name", NAMES)
def test_the_corpus_has_a_reference_two_variants_and_six_mutants_each_saying_its_mistake(name):
    ex = load_exercise(name)
    kinds = [item.kind for item in corpus(ex)]
    assert kinds.count("variant") >= 2 and kinds.count("mutant") >= 6, kinds
    assert kinds.count("mutant") <= MAX_HELD_IN_MUTANTS, (
        f"{name}: {kinds.count('mutant')} mutants in mutants/, which CI grades on every run: keep a set in which "
        f"every check catches one (at most {MAX_HELD_IN_MUTANTS}) and move the rest to more_mutants/")
    check_corpus_says_what_each_file_is(ex, SOLUTIONS_DIR)


def check_corpus_says_what_each_file_is(ex: Exercise, solutions_dir: Path) -> None:
    """A reference; every variant and mutant has a docstring (a patch: a description) saying what it is,
    and a patch applies to the reference as it is now."""
    items = corpus(ex, solutions_dir, more=True)
    assert items[0].path.is_file(), f"no reference solution at {items[0].path}"
    for item in items:
        if item.kind != "stub":
            doc = item.description()
            assert doc and doc.strip(), f"{item.path} has no docstring saying what it is"
            ast.parse(item.source())  # a patch that does not apply raises, naming the hunk


@pytest.mark.parametrize("name", NAMES)
def test_the_prompt_starts_with_the_contract_and_the_candidate_gets_examples(name):
    check_prompt_and_examples(load_exercise(name))


def check_prompt_and_examples(ex: Exercise) -> None:
    """The contract's section starts within 14 lines and shows the API; "Level: X." stands above it; one
    public example file, test_<name>_example.py."""
    name, meta = ex.name, ex.config.exercise
    lines = ex.readme.read_text(encoding="utf-8").splitlines()
    first_section = next(i for i, line in enumerate(lines) if line.startswith("## "))
    assert first_section < 15, f"{name}: the first section starts at line {first_section + 1}"
    section = "\n".join(lines[first_section:first_section + 40])
    assert "```" in section or re.search(r"`\w+\(", section), f"{name}: no API in the first section"
    assert re.search(rf"Level: {meta.level}\.", "\n".join(lines[:first_section])), f"{name}: level not stated"
    assert meta.topics and meta.title
    examples = [p.name for p in ex.public_files if p.name.startswith("test_")]
    assert examples == [f"test_{name}_example.py"], examples


@pytest.mark.parametrize("name", NAMES)
def test_the_stub_and_public_examples_stay_in_the_subset(name):
    check_stub_and_examples(load_exercise(name))


#: What a public example (a pytest file the candidate runs on their own machine, never graded) needs beyond the
#: exercise's subset, pytest and the candidate's module: the harness around the candidate's code.
EXAMPLE_EXTRAS = {
    "ddp_step": ["os.path", "torch.multiprocessing"],  # spawns the ranks that run the candidate's step
    "export_for_serving": ["torch.cond"],  # builds a model that branches, to export
}


def check_stub_and_examples(ex: Exercise) -> None:
    """The candidate's starting point holds no forbidden API and stays in the exercise's subset; the public
    examples (tests that may compare with torch's own implementation, so a forbidden API is fine there) stay in
    the subset widened by pytest, the candidate's module and their harness (``EXAMPLE_EXTRAS``)."""
    stub = audit_exercise_file(ex, ex.stub.read_text(encoding="utf-8"), filename=ex.stub.name)
    assert stub.parsed and stub.forbidden == [] and stub.violations == [], (stub.forbidden, stub.violations)
    subset = ex.config.subset
    widened = SubsetConfig(modules=[*subset.modules, "pytest", ex.module_name, *EXAMPLE_EXTRAS.get(ex.name, [])],
                           builtins=subset.builtins)
    for example in ex.public_files[2:]:
        audit = audit_source(example.read_text(encoding="utf-8"), ex.config.forbidden, filename=example.name,
                             subset=widened)
        assert audit.parsed and audit.violations == [], (example.name, audit.violations)


@pytest.mark.parametrize("name", NAMES)
def test_the_subset_raises_no_false_alarm_on_the_corpus(name):
    check_audit_of_the_corpus(load_exercise(name), SOLUTIONS_DIR)


def check_audit_of_the_corpus(ex: Exercise, solutions_dir: Path) -> None:
    """Reference and variants: no forbidden API, no violation of the exercise's subset. Mutants keep their
    verdict: exactly those whose docstring says they use a forbidden API have a forbidden hit (a mutant may
    also leave the subset: then it is never run, which catches it too)."""
    name = ex.name
    for item in corpus(ex, solutions_dir, more=True):
        if item.kind == "stub":
            continue
        kind, path = item.kind, item.path
        audit = audit_exercise_file(ex, item.source())
        key = f"{name}/{path.relative_to(path.parents[1] if kind != 'reference' else path.parent).as_posix()}"
        assert audit.parsed, key
        if kind in ("reference", "variant"):
            assert audit.forbidden == [] and audit.violations == [], (key, audit.forbidden, audit.violations)
        else:
            says_forbidden = "forbidden" in (item.description() or "").lower() + path.name
            assert bool(audit.forbidden) == says_forbidden, (key, audit.forbidden)


@pytest.mark.parametrize("name", NAMES)
def test_checks_fail_by_raising_assertion_error_never_by_assert(name):
    check_no_bare_assert(load_exercise(name))


def check_no_bare_assert(ex: Exercise) -> None:
    """A check fails with ``raise AssertionError("what was compared: ...")``, the helpers' way, never ``assert``:
    ``python -O`` drops an ``assert``, and in a helper module pytest does not rewrite it, so it fails, if at
    all, with no message for the scorecard."""
    found = [f"{path.relative_to(ex.root)}:{node.lineno}"
             for path in sorted(ex.checks_dir.rglob("*.py"))
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(node, ast.Assert)]
    assert found == [], f"{ex.name}: `assert` in checks (raise AssertionError with a message instead): {found}"


def test_the_bare_assert_rule_finds_an_assert_in_a_helper(tmp_path):
    """The scan sees an ``assert`` wherever it stands in checks/, a helper module's included."""
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "_helpers.py").write_text("def close(a, b):\n    x = 1\n    assert a == b\n")
    ex = Exercise(tmp_path, load_exercise("clip_grad_norm").config)
    with pytest.raises(AssertionError, match=r"checks/_helpers.py:3"):
        check_no_bare_assert(ex)


@pytest.mark.parametrize("name", NAMES)
def test_the_prompt_states_the_subset_the_exercise_toml_allows(name):
    """A candidate reads the rules in the prompt: its "What your file may use" section names every module and
    builtin the exercise's ``[subset]`` adds to the default, so a file that follows the prompt runs."""
    ex = load_exercise(name)
    readme = ex.readme.read_text(encoding="utf-8")
    assert "\n## What your file may use\n" in readme, f"{name}: the prompt does not state its language subset"
    section = readme.split("\n## What your file may use\n", 1)[1].split("\n## ", 1)[0]
    missing = [e for e in [*ex.config.subset.modules, *ex.config.subset.builtins] if f"`{e}`" not in section]
    assert missing == [], f"{name}: the prompt's subset section does not name {missing}"
