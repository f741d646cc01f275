"""`grader new NAME`: an exercise that follows every authoring rule (grader.authoring) and validates as written."""

from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.authoring import Rule, check_exercise
from grader.cli import main
from grader.exercise import load_exercise
from grader.scaffold import solution_files


def _new(root: Path, name: str):
    """``grader new NAME`` into ``root``'s exercises/ and solutions/, as an author outside the repository would."""
    return CliRunner().invoke(main, ["new", name, "--exercise-root", str(root / "exercises"),
                                     "--solutions-root", str(root / "solutions")], catch_exceptions=False)


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_grader_new_then_grader_validate_passes(tmp_path):
    """Outside the repository, as written: the authoring rules find no error (two warnings: the prompt is still the
    template, and no mistakes.json until one is recorded), the reference and both variants full marks, the stub zero, all six mutants caught."""
    r = _new(tmp_path, "demo")
    assert r.exit_code == 0, r.output
    assert "wrote " + str(tmp_path / "solutions" / "demo" / "mutants" / "scales_x_in_place.diff") in r.output
    assert f"grader validate demo --sandbox local --exercise-root {tmp_path / 'exercises'}" in r.output
    v = CliRunner().invoke(main, ["validate", "demo", "--exercise-root", str(tmp_path / "exercises"),
                                  "--solutions-root", str(tmp_path / "solutions"), "--sandbox", "local", "--jobs", "2"],
                           env={"COLUMNS": "200"}, catch_exceptions=False)
    assert v.exit_code == 0, v.output
    assert "demo: authoring rules: no finding fails it (2 warning(s))" in v.output
    rows = {tuple(cell.strip() for cell in line.split("│")[1:4]) for line in v.output.splitlines() if "│" in line}
    mutants = sorted(p.rsplit("/", 1)[1] for p in solution_files("demo") if p.startswith("mutants/"))
    assert len(mutants) == 6
    assert {("demo.py", "reference", "3/3"), ("demo.py", "stub", "0/3"), ("scales_a_copy_in_place.py", "variant", "3/3"),
            ("adds_scaled_x_to_zeros.py", "variant", "3/3")} <= rows
    caught = {file: score for file, kind, score in rows if kind == "mutant"}
    assert sorted(caught) == mutants and all(score != "3/3" for score in caught.values()), caught


def test_the_new_exercise_follows_every_authoring_rule(tmp_path):
    """The rules the repository's exercises follow (grader.authoring), checked on the scaffold: no error; two
    warnings: its prompt still says it is the template, and the mistake record, which only a grading can write
    (tests/test_authoring.py shows it clean with its own introduction and a record)."""
    assert _new(tmp_path, "layer_scale").exit_code == 0
    ex = load_exercise(tmp_path / "exercises" / "layer_scale")
    assert ex.name == "layer_scale" and ex.stub.name == "layer_scale.py"
    found = check_exercise(ex, tmp_path / "solutions")
    assert [f.rule for f in found] == [Rule.PROMPT_TEMPLATE, Rule.RECORD_MISSING], [str(f) for f in found]
    assert not any(f.is_error for f in found)


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
