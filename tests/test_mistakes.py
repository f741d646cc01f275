"""The mistake record (grader.mistakes): every exercise's is current; validate writes it, compares with it,
and a grading against it names the mistake (the toy exercise, graded for real in the local sandbox)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.corpus import corpus
from grader.errors import ExerciseError
from grader.exercise import load_exercise
from grader.grading import grade
from grader.mistakes import (RECORD_NAME, MistakeRecord, MutantSignature, RecordRefused, build_record, check_function,
                             drift, load_record, short_description, stale_files)
from grader.reports.model import Report
from grader.validation import ExerciseValidation, Verdict, all_exercise_names

TOY = Path(__file__).parent / "fixtures" / "toy"
SOLUTIONS = Path(__file__).parent / "fixtures" / "toy_solutions"


@pytest.mark.parametrize("name", all_exercise_names())
def test_every_exercises_record_is_current(name):
    """Recorded on today's checks, reference and mutants (mutants/ and more_mutants/), byte for byte."""
    ex = load_exercise(name)
    rec = load_record(ex)
    assert rec is not None, f"{name} has no {RECORD_NAME}"
    assert stale_files(rec, ex, corpus(ex, more=True)) == [], (
        f"exercises/{name}/{RECORD_NAME} is stale: run `grader validate --sandbox local --more --record {name}`")


def test_a_change_to_a_check_a_mutant_or_the_reference_makes_a_record_stale(tmp_path):
    shutil.copytree(TOY, tmp_path / "toy")
    shutil.copytree(SOLUTIONS, tmp_path / "solutions")
    ex = load_exercise(tmp_path / "toy")
    items = corpus(ex, tmp_path / "solutions", more=True)
    from grader.mistakes import mutant_signature, sha256_file

    rec = MistakeRecord(exercise="toy", exercise_fingerprint=ex.fingerprint, reference_sha256=sha256_file(items[0].path),
                        checks=["test_scale_small"], mutants=[mutant_signature(i, Report(exercise="toy", graded=True))
                                                              for i in items if i.kind == "mutant"])
    assert stale_files(rec, ex, items) == []
    (tmp_path / "solutions" / "toy" / "mutants" / "uses_mul.py").write_text("def scale(x, factor):\n    return x\n")
    (tmp_path / "solutions" / "toy" / "more_mutants").mkdir()
    (tmp_path / "solutions" / "toy" / "more_mutants" / "new.py").write_text("x = 1\n")
    (tmp_path / "toy" / "checks" / "test_scale.py").write_text("# changed\n", encoding="utf-8")
    changed = stale_files(rec, load_exercise(tmp_path / "toy"), corpus(ex, tmp_path / "solutions", more=True))
    assert changed == ["the exercise's checks, probes or exercise.toml changed", "mutants/uses_mul.py changed",
                       "more_mutants/new.py is not in the record"]


def test_a_malformed_record_is_an_error_naming_the_file_and_field(tmp_path):
    shutil.copytree(TOY, tmp_path / "toy")
    (tmp_path / "toy" / RECORD_NAME).write_text(json.dumps({"exercise": "toy", "mutants": [{"name": 3}]}))
    with pytest.raises(ExerciseError) as e:
        load_record(load_exercise(tmp_path / "toy"))
    assert f"toy/{RECORD_NAME} is not a valid mistake record" in str(e.value)
    assert "[exercise_fingerprint] Field required" in str(e.value) and "[mutants.0.name]" in str(e.value)


def test_descriptions_are_the_first_paragraph_without_the_label():
    text = "Mutant: Scores are q·kᵀ with no\n1/√E scaling.\n\nShould be caught by: test_sdpa_no_mask."
    assert short_description(text, "x") == "Scores are q·kᵀ with no 1/√E scaling."
    assert short_description(None, "no_scaling") == "no_scaling"
    assert check_function("test_m.py::test_rows[3-True]") == "test_rows"
    assert check_function("test_m.py::Test::test_x") == "test_x"


