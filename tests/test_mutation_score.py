"""grader validate --mutation: the classification rules, recorded equivalents, the toy graded end to end, exit codes."""

import io
import json
import shutil
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("cosmic_ray", reason="the mutation extra (cosmic-ray) is not installed")

from grader.cli import main  # noqa: E402
from grader.errors import ExerciseError  # noqa: E402
from grader.exercise import load_exercise  # noqa: E402
from grader.mutation import score as score_module  # noqa: E402
from grader.mutation.equivalents import load_equivalents, stale  # noqa: E402
from grader.mutation.generate import generate  # noqa: E402
from grader.mutation.score import Outcome, classify, score_exercises  # noqa: E402
from grader.reports.model import CheckResult, Report, Status, Visibility  # noqa: E402

TOY = Path(__file__).parent / "fixtures" / "toy"
SOLUTIONS = Path(__file__).parent / "fixtures" / "toy_solutions"

#: A toy reference with a loop whose mutants hang (a call deadline), and two that change nothing a check sees.
LOOPING = '''\
import math


def scale(x, factor):
    if not math.isfinite(factor):
        raise ValueError(f"factor must be finite, got {factor}")
    done = False
    while not done:
        done = True
    return x * factor
'''


def check(name: str, status: Status, score: float) -> CheckResult:
    return CheckResult(id=f"test_toy.py::{name}", name=name, status=status, score=score, max_score=1.0,
                       visibility=Visibility.VISIBLE)


def report(*checks: CheckResult, graded: bool = True, reason: str | None = None) -> Report:
    return Report(exercise="toy", graded=graded, not_graded_reason=reason, checks=list(checks),
                  score=sum(c.score for c in checks), max_score=sum(c.max_score for c in checks))


def test_classification_rules():
    ok, skipped = check("a", Status.PASSED, 1.0), check("gpu", Status.SKIPPED, 0.0)
    skipped.max_score = 0.0
    assert classify(report(ok, skipped)) == (Outcome.SURVIVED, [], None)
    assert classify(report(ok, check("b", Status.FAILED, 0.0)))[:2] == (Outcome.KILLED, ["b"])
    assert classify(report(ok, check("b", Status.ERROR, 0.5)))[:2] == (Outcome.KILLED, ["b"])
    assert classify(report(check("a", Status.TIMEOUT, 0.0), check("b", Status.TIMEOUT, 0.0)))[:2] == \
        (Outcome.TIMED_OUT, ["a", "b"])
    # A check that failed outright beside one that timed out: the checks told it apart, not only the clock.
    assert classify(report(check("a", Status.TIMEOUT, 0.0), check("b", Status.FAILED, 0.0)))[0] is Outcome.KILLED
    assert classify(report(graded=False, reason="the judge died")) == (Outcome.NOT_GRADED, [], "the judge died")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_equivalents_load_and_name_a_bad_file(tmp_path):
    assert load_equivalents(tmp_path / "absent.toml") == []
    good = write(tmp_path / "e.toml", """\
        [[equivalent]]
        id = "drop_not@8:11"
        line = "while not done:"
        reason = "the loop runs once either way"
        """)
    [record] = load_equivalents(good)
    assert (record.id, record.line) == ("drop_not@8:11", "while not done:")
    missing = write(tmp_path / "m.toml", '[[equivalent]]\nid = "x@1:1"\nline = "y"\n')
    with pytest.raises(ExerciseError, match=r"m\.toml(.|\n)*\[equivalent\.0\.reason\] Field required"):
        load_equivalents(missing)
    with pytest.raises(ExerciseError, match=r"b\.toml: not valid TOML"):
        load_equivalents(write(tmp_path / "b.toml", "[[equivalent]\n"))
    twice = write(tmp_path / "t.toml", '[[equivalent]]\nid = "x@1:1"\nline = "y"\nreason = "r"\n' * 2)
    with pytest.raises(ExerciseError, match=r"x@1:1 is recorded twice"):
        load_equivalents(twice)


