"""The mistake record (grader.hindsight.records): every exercise's is current; validate writes it, compares with it,
and a grading against it names the mistake (the toy exercise, graded for real in the local sandbox)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.authoring import Concern, Rule
from grader.cli import main
from grader.corpus import corpus
from grader.errors import ExerciseError
from grader.exercise import GpuPolicy, load_exercise
from grader.host.grading import grade
from grader.hindsight.records import RECORD_NAME, Loss, Lost, MistakeRecord, MutantSignature, Signature, load_record
from grader.hindsight.recording import RecordRefused, build_record, drift, short_description, stale_files
from grader.reports.model import Report, check_function
from grader.wire.grant import Flavor
from grader.host.validation import ExerciseValidation, Verdict, all_exercise_names
from tests.authoring_rules import findings, holds

TOY = Path(__file__).parent / "fixtures" / "toy"
SOLUTIONS = Path(__file__).parent / "fixtures" / "toy_solutions"


#: GPU-required exercises whose cuda record has not been made yet: a record is written by grading every mutant
#: with a GPU (`grader validate NAME --gpus all --more --record`). Each name here is reported as a skip saying so;
#: once its record exists, the test below fails until the name is taken out. flash_attention's and h2d_overlap's
#: were recorded on an H200 (docs/gpu.md, "What has and has not run on a GPU") and must be again after issue 36 changed their probes and
#: checks/ (no GPU was lent to that task); a new GPU-required exercise waiting for a GPU goes here.
NO_RECORD_YET: dict[str, str] = {
    "flash_attention": "its probes' replies gained declared shapes (checks/replies.py), so the H200 record went stale",
    "h2d_overlap": "its probes now record in a ledger and declare their reply shapes, so the H200 record went stale",
}


@pytest.mark.parametrize("name", all_exercise_names())
def test_every_exercises_record_is_current(name):
    """Recorded on today's checks, reference and mutants (mutants/ and more_mutants/), byte for byte; a
    GPU-required exercise's record is a cuda one only: the rules of grader/authoring/records.py, whose findings
    are warnings for `grader validate` (an author mid-edit) and failures here (a finished exercise)."""
    found = findings(name, Concern.RECORDS)
    if name in NO_RECORD_YET:
        assert [f.rule for f in found] == [Rule.RECORD_MISSING], (
            f"exercises/{name}/{RECORD_NAME} exists now: take {name} out of NO_RECORD_YET")
        pytest.skip(f"no {RECORD_NAME} yet for {name}: {NO_RECORD_YET[name]} (`grader validate {name} --gpus all "
                    "--more --record` on a GPU machine writes it)")
    holds(found)


def test_no_record_yet_names_only_gpu_required_exercises():
    for name in NO_RECORD_YET:
        assert load_exercise(name).config.exercise.gpu is GpuPolicy.REQUIRED, name


def test_a_change_to_a_check_a_mutant_or_the_reference_makes_a_record_stale(tmp_path):
    shutil.copytree(TOY, tmp_path / "toy")
    shutil.copytree(SOLUTIONS, tmp_path / "solutions")
    ex = load_exercise(tmp_path / "toy")
    items = corpus(ex, tmp_path / "solutions", more=True)
    from grader.hindsight.recording import mutant_signature, sha256_file

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


def sig(name, *checks, flavor=Flavor.CPU):
    return MutantSignature(name=name, file=f"mutants/{name}.py", held_in=True, sha256="0", description=name,
                           signatures={flavor: list(checks)})


def failing(*checks: str) -> Signature:
    """A signature of wrong answers on ``checks`` (how a format-1 list of names reads)."""
    return Signature(lost={c: Lost(how=Loss.FAILED) for c in checks})


def test_drift_names_each_mutant_whose_signature_moved():
    rec = MistakeRecord(exercise="t", exercise_fingerprint="f", reference_sha256="r", checks={Flavor.CPU: ["a", "b"]},
                        mutants=[sig("m", "a"), sig("n", "b")])
    assert drift(rec, [sig("m", "a"), sig("n", "b")]) == []
    assert drift(rec, [sig("m", "b"), sig("new", "a")]) == [
        f"m: signature differs from {RECORD_NAME}: now also fails b; no longer fails a", f"new: not in {RECORD_NAME}"]
    assert drift(None, [sig("m", "a")], exercise="t") == [
        f"no {RECORD_NAME}: run `grader validate t --more --record` to write one"]
    timed_out = sig("m", "a").model_copy(update={"signatures": {Flavor.CPU: Signature(lost={"a": Lost(how=Loss.TIMEOUT)})}})
    assert drift(rec, [timed_out, sig("n", "b")]) == [
        f"m: signature differs from {RECORD_NAME}: loses differently a (failed -> timeout)"]
    old = rec.model_copy(update={"schema_version": 1})
    assert drift(old, [sig("m", "a"), sig("n", "b")])[0].startswith(f"{RECORD_NAME} is format 1")
    assert drift(rec.model_copy(update={"schema_version": 3}), [sig("m", "a"), sig("n", "b")]) == [
        f"{RECORD_NAME} is format 3: it holds no evidence of how each check failed, so gradings name no mistake from "
        "it; write it again with `grader validate NAME --more --record`"]
    said = sig("m", "a").model_copy(update={"signatures": {Flavor.CPU: Signature(lost={"a": Lost(
        how=Loss.FAILED, evidence=["a: got 1.0"])})}})
    recorded = rec.model_copy(update={"mutants": [said, sig("n", "b")]})
    assert drift(recorded, [said, sig("n", "b")]) == []
    other = said.model_copy(update={"signatures": {Flavor.CPU: Signature(lost={"a": Lost(
        how=Loss.FAILED, evidence=["a: got 3.0"])})}})
    assert drift(recorded, [other, sig("n", "b")]) == [
        f"m: signature differs from {RECORD_NAME}: loses differently a (failed: a: got 1.0 -> failed: a: got 3.0)"]


def test_losses_say_how_each_check_was_lost_and_a_parametrized_one_its_most_telling_way():
    from grader.hindsight.records import losses
    from grader.reports.model import CheckResult, Status, Visibility

    def check(cid, status, **kw):
        return CheckResult(id=cid, name=cid, status=status, score=0 if status is not Status.PASSED else 1,
                           max_score=1, visibility=Visibility.VISIBLE, **kw)

    report = Report(exercise="x", graded=True, checks=[
        check("t.py::test_rows[1]", Status.FAILED), check("t.py::test_rows[2]", Status.TIMEOUT),
        check("t.py::test_raise", Status.ERROR, raised="TypeError"), check("t.py::test_crash", Status.ERROR),
        check("t.py::test_sdpa", Status.FAILED, penalty="forbidden", forbidden=["torch.x"]),
        check("t.py::test_gpu", Status.SKIPPED), check("t.py::test_ok", Status.PASSED),
        check("t.py::test_broken", Status.CHECK_ERROR)])
    assert losses(report).lost == {
        "test_rows": Lost(how=Loss.TIMEOUT, evidence=["[1] ", "[2] timeout"]),
        "test_raise": Lost(how=Loss.ERROR, detail="TypeError", evidence=["raised TypeError"]),
        "test_crash": Lost(how=Loss.ERROR, evidence=["crashed"]),
        "test_sdpa": Lost(how=Loss.FORBIDDEN, detail="torch.x", evidence=["forbidden"])}


def test_a_gpu_validation_is_compared_with_the_cuda_record_only():
    both = MistakeRecord(exercise="t", exercise_fingerprint="f", reference_sha256="r",
                         checks={Flavor.CPU: ["a"], Flavor.CUDA: ["a", "gpu"]},
                         mutants=[MutantSignature(name="m", file="mutants/m.py", held_in=True, sha256="0",
                                                  description="m", signatures={Flavor.CPU: ["a"],
                                                                               Flavor.CUDA: ["a", "gpu"]})])
    assert drift(both, [sig("m", "a", "gpu", flavor=Flavor.CUDA)], Flavor.CUDA) == []
    assert drift(both, [sig("m", "a", flavor=Flavor.CUDA)], Flavor.CUDA) == [
        f"m: signature differs from {RECORD_NAME} (cuda): no longer fails gpu"]
    cpu_only = MistakeRecord(exercise="t", exercise_fingerprint="f", reference_sha256="r", checks={Flavor.CPU: ["a"]},
                             mutants=[sig("m", "a")])
    assert drift(cpu_only, [sig("m", "a", "gpu", flavor=Flavor.CUDA)], Flavor.CUDA, exercise="t") == [
        f"no cuda record in {RECORD_NAME} (it holds cpu): run `grader validate t --more --record --gpus all` to "
        "write one"]


def test_a_record_from_before_flavours_reads_as_the_cpu_record_and_each_mutant_holds_every_flavour():
    old = {"schema_version": 1, "exercise": "t", "exercise_fingerprint": "f", "reference_sha256": "r",
           "checks": ["a"], "mutants": [{"name": "m", "file": "mutants/m.py", "held_in": True, "sha256": "0",
                                         "description": "m", "signature": ["a"]}]}
    rec = MistakeRecord.model_validate(old)
    assert rec.flavors == [Flavor.CPU] and rec.mutants[0].signature(Flavor.CPU) == failing("a")
    assert rec.mutants[0].signature(Flavor.CUDA) is None
    assert json.loads(rec.model_dump_json(exclude_none=True))["mutants"][0]["signatures"] == {
        "cpu": {"lost": {"a": {"how": "failed"}}}}
    with pytest.raises(ValueError, match="mutant m is recorded for cpu, the record for cpu, cuda"):
        MistakeRecord(exercise="t", exercise_fingerprint="f", reference_sha256="r",
                      checks={Flavor.CPU: ["a"], Flavor.CUDA: ["a"]}, mutants=[sig("m", "a")])


def test_recording_one_flavour_keeps_the_other_only_while_it_holds(tmp_path):
    shutil.copytree(TOY, tmp_path / "toy")
    shutil.copytree(SOLUTIONS, tmp_path / "solutions")
    ex = load_exercise(tmp_path / "toy")
    items = corpus(ex, tmp_path / "solutions", more=True)
    from grader.hindsight.recording import merge_record, sha256_file

    def record(flavor, checks):
        mutants = [MutantSignature(name=i.name, file=f"mutants/{i.path.name}", held_in=True, sha256=sha256_file(i.path),
                                   description=i.name, signatures={flavor: checks}) for i in items if i.kind == "mutant"]
        return MistakeRecord(exercise="toy", exercise_fingerprint=ex.fingerprint,
                             reference_sha256=sha256_file(items[0].path), checks={flavor: checks}, mutants=mutants)

    cpu, cuda = record(Flavor.CPU, ["test_scale_small"]), record(Flavor.CUDA, ["test_scale_small", "test_gpu"])
    merged, dropped = merge_record(cuda, cpu, ex, items)
    assert dropped == [] and merged.flavors == [Flavor.CPU, Flavor.CUDA]
    assert list(json.loads(merged.model_dump_json())["checks"]) == ["cpu", "cuda"]
    assert all(m.signature(Flavor.CPU) == failing("test_scale_small")
               and m.signature(Flavor.CUDA) == failing("test_scale_small", "test_gpu")
               for m in merged.mutants)
    (tmp_path / "toy" / "checks" / "test_scale.py").write_text("# changed\n", encoding="utf-8")
    changed = load_exercise(tmp_path / "toy")
    merged, dropped = merge_record(record(Flavor.CUDA, ["x"]), cpu, changed, items)
    assert merged.flavors == [Flavor.CUDA]
    assert dropped == ["dropped the cpu record (the exercise's checks, probes or exercise.toml changed): write it "
                       "again with `grader validate toy --more --record`"]


def test_no_record_is_built_from_an_ungraded_mutant_or_a_reference_that_lost_points():
    ex = load_exercise(TOY)
    ref = SOLUTIONS / "toy" / "toy.py"
    ok = Report(exercise="toy", graded=True, score=1, max_score=1)
    down = Report(exercise="toy", graded=False, not_graded_reason="engine died")
    result = ExerciseValidation("toy", [Verdict("reference", ref, ok), Verdict("mutant", ref, down)])
    with pytest.raises(RecordRefused, match="not graded: toy.py"):
        build_record(ex, result.verdicts, result.problems, ref)
    result.verdicts[0] = Verdict("reference", ref, ok, problem="lost points on x")
    with pytest.raises(RecordRefused, match="lost points on x"):
        build_record(ex, result.verdicts, result.problems, ref)
    from grader.reports.model import CheckResult, Status, Visibility

    broken = Report(exercise="toy", graded=False, not_graded_reason="a check raised", checks=[CheckResult(
        id="t.py::c", name="Doubles", status=Status.CHECK_ERROR, score=0, max_score=1, visibility=Visibility.VISIBLE)])
    result = ExerciseValidation("toy", [Verdict("reference", ref, ok), Verdict("mutant", ref, broken)])
    with pytest.raises(RecordRefused, match=r"check errors \(a bug in the checks, not a signature\): toy.py \(Doubles\)"):
        build_record(ex, result.verdicts, result.problems, ref)


def test_no_cuda_record_is_built_from_a_grading_that_skipped_a_check():
    from grader.reports.model import CheckResult, Status, Visibility

    ex = load_exercise(TOY)
    ref = SOLUTIONS / "toy" / "toy.py"
    skipped = CheckResult(id="t.py::test_gpu", name="gpu", status=Status.SKIPPED, score=0, max_score=1,
                          visibility=Visibility.HIDDEN, message="no GPU in the sandbox")
    ok = Report(exercise="toy", graded=True, score=1, max_score=1, checks=[skipped])
    result = ExerciseValidation("toy", [Verdict("reference", ref, ok)])
    # Without a GPU, a GPU check skips.
    assert build_record(ex, result.verdicts, result.problems, ref).flavors == [Flavor.CPU]
    with pytest.raises(RecordRefused, match="skipped with GPUs given \\(toy.py\\)"):
        build_record(ex, result.verdicts, result.problems, ref, Flavor.CUDA)


def test_validate_records_compares_and_a_grading_names_the_mistake(tmp_path):
    """End to end on the toy: --record writes the signatures, a later validate warns of drift without
    failing, and grading a mutant in the local sandbox names it; the reference and a variant get nothing."""
    toy = tmp_path / "toy"
    shutil.copytree(TOY, toy)
    args = ["validate", str(toy), "--exercise-root", str(tmp_path), "--sandbox", "local", "--jobs", "2",
            "--solutions-root", str(SOLUTIONS), "--rules", "skip"]  # the toy is a fixture, not a finished exercise
    r = CliRunner().invoke(main, [*args, "--record"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    rec = load_record(load_exercise(toy))
    assert rec.schema_version == 4 and rec.flavors == [Flavor.CPU]
    mul = Lost(how=Loss.FORBIDDEN, detail="torch.mul", evidence=["forbidden"])
    assert {m.name: m.signature(Flavor.CPU).lost for m in rec.mutants} == {  # uses_mul loses its credit to the forbidden API
        "uses_mul": {"test_scale_property": mul, "test_scale_small": mul},
        "wrong_for_long": {"test_scale_property": Lost(how=Loss.FAILED, evidence=[
            rec.mutants[1].signature(Flavor.CPU).lost["test_scale_property"].evidence[0]])}}
    assert rec.mutants[1].signature(Flavor.CPU).lost["test_scale_property"].evidence[0].startswith(
        "Tensor-likes are not close!")  # what the check said: the evidence a grading must match

    narrower = Signature(lost={"test_scale_small": mul})
    tampered = rec.model_copy(update={"mutants": [rec.mutants[0].model_copy(update={"signatures": {Flavor.CPU: narrower}}),
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
