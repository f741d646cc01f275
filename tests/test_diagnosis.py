"""Diagnosis: which recorded mistake a grading's failed checks match (grader.judge.diagnosis).

Fast: records and reports are built in code, except the tests that read every exercise's
stored ``mistakes.json`` (no grading either: a held-in mutant's signature is what validate
observed when it graded that mutant, so "diagnosed as itself" is computed from the record).
"""

from __future__ import annotations

import pytest

from grader.exercise import GpuPolicy, load_exercise
from grader.judge.diagnosis import MAX_NAMED, MIN_SIMILARITY, diagnose, nearest
from grader.mistakes import MistakeRecord, MutantSignature, load_record
from grader.reports.model import CheckResult, Finding, FindingKind, LoadError, Report, Status, Visibility
from grader.sandbox.flavor import Flavor
from grader.validation import all_exercise_names

CHECKS = ["test_a", "test_b", "test_c", "test_d", "test_e"]


def mutant(name: str, *signature: str, held_in: bool = True, flavor: Flavor = Flavor.CPU) -> MutantSignature:
    return MutantSignature(name=name, file=f"mutants/{name}.diff", held_in=held_in, sha256="0" * 64,
                           description=f"the {name} mistake", signatures={flavor: sorted(signature)})


def record(*mutants: MutantSignature, fingerprint: str = "fp", flavor: Flavor = Flavor.CPU) -> MistakeRecord:
    return MistakeRecord(exercise="x", exercise_fingerprint=fingerprint, reference_sha256="0" * 64,
                         checks={flavor: CHECKS}, mutants=list(mutants))


def graded(*failed: str, hidden: tuple[str, ...] = (), skipped: tuple[str, ...] = ()) -> Report:
    """A report with one check per name in CHECKS (test_b parametrized twice), ``failed`` ones losing their point."""
    checks = []
    for name in CHECKS:
        for case in (["[1]", "[2]"] if name == "test_b" else [""]):
            status = Status.SKIPPED if name in skipped else Status.FAILED if name in failed else Status.PASSED
            lost = status is Status.FAILED
            checks.append(CheckResult(id=f"test_x.py::{name}{case}", name=name, status=status, score=0 if lost else 1,
                                      max_score=1, visibility=Visibility.HIDDEN if name in hidden else Visibility.VISIBLE))
    counted = [c for c in checks if c.status is not Status.SKIPPED]
    return Report(exercise="x", graded=True, checks=checks, score=sum(c.score for c in counted),
                  max_score=len(counted))


RECORD = record(mutant("swap", "test_a", "test_b"), mutant("scale", "test_c"),
                mutant("broad", "test_a", "test_b", "test_c", "test_d"), mutant("off", "test_e", held_in=False))


def names(report: Report, rec: MistakeRecord = RECORD, **kw) -> list[str]:
    return [d.mutant for d in diagnose(report, rec, fingerprint="fp", **kw)]


def test_an_exact_match_is_named_with_its_counts_and_line():
    [d] = diagnose(graded("test_a", "test_b"), RECORD, fingerprint="fp")
    assert (d.mutant, d.matched, d.failed, d.signature) == ("swap", 2, 2, 2)
    assert d.line == "looks like: the swap mistake (matches 2 of 2 failed checks)"
    assert d.candidate_visible


def test_a_poor_match_names_nothing():
    """test_a alone is half of swap (1/2 = 0.5) and a quarter of broad: below the threshold, nothing is named."""
    assert 0.5 < MIN_SIMILARITY
    assert names(graded("test_a")) == []
    # test_a..test_c: broad 3/4, swap 2/3: broad is nearer, and named alone
    assert names(graded("test_a", "test_b", "test_c")) == ["broad"]


def test_ties_are_all_named_held_in_first_and_at_most_max_named():
    twins = record(*[mutant(f"m{i}", "test_a", held_in=i % 2 == 0) for i in range(5)])
    named = names(graded("test_a"), twins)
    assert len(named) == MAX_NAMED == 3 and named == ["m0", "m2", "m4"]


