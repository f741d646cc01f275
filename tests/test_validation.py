"""grader validate: the verdict rules, on the toy's corpus (tests/fixtures/toy_solutions)."""

import shutil
from pathlib import Path

from click.testing import CliRunner

from grader.cli import main
from grader.validation import corpus, validate_exercise
from grader.exercise import load_exercise

TOY = Path(__file__).parent / "fixtures" / "toy"
SOLUTIONS = Path(__file__).parent / "fixtures" / "toy_solutions"


def test_corpus_lists_reference_stub_variants_and_mutants():
    kinds = [(kind, p.name if p else None) for kind, p in corpus(load_exercise(TOY), SOLUTIONS)]
    assert kinds == [("reference", "toy.py"), ("stub", None), ("variant", "loop.py"),
                     ("mutant", "uses_mul.py"), ("mutant", "wrong_for_long.py")]


def test_more_mutants_join_only_when_asked(tmp_path):
    solutions = tmp_path / "solutions"
    shutil.copytree(SOLUTIONS, solutions)
    (solutions / "toy" / "more_mutants").mkdir()
    (solutions / "toy" / "more_mutants" / "extra.py").write_text("def scale(x, factor):\n    return x\n")
    ex = load_exercise(TOY)
    assert "extra.py" not in [p.name for _, p in corpus(ex, solutions) if p]
    assert ("mutant", solutions / "toy" / "more_mutants" / "extra.py") in corpus(ex, solutions, more=True)


def test_a_sound_corpus_validates_and_reports_what_each_check_catches():
    result = validate_exercise(TOY, sandbox="local", jobs=2, solutions_dir=SOLUTIONS)
    assert result.ok, [(v.path.name, v.problem) for v in result.verdicts]
    catches = result.catches()
    assert catches["Scales any vector by any factor"] == ["uses_mul", "wrong_for_long"]
    assert catches["Rejects a non-finite factor with ValueError naming it"] == []


def test_a_mutant_nothing_catches_and_a_stub_that_scores_are_named(tmp_path):
    solutions = tmp_path / "solutions"
    shutil.copytree(SOLUTIONS, solutions)
    shutil.copy(SOLUTIONS / "toy" / "toy.py", solutions / "toy" / "mutants" / "secretly_correct.py")
    (solutions / "toy" / "variants" / "wrong.py").write_text("def scale(x, factor):\n    return x\n")
    result = validate_exercise(TOY, sandbox="local", jobs=2, solutions_dir=solutions)
    problems = {v.path.name: v.problem for v in result.verdicts if not v.ok}
    assert problems.keys() == {"secretly_correct.py", "wrong.py"}
    assert problems["secretly_correct.py"] == "caught by no check (full marks)"
    assert problems["wrong.py"].startswith("lost points on Scales a small tensor (failed")


def test_missing_reference_and_mutants_are_problems(tmp_path):
    result = validate_exercise(TOY, sandbox="local", solutions_dir=tmp_path)
    assert not result.ok
    assert any("no reference solution" in p for p in result.problems)
    assert any("no mutants" in p for p in result.problems)


def test_cli_exits_4_naming_the_exercise_and_file(tmp_path):
    solutions = tmp_path / "solutions"
    shutil.copytree(SOLUTIONS, solutions)
    shutil.copy(SOLUTIONS / "toy" / "toy.py", solutions / "toy" / "mutants" / "secretly_correct.py")
    r = CliRunner().invoke(main, ["validate", str(TOY), "--sandbox", "local", "--solutions", str(solutions)],
                           catch_exceptions=False)
    assert r.exit_code == 4, r.output
    assert "toy: mutant secretly_correct.py: caught by no check" in " ".join(r.output.split())


def test_cli_prints_bracketed_names_and_messages_as_text(monkeypatch):
    """Check names and messages are text: rich must not read "[0, 1]" or "[red]" in them as markup."""
    from grader import validation
    from grader.reports.model import CheckResult, Report, Status
    from grader.validation import ExerciseValidation, Verdict

    check = CheckResult(id="t.py::t", name="Rows [0, 1] are [bold]zero[/bold]", status=Status.FAILED, score=0,
                        max_score=1, visibility="hidden", message="x")
    report = Report(exercise="toy", graded=True, checks=[check], score=0, max_score=1)
    fake = ExerciseValidation("toy", [Verdict("mutant", Path("m[1].py"), report, "lost [red]all[/red]")])
    monkeypatch.setattr(validation, "validate_exercise", lambda *a, **k: fake)
    r = CliRunner().invoke(main, ["validate", "toy", "--sandbox", "local"], env={"COLUMNS": "200"})
    assert r.exit_code == 4, r.output
    for text in ("Rows [0, 1] are [bold]zero[/bold]", "m[1].py", "lost [red]all[/red]"):
        assert text in r.output