def test_a_record_whose_line_moved_or_whose_mutant_is_gone_is_stale(tmp_path):
    records = load_equivalents(write(tmp_path / "e.toml", """\
        [[equivalent]]
        id = "drop_not@8:11"
        line = "while not done:"
        reason = "fine"

        [[equivalent]]
        id = "mul_to_div@10:14"
        line = "return x / factor"
        reason = "the line was edited since"

        [[equivalent]]
        id = "add_to_sub@3:1"
        line = "x"
        reason = "no such mutant"
        """))
    found = stale(records, generate(LOOPING, "toy.py"))
    assert [(s.id, s.why) for s in found] == [
        ("mul_to_div@10:14", "line 10 now reads 'return x * factor', recorded 'return x / factor'"),
        ("add_to_sub@3:1", "no mutant has this id any more"),
    ]


@pytest.fixture(scope="module")
def looping_run(tmp_path_factory):
    """The looping toy reference, graded with all its mutants in the local sandbox, one survivor recorded."""
    solutions = tmp_path_factory.mktemp("solutions")
    write(solutions / "toy" / "toy.py", LOOPING)
    write(solutions / "toy" / "equivalent_mutants.toml", """\
        [[equivalent]]
        id = "false_to_true@7:12"
        line = "done = False"
        reason = "the loop body only sets done; skipping it changes nothing a caller sees"

        [[equivalent]]
        id = "mul_to_div@10:14"
        line = "return x / factor"
        reason = "stale: the line reads x * factor"
        """)
    return next(score_exercises([TOY], sandbox="local", jobs=2, solutions_dir=solutions)), solutions


@pytest.mark.slow
def test_the_toy_mutants_are_killed_survive_time_out_or_are_recorded(looping_run):
    result, _ = looping_run
    outcomes = {r.mutant.id: r.outcome for r in result.results}
    assert outcomes == {
        "mul_to_div@10:14": Outcome.KILLED,  # graded: its record is stale and excuses nothing
        "mul_to_pow@10:14": Outcome.KILLED,
        "drop_not@5:8": Outcome.KILLED,
        "drop_not@8:11": Outcome.SURVIVED,
        "true_to_false@9:16": Outcome.TIMED_OUT,
        "false_to_true@7:12": Outcome.EQUIVALENT,
        "drop_statement@6:9": Outcome.KILLED,
        "drop_statement@9:9": Outcome.TIMED_OUT,
    }, {k: v.value for k, v in outcomes.items()}
    assert [d.id for d in result.dropped] == ["add_not@5:8", "add_not@8:11"]
    assert [s.id for s in result.stale] == ["mul_to_div@10:14"]
    assert result.score == pytest.approx(4 / 7)  # killed / (8 - 1 equivalent)
    [survivor] = result.survivors
    assert "-    while not done:\n+    while done:\n" in survivor.mutant.diff
    assert result.problems == []


@pytest.mark.slow
def test_cli_writes_json_and_exits_4_on_a_stale_record(looping_run, tmp_path):
    _, solutions = looping_run
    out = tmp_path / "m.json"
    r = CliRunner().invoke(main, ["validate", str(TOY), "--exercise-root", str(TOY.parent), "--sandbox", "local", "--solutions-root", str(solutions),
                                  "--mutation", "--max-mutants", "1", "--json", str(out)], catch_exceptions=False)
    assert r.exit_code == 4, r.output
    assert "mul_to_div@10:14: stale, line 10 now reads 'return x * factor'" in r.output
    assert json.loads(out.read_text())["complete"] is True
    record = json.loads(out.read_text())["exercises"][0]
    assert record["exercise"] == "toy" and record["stale"][0]["id"] == "mul_to_div@10:14"
    assert len([m for m in record["mutants"] if m["outcome"] != "equivalent"]) <= 1


def _fake_grade(outcome_of):
    """A stand-in for grade(): full marks for the reference's text, else what ``outcome_of(source)`` says."""
    def grade(ex, path, **_):
        source = Path(path).read_text()
        if source == (SOLUTIONS / "toy" / "toy.py").read_text():
            return report(check("a", Status.PASSED, 1.0))
        return outcome_of(source)
    return grade


def invoke(*args):
    return CliRunner().invoke(main, ["validate", str(TOY), "--exercise-root", str(TOY.parent), "--sandbox", "local", "--solutions-root", str(SOLUTIONS),
                                     "--mutation", *args], catch_exceptions=False)


