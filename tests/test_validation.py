"""grader validate: the verdict rules, on the toy's corpus (tests/fixtures/toy_solutions)."""

import shutil
from pathlib import Path

from click.testing import CliRunner

from grader.cli import main
from grader.host import validation
from grader.host.validation import corpus, validate_exercise
from grader.exercise import load_exercise

TOY = Path(__file__).parent / "fixtures" / "toy"
SOLUTIONS = Path(__file__).parent / "fixtures" / "toy_solutions"

#: A mistake in the toy's reference, as a patch: the factor applied twice.
TWICE = """\
Mutant: multiplies by the factor twice.

--- toy.py
+++ toy.py
@@ -7 +7 @@
-    return x * factor
+    return x * factor * factor
"""


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
    r = CliRunner().invoke(main, ["validate", str(TOY), "--exercise-root", str(TOY.parent), "--sandbox", "local", "--solutions-root", str(solutions),
                                  "--rules", "skip"],  # the toy is a fixture, not a finished exercise
                           catch_exceptions=False)
    assert r.exit_code == 4, r.output
    text = " ".join(r.output.split())
    assert text.count("caught by no check") == 1  # said once, in full
    assert "toy: mutant secretly_correct.py: caught by no check" in text
    assert text.endswith("toy: FAILED: mutant secretly_correct.py (said above)")  # and named in the summary


def test_patch_mutants_are_graded_applied_and_one_that_does_not_apply_is_named(tmp_path):
    """A patch is graded as the reference with its hunks; a stale one is a problem naming its hunk (exit 4),
    and the rest of the corpus is still graded."""
    solutions = tmp_path / "solutions"
    shutil.copytree(SOLUTIONS, solutions)
    mutants = solutions / "toy" / "mutants"
    (mutants / "twice.diff").write_text(TWICE)
    (mutants / "stale.diff").write_text(TWICE.replace("Mutant: multiplies", "Mutant: stale, multiplies")
                                        .replace("-    return x * factor", "-    return factor * x"))
    result = validate_exercise(TOY, sandbox="local", jobs=2, solutions_dir=solutions)
    assert [p for p in result.problems if "stale.diff" in p] == [
        "toy/mutants/stale.diff: hunk 1 (@@ -7,1 +7,1 @@, line 5 of the patch) does not apply to toy.py: "
        "line 7 is '    return x * factor', the patch expects '    return factor * x' "
        "(and those lines are nowhere else in order)."]
    twice = next(v for v in result.verdicts if v.path.name == "twice.diff")
    assert twice.ok and twice.report.score < twice.report.max_score
    assert "twice" in result.catches()["Scales any vector by any factor"]
    assert all(v.ok for v in result.verdicts) and not result.ok
    r = CliRunner().invoke(main, ["validate", str(TOY), "--exercise-root", str(TOY.parent), "--sandbox", "local", "--solutions-root", str(solutions),
                                  "--rules", "skip"], env={"COLUMNS": "300"}, catch_exceptions=False)
    assert r.exit_code == 4 and "toy: toy/mutants/stale.diff: hunk 1" in r.output, r.output


def test_cli_prints_bracketed_names_and_messages_as_text(monkeypatch):
    """Check names and messages are text: rich must not read "[0, 1]" or "[red]" in them as markup."""
    from grader.host import validation
    from grader.reports.model import CheckResult, Report, Status
    from grader.host.validation import ExerciseValidation, Verdict

    check = CheckResult(id="t.py::t", name="Rows [0, 1] are [bold]zero[/bold]", status=Status.FAILED, score=0,
                        max_score=1, visibility="hidden", message="x")
    report = Report(exercise="toy", graded=True, checks=[check], score=0, max_score=1)
    fake = ExerciseValidation("toy", [Verdict("mutant", Path("m[1].py"), report, "lost [red]all[/red]")])
    monkeypatch.setattr(validation, "validate_exercises", lambda *a, **k: iter([fake]))
    monkeypatch.setattr("grader.cli.mistakes_note.note_mistakes", lambda *a, **k: None)  # m[1].py is made up
    r = CliRunner().invoke(main, ["validate", "toy", "--exercise-root", str(TOY.parent), "--sandbox", "local", "--rules", "skip"],
                           env={"COLUMNS": "200"})
    assert r.exit_code == 4, r.output
    for text in ("Rows [0, 1] are [bold]zero[/bold]", "m[1].py", "lost [red]all[/red]"):
        assert text in r.output