def test_drift_names_each_mutant_whose_signature_moved():
    def sig(name, *checks):
        return MutantSignature(name=name, file=f"mutants/{name}.py", held_in=True, sha256="0", description=name,
                               signature=list(checks))

    rec = MistakeRecord(exercise="t", exercise_fingerprint="f", reference_sha256="r", checks=["a", "b"],
                        mutants=[sig("m", "a"), sig("n", "b")])
    assert drift(rec, [sig("m", "a"), sig("n", "b")]) == []
    assert drift(rec, [sig("m", "b"), sig("new", "a")]) == [
        f"m: signature differs from {RECORD_NAME}: now also fails b; no longer fails a", f"new: not in {RECORD_NAME}"]
    assert drift(None, [sig("m", "a")], name="toy") == [
        f"no {RECORD_NAME}: run `grader validate toy --more --record` to write one"]


def test_no_record_is_built_from_an_ungraded_mutant_or_a_reference_that_lost_points():
    ex = load_exercise(TOY)
    ref = SOLUTIONS / "toy" / "toy.py"
    ok = Report(exercise="toy", graded=True, score=1, max_score=1)
    down = Report(exercise="toy", graded=False, not_graded_reason="engine died")
    result = ExerciseValidation("toy", [Verdict("reference", ref, ok), Verdict("mutant", ref, down)])
    with pytest.raises(RecordRefused, match="not graded: toy.py"):
        build_record(ex, result, ref)
    result.verdicts[0] = Verdict("reference", ref, ok, problem="lost points on x")
    with pytest.raises(RecordRefused, match="lost points on x"):
        build_record(ex, result, ref)


def test_validate_records_compares_and_a_grading_names_the_mistake(tmp_path):
    """End to end on the toy: --record writes the signatures, a later validate warns of drift without
    failing, and grading a mutant in the local sandbox names it; the reference and a variant get nothing."""
    toy = tmp_path / "toy"
    shutil.copytree(TOY, toy)
    args = ["validate", str(toy), "--exercise-root", str(tmp_path), "--sandbox", "local", "--jobs", "2",
            "--solutions-root", str(SOLUTIONS)]
    r = CliRunner().invoke(main, [*args, "--record"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    rec = load_record(load_exercise(toy))
    assert {m.name: m.signature for m in rec.mutants} == {"uses_mul": ["test_scale_property", "test_scale_small"],
                                                          "wrong_for_long": ["test_scale_property"]}

    tampered = rec.model_copy(update={"mutants": [rec.mutants[0].model_copy(update={"signature": ["test_scale_small"]}),
                                                  rec.mutants[1]]})
    (toy / RECORD_NAME).write_text(tampered.model_dump_json())
    r = CliRunner().invoke(main, args, catch_exceptions=False)
    assert r.exit_code == 0, r.output  # drift is a warning, not a failure
    assert "warning: toy: uses_mul: signature differs from mistakes.json: now also fails test_scale_property" in \
        " ".join(r.output.split())
    (toy / RECORD_NAME).write_text(rec.model_dump_json())

    mutant = grade(toy, SOLUTIONS / "toy" / "mutants" / "wrong_for_long.py", sandbox="local")
    assert [(d.mutant, d.matched, d.failed) for d in mutant.diagnosis] == [("wrong_for_long", 1, 1)]
    assert mutant.diagnosis[0].line == "looks like: wrong_for_long (matches 1 of 1 failed check)"
    for correct in (SOLUTIONS / "toy" / "toy.py", SOLUTIONS / "toy" / "variants" / "loop.py"):
        report = grade(toy, correct, sandbox="local")
        assert report.score == report.max_score and report.diagnosis == []


def test_a_real_exercises_mutant_graded_for_real_is_named_from_the_stored_record(tmp_path):
    """attention's stored record, a held-in mutant graded in the local sandbox: the record holds what a
    grading sees, and the panel's copy names the mistake among the ties no check tells apart."""
    ex = load_exercise("attention")
    item = next(i for i in corpus(ex) if i.name == "no_scaling")
    report = grade(ex, item.gradable(tmp_path), sandbox="local")
    assert "no_scaling" in [d.mutant for d in report.diagnosis], report.diagnosis
    assert all(d.matched == d.failed == d.signature for d in report.diagnosis)  # an exact match, tie or not
