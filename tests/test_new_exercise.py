"""`grader new NAME`: an exercise that follows every rule of the repository's own and validates as written."""

from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.exercise import load_exercise
from grader.hindsight.interview import load_guide
from tests.test_contract_tables import table_problems
from tests.test_exercise_folders import (check_audit_of_the_corpus, check_corpus_says_what_each_file_is,
                                         check_no_bare_assert, check_prompt_and_examples, check_stub_and_examples)
from tests.test_interview import guide_problems
from tests.test_nan_safe_checks import scan_checks


def _new(root: Path, name: str):
    """``grader new NAME`` into ``root``'s exercises/ and solutions/, as an author outside the repository would."""
    return CliRunner().invoke(main, ["new", name, "--exercise-root", str(root / "exercises"),
                                     "--solutions-root", str(root / "solutions")], catch_exceptions=False)


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_grader_new_then_grader_validate_passes(tmp_path):
    """Reference and variant full marks, the stub zero, the mutant (a patch) caught: exit 0, as written."""
    r = _new(tmp_path, "demo")
    assert r.exit_code == 0, r.output
    assert "wrote " + str(tmp_path / "solutions" / "demo" / "mutants" / "scales_x_in_place.diff") in r.output
    assert f"grader validate demo --sandbox local --exercise-root {tmp_path / 'exercises'}" in r.output
    v = CliRunner().invoke(main, ["validate", "demo", "--sandbox", "local", "--exercise-root",
                                  str(tmp_path / "exercises"), "--solutions-root", str(tmp_path / "solutions")],
                           env={"COLUMNS": "200"}, catch_exceptions=False)
    assert v.exit_code == 0, v.output
    rows = {tuple(cell.strip() for cell in line.split("│")[1:4]) for line in v.output.splitlines() if "│" in line}
    assert {("demo.py", "reference", "2/2"), ("demo.py", "stub", "0/2"),
            ("scales_a_copy_in_place.py", "variant", "2/2"), ("scales_x_in_place.diff", "mutant", "0/2")} <= rows


def test_the_new_exercise_follows_the_rules_the_repositorys_exercises_do(tmp_path):
    """The folder rules, the contract table, the NaN-safe scan and the no-assert rule, checked on the scaffold."""
    assert _new(tmp_path, "layer_scale").exit_code == 0
    ex = load_exercise(tmp_path / "exercises" / "layer_scale")
    assert ex.name == "layer_scale" and ex.stub.name == "layer_scale.py"
    check_prompt_and_examples(ex)
    check_stub_and_examples(ex)
    check_corpus_says_what_each_file_is(ex, tmp_path / "solutions")
    check_audit_of_the_corpus(ex, tmp_path / "solutions")
    check_no_bare_assert(ex)
    assert scan_checks(ex.checks_dir) == []
    assert table_problems(ex, tmp_path / "solutions" / "layer_scale" / "contract.toml") == []
    assert "Decisions" in ex.readme.read_text()
    guide = load_guide(ex)  # the interview guide: both kinds of question, tied to the check and the mutant
    assert {q.when for q in guide.questions} == {"failed", "passed"}
    assert guide_problems(ex, guide, tmp_path / "solutions") == []


@pytest.mark.parametrize("existing", ["exercises", "solutions"])
def test_an_existing_name_is_refused_and_nothing_is_touched(tmp_path, existing):
    (tmp_path / existing / "demo").mkdir(parents=True)
    (tmp_path / existing / "demo" / "notes.md").write_text("mine")
    before = _tree(tmp_path)
    r = _new(tmp_path, "demo")
    assert r.exit_code == 2
    assert f"Exercise 'demo' is already there: {tmp_path / existing / 'demo'} exists;" in " ".join(r.output.split())
    assert "never overwrites" in r.output
    assert _tree(tmp_path) == before


@pytest.mark.parametrize("name, why", [
    ("Demo", "must be a Python identifier in lowercase"),
    ("my-exercise", "must be a Python identifier in lowercase"),
    ("2fast", "must be a Python identifier in lowercase"),
    ("../escape", "must be a Python identifier in lowercase"),
    ("class", "is a Python keyword"),
    ("random", "is the name of a module the grader or the sandbox imports"),
    ("probes", "is the name of a module the grader or the sandbox imports"),
])
def test_a_name_that_cannot_be_a_module_is_refused_with_why(tmp_path, name, why):
    r = _new(tmp_path, name)
    assert r.exit_code == 2 and why in " ".join(r.output.split()), r.output
    assert "Traceback" not in r.output
    assert not (tmp_path / "exercises").exists() and not (tmp_path / "solutions").exists()