def test_full_marks_not_graded_no_import_stub_tampering_and_stale_record_are_never_diagnosed():
    assert names(graded()) == []
    failing = graded("test_a", "test_b")
    assert names(failing.model_copy(update={"graded": False})) == []
    assert names(failing.model_copy(update={"load_error": LoadError(found="source", summary="SyntaxError")})) == []
    assert names(failing, untouched_stub=True) == []
    tampered = Finding(kind=FindingKind.TAMPERING, what="sys.setprofile", where="x.py:3")
    assert names(failing.model_copy(update={"findings": [tampered]})) == []
    assert names(failing, record(*RECORD.mutants, fingerprint="older")) == []
    assert names(failing, None) == []
    assert names(failing) == ["swap"]  # the same report, current record: named


def test_checks_skipped_here_are_left_out_of_the_signature():
    """scale fails only test_c; with test_c skipped (a GPU check without a GPU), scale matches nothing."""
    assert names(graded("test_e", skipped=("test_c",))) == ["off"]
    assert [m.mutant for m in nearest({"test_a"}, {"test_a", "test_b"}, record(mutant("scale", "test_c")))] == []


def test_a_candidate_sees_a_diagnosis_only_when_every_check_it_involves_is_visible_and_the_exercise_allows():
    [d] = diagnose(graded("test_a", "test_b", hidden=("test_b",)), RECORD, fingerprint="fp")
    assert not d.candidate_visible  # test_b is hidden: the signature says what a hidden check tests
    [d] = diagnose(graded("test_c", hidden=("test_b",)), RECORD, fingerprint="fp")
    assert d.mutant == "scale" and d.candidate_visible  # a hidden check that is not involved does not matter
    [d] = diagnose(graded("test_c"), RECORD, fingerprint="fp", candidates=False)
    assert not d.candidate_visible


# --- every exercise's stored record -----------------------------------------------------------


def test_a_grading_given_gpus_is_matched_against_the_cuda_record_only():
    """A CUDA check catches what no CPU check does: a grading with GPUs is read in the cuda record, one without in
    the cpu record, and a record lacking the grading's flavour names nothing (never the other flavour's guess)."""
    both = MistakeRecord(exercise="x", exercise_fingerprint="fp", reference_sha256="0" * 64,
                         checks={Flavor.CPU: CHECKS, Flavor.CUDA: CHECKS},
                         mutants=[MutantSignature(name="m", file="mutants/m.diff", held_in=True, sha256="0" * 64,
                                                  description="the m mistake",
                                                  signatures={Flavor.CPU: ["test_a"], Flavor.CUDA: ["test_e"]})])
    on_gpu = graded("test_e")
    on_gpu.environment.gpus = "all"
    assert names(on_gpu, both) == ["m"] and names(graded("test_e"), both) == []
    assert names(graded("test_a"), both) == ["m"]
    assert names(on_gpu, record(mutant("m", "test_e"))) == []  # a cpu record says nothing of a GPU grading
    assert names(graded("test_e"), record(mutant("m", "test_e", flavor=Flavor.CUDA), flavor=Flavor.CUDA)) == []


@pytest.mark.parametrize("name", all_exercise_names())
def test_every_held_in_mutant_is_diagnosed_as_itself(name):
    """From the stored record, in each flavour it holds: a grading failing exactly a held-in mutant's checks names
    that mutant (among the named when signatures tie)."""
    ex = load_exercise(name)
    rec = load_record(ex)
    if rec is None and ex.config.exercise.gpu is GpuPolicy.REQUIRED:
        pytest.skip(f"{name} has no cuda record yet (tests/test_mistakes.py NO_RECORD_YET)")
    assert rec is not None, f"{name} has no mistakes.json: run `grader validate --more --record {name}`"
    for flavor in rec.flavors:
        counted = set(rec.checks[flavor])
        named = {m.name: [n.mutant for n in nearest(set(m.signature(flavor)), counted, rec, flavor)]
                 for m in rec.mutants if m.held_in}
        missed = {name: got for name, got in named.items() if name not in got}
        assert missed == {}, f"held-in mutants of {name} not diagnosed as themselves ({flavor.value}): {missed}"