def test_cli_exit_codes(monkeypatch):
    monkeypatch.setattr(score_module, "grade", _fake_grade(lambda s: report(check("a", Status.FAILED, 0.0))))
    assert invoke().exit_code == 0
    # A survivor is for the author to read, not a failure, unless --min-score makes it one.
    monkeypatch.setattr(score_module, "grade", _fake_grade(
        lambda s: report(check("a", Status.PASSED if "raise" not in s else Status.FAILED, 1.0 if "raise" not in s else 0))))
    r = invoke()
    assert r.exit_code == 0 and "survived drop_statement@6:9" in r.output, r.output
    r = invoke("--min-score", "0.9")
    assert r.exit_code == 4 and "mutation score 75% is below 90%" in r.output, r.output
    monkeypatch.setattr(score_module, "grade", _fake_grade(lambda s: report(graded=False, reason="judge died")))
    r = invoke()
    assert r.exit_code == 3 and "not graded mul_to_div@7:14: judge died" in r.output, r.output


def test_mutation_options_need_mutation_and_the_extra():
    r = CliRunner().invoke(main, ["validate", str(TOY), "--exercise-root", str(TOY.parent), "--sandbox", "local",
                                  "--max-mutants", "3"])
    assert r.exit_code == 2 and "go with --mutation" in r.output


def test_without_cosmic_ray_it_says_which_extra_to_install(monkeypatch):
    for name in [m for m in sys.modules if m.startswith(("grader.mutation.", "cosmic_ray"))]:
        if name != "grader.mutation.command":
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "cosmic_ray", None)  # import cosmic_ray now raises ImportError
    r = invoke()
    assert r.exit_code == 2 and "pip install -c constraints.txt -e '.[mutation]'" in r.output, r.output


def test_a_reference_not_graded_exits_3_by_the_results_flag_not_its_problems_words(monkeypatch):
    """Issue 28: the exit status came from matching "the reference was not graded" in the problems' text."""
    reference = (SOLUTIONS / "toy" / "toy.py").read_text()

    def grade(ex, path, **_):  # the reference's grading fails; every mutant is graded and killed
        if Path(path).read_text() == reference:
            return report(graded=False, reason="the engine went away")
        return report(check("a", Status.FAILED, 0.0))

    monkeypatch.setattr(score_module, "grade", grade)
    [result] = score_exercises([TOY], sandbox="local", solutions_dir=SOLUTIONS)
    assert result.reference_not_graded and all(r.outcome is Outcome.KILLED for r in result.results)
    result.problems = [p.replace("the reference was not graded", "reworded") for p in result.problems]
    monkeypatch.setattr(score_module, "score_exercises", lambda *a, **k: iter([result]))
    r = invoke()
    assert r.exit_code == 3, r.output


def test_json_is_written_after_each_exercise_so_a_stopped_run_keeps_what_it_graded(monkeypatch, tmp_path):
    """A long run (every mutant of 27 exercises) stopped midway keeps the exercises it finished, marked incomplete."""
    from rich.console import Console

    from grader.mutation.command import run_mutation

    monkeypatch.setattr(score_module, "grade", _fake_grade(lambda s: report(check("a", Status.FAILED, 0.0))))
    real = score_module.score_exercises

    def stopped_after_one(specs, **kw):
        yield next(real(specs[:1], **kw))
        raise KeyboardInterrupt  # the panel's Ctrl-C, or a CI step's timeout, before the second exercise

    monkeypatch.setattr(score_module, "score_exercises", stopped_after_one)
    out = tmp_path / "m.json"
    with pytest.raises(KeyboardInterrupt):
        run_mutation(Console(file=io.StringIO()), [load_exercise(TOY), load_exercise(TOY)], sandbox="local", jobs=1,
                     seed=None, solutions_dir=SOLUTIONS, max_mutants=None, json_path=out, min_score=None,
                     runtime=None, gpus=None)
    record = json.loads(out.read_text())
    assert record["complete"] is False
    assert [e["exercise"] for e in record["exercises"]] == ["toy"] and record["exercises"][0]["counts"]["killed"] > 0