def test_one_pool_serves_several_exercises_and_each_result_comes_back_in_order(tmp_path):
    """Two exercises' corpora share the pool; each result holds its own verdicts only."""
    solutions = tmp_path / "solutions"
    shutil.copytree(SOLUTIONS, solutions)
    other = tmp_path / "exercises" / "toy2"
    shutil.copytree(TOY, other)
    toml = other / "exercise.toml"
    toml.write_text(toml.read_text().replace('name = "toy"', 'name = "toy2"'))
    shutil.copytree(solutions / "toy", solutions / "toy2")
    (solutions / "toy2" / "variants" / "loop.py").unlink()
    results = list(validation.validate_exercises([other, TOY], sandbox="local", jobs=2, solutions_dir=solutions))
    assert [r.exercise for r in results] == ["toy2", "toy"]
    assert all(r.ok for r in results), [(v.path.name, v.problem) for r in results for v in r.verdicts]
    assert [len(r.verdicts) for r in results] == [len(corpus(load_exercise(TOY), SOLUTIONS)) - 1,
                                                  len(corpus(load_exercise(TOY), SOLUTIONS))]
    assert all(r.duration_s > 0 for r in results)


def test_the_runtime_reaches_every_grading_and_each_report_records_it(monkeypatch):
    """Every file of the corpus is graded under the one runtime asked for (grade() stands in: no Docker)."""
    from grader.host import validation
    from grader.reports.model import Environment, Report

    seen = []

    def fake_grade(ex, path, **kw):
        seen.append(kw["runtime"])
        return Report(exercise=ex.name, graded=True, environment=Environment(oci_runtime=kw["runtime"]))

    monkeypatch.setattr(validation, "grade", fake_grade)
    result = validate_exercise(TOY, sandbox="docker", solutions_dir=SOLUTIONS, runtime="runsc")
    assert seen == ["runsc"] * len(corpus(load_exercise(TOY), SOLUTIONS))
    assert {v.report.environment.oci_runtime for v in result.verdicts} == {"runsc"}


def test_cli_checks_the_runtime_is_registered_before_grading(monkeypatch):
    from grader.host import validation
    from grader.backends import engine

    class Client:  # an engine that knows runc alone
        def info(self):
            return {"Runtimes": {"runc": {}}}

    graded = []
    monkeypatch.setattr(engine, "connect", lambda timeout=60: Client())
    monkeypatch.setattr(validation, "validate_exercises", lambda *a, **k: graded.append(k) or iter([]))
    r = CliRunner().invoke(main, ["validate", str(TOY), "--exercise-root", str(TOY.parent), "--sandbox", "docker",
                                  "--runtime", "runsc"], env={"COLUMNS": "200"})
    assert r.exit_code == 3 and "no 'runsc' runtime registered" in " ".join(r.output.split()), r.output
    assert graded == []


def test_cli_passes_the_resolved_runtime_to_each_exercise(monkeypatch):
    """Resolved once, from $GRADER_RUNTIME when --runtime is absent; the local sandbox has none."""
    from grader.host import validation
    from grader.cli import leftovers
    from grader.backends import engine

    class Client:
        def info(self):
            return {"Runtimes": {"runc": {}, "runsc": {}}}

    calls = []
    monkeypatch.setenv("GRADER_RUNTIME", "runsc")
    monkeypatch.setattr(engine, "connect", lambda timeout=60: Client())
    monkeypatch.setattr(leftovers, "reap_leftovers", lambda console: 0)

    def fake_validate(names, **k):
        calls.append(k["runtime"])
        return iter([validation.ExerciseValidation(str(name)) for name in names])

    monkeypatch.setattr(validation, "validate_exercises", fake_validate)
    for sandbox in ("docker", "local"):
        r = CliRunner().invoke(main, ["validate", str(TOY), "--exercise-root", str(TOY.parent), "--sandbox", sandbox,
                                      "--rules", "skip"])
        assert r.exit_code == 0, r.output
    assert calls == ["runsc", None]


def test_an_undocumented_check_is_a_problem_by_its_warnings_code_not_its_words():
    from grader.reports.model import Report
    from grader.reports.warning import ReportWarning, WarningCode

    def verdict(*warnings):
        return validation.Verdict("reference", Path("solution.py"), Report(exercise="toy", graded=True,
                                                                             warnings=list(warnings)))

    reworded = ReportWarning(code=WarningCode.UNDOCUMENTED_CHECK, message="check test_a.py::test_x: say what it holds")
    lookalike = ReportWarning(code=WarningCode.UNCLASSIFIED, message="check test_b.py::test_y has no docstring")
    assert validation.undocumented_checks([verdict(reworded, lookalike), verdict(reworded)]) == [reworded.message]
