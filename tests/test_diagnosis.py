"""Diagnosis: which recorded mistake a grading's failed checks match (grader.hindsight.diagnosis).

Fast: records and reports are built in code, except the tests that read every exercise's
stored ``mistakes.json`` (no grading either: a held-in mutant's signature is what validate
observed when it graded that mutant, so "diagnosed as itself" is computed from the record).
"""

from __future__ import annotations

import pytest

from grader.exercise import GpuPolicy, load_exercise
from grader.hindsight.diagnosis import MIN_SIMILARITY, diagnose, nearest
from grader.hindsight.records import (EVIDENCE_SINCE, Loss, Lost, MistakeRecord, MutantSignature, Signature,
                                      load_record, losses)
from grader.reports.model import CheckResult, Finding, FindingKind, LoadError, Report, Status, Visibility
from grader.wire.grant import Flavor
from grader.host.validation import all_exercise_names

CHECKS = ["test_a", "test_b", "test_c", "test_d", "test_e"]


def mutant(name: str, *signature: str, held_in: bool = True, flavor: Flavor = Flavor.CPU,
           said: dict[str, str] | None = None) -> MutantSignature:
    """A mutant that loses ``signature``'s checks as ``graded`` loses them (saying ``said``, else the default)."""
    lost = losses(graded(*signature, said=said))
    return MutantSignature(name=name, file=f"mutants/{name}.diff", held_in=held_in, sha256="0" * 64,
                           description=f"the {name} mistake", signatures={flavor: lost})


def record(*mutants: MutantSignature, fingerprint: str = "fp", flavor: Flavor = Flavor.CPU) -> MistakeRecord:
    return MistakeRecord(exercise="x", exercise_fingerprint=fingerprint, reference_sha256="0" * 64,
                         checks={flavor: CHECKS}, mutants=list(mutants))


def graded(*failed: str, hidden: tuple[str, ...] = (), skipped: tuple[str, ...] = (),
           said: dict[str, str] | None = None) -> Report:
    """A report with one check per name in CHECKS (test_b parametrized twice), ``failed`` ones losing their point,
    each saying ``said[name]`` (default: "<name>: got 1.0, expected 2.0")."""
    checks = []
    for name in CHECKS:
        for case in (["[1]", "[2]"] if name == "test_b" else [""]):
            status = Status.SKIPPED if name in skipped else Status.FAILED if name in failed else Status.PASSED
            lost = status is Status.FAILED
            message = (said or {}).get(name, f"{name}: got 1.0, expected 2.0") if lost else ""
            visibility = Visibility.HIDDEN if name in hidden else Visibility.VISIBLE
            checks.append(CheckResult(id=f"test_x.py::{name}{case}", name=name, status=status, score=0 if lost else 1,
                                      max_score=1, visibility=visibility, message=message))
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


def test_a_tie_names_neither():
    """Two mistakes the evidence cannot tell apart: naming one would be a guess, naming both one false thing."""
    twins = record(*[mutant(f"m{i}", "test_a", held_in=i % 2 == 0) for i in range(5)])
    assert names(graded("test_a"), twins) == []
    assert names(graded("test_a"), record(mutant("m0", "test_a"))) == ["m0"]


def test_the_same_checks_saying_other_values_are_another_mistake():
    """A partly wrong answer was named after a mutant that fails the same checks. What they report
    differs: warmup from 0 says "got 0.0" where the mutant's says "got 0.05"."""
    rec = record(mutant("current_lr", "test_a", "test_c", said={"test_a": "lr at step 0: got 0.05, expected 0.1"}))
    assert names(graded("test_a", "test_c", said={"test_a": "lr at step 0: got 0.0, expected 0.1"}), rec) == []
    noisy = graded("test_a", "test_c", said={"test_a": "lr at step 0: got 0.05000001, expected 0.1"})
    assert names(noisy, rec) == ["current_lr"]  # float noise in a reported value is the same mistake
    assert names(graded("test_a", "test_c", said={"test_a": "lr at step 0 was 0.05, expected 0.1"}), rec) == []


def test_one_shared_check_saying_something_else_rules_a_mutant_out():
    """broad fails a..d; a grading failing a..d with test_d saying another thing would match 3 of 4 (0.75): it is
    evidence of another mistake, so nothing is named."""
    assert names(graded("test_a", "test_b", "test_c", "test_d")) == ["broad"]
    assert names(graded("test_a", "test_b", "test_c", "test_d", said={"test_d": "test_d: got 3.0, expected 2.0"})) == []


def test_a_record_without_evidence_names_nothing():
    """A record written before format 4 says which checks and how, not what they said: no evidence, no name."""
    old = RECORD.model_copy(update={"schema_version": 3})
    assert names(graded("test_a", "test_b"), old) == []
    assert names(graded("test_a", "test_b"), RECORD) == ["swap"]


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
    only_a = Signature(lost={"test_a": Lost(how=Loss.FAILED)})
    assert [m.mutant for m in nearest(only_a, {"test_a", "test_b"}, record(mutant("scale", "test_c")))] == []


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
                                                  signatures={Flavor.CPU: losses(graded("test_a")),
                                                              Flavor.CUDA: losses(graded("test_e"))})])
    on_gpu = graded("test_e")
    on_gpu.environment.gpus = "all"
    assert names(on_gpu, both) == ["m"] and names(graded("test_e"), both) == []
    assert names(graded("test_a"), both) == ["m"]
    assert names(on_gpu, record(mutant("m", "test_e"))) == []  # a cpu record says nothing of a GPU grading
    assert names(graded("test_e"), record(mutant("m", "test_e", flavor=Flavor.CUDA), flavor=Flavor.CUDA)) == []


@pytest.mark.parametrize("name", all_exercise_names())
def test_every_held_in_mutant_is_diagnosed_as_itself(name):
    """From the stored record, in each flavour it holds: a grading failing exactly as a held-in mutant does names
    that mutant alone, unless another recorded mutant fails exactly the same way (a tie names neither)."""
    ex = load_exercise(name)
    rec = load_record(ex)
    if rec is None and ex.config.exercise.gpu is GpuPolicy.REQUIRED:
        pytest.skip(f"{name} has no cuda record yet (tests/test_mistakes.py NO_RECORD_YET)")
    assert rec is not None, f"{name} has no mistakes.json: run `grader validate --more --record {name}`"
    if rec.schema_version < EVIDENCE_SINCE:
        assert ex.config.exercise.gpu is GpuPolicy.REQUIRED, f"{name}'s record holds no evidence: record it again"
        pytest.skip(f"{name}'s cuda record holds no evidence yet (format {rec.schema_version}): it names nothing "
                    "until `grader validate --gpus all --more --record` runs on a GPU")
    for flavor in rec.flavors:
        if not any(lost.evidence for m in rec.mutants for lost in (m.signature(flavor) or Signature()).lost.values()):
            continue  # a cuda record made on a GPU before evidence was kept (format 3): it names nothing until re-made
        counted = set(rec.checks[flavor])
        missed = {}
        for m in (m for m in rec.mutants if m.held_in):
            mine = m.signature(flavor)
            got = [n.mutant for n in nearest(mine, counted, rec, flavor)]
            twins = [o.name for o in rec.mutants if o is not m and _same(o.signature(flavor), mine)]
            if got != [m.name] and not (got == [] and twins):  # a tie with a twin names neither
                missed[m.name] = got
        assert missed == {}, f"held-in mutants of {name} not diagnosed as themselves ({flavor.value}): {missed}"


def _same(a: Signature | None, b: Signature | None) -> bool:
    """The same checks lost, each the same way and saying the same: mistakes no check tells apart."""
    return a is not None and b is not None and a.checks == b.checks and a.same_way(b) == len(a.lost)


# --- how each check was lost (issue 26) ---------------------------------------------------------------


def lost_as(*spec: tuple[str, Status], raised: str | None = None, forbidden: str | None = None) -> Report:
    """A report on CHECKS where each (name, status) in ``spec`` lost its point that way (FAILED with ``forbidden``:
    credit taken by the judge for that API)."""
    how = dict(spec)
    checks = []
    for name in CHECKS:
        status = how.get(name, Status.PASSED)
        lost = status is not Status.PASSED
        checks.append(CheckResult(id=f"test_x.py::{name}", name=name, status=status, score=0 if lost else 1,
                                  max_score=1, visibility=Visibility.VISIBLE,
                                  raised=raised if status is Status.ERROR else None,
                                  message="test: got 1.0, expected 2.0" if status is Status.FAILED else "",
                                  penalty="forbidden" if forbidden and lost else None,
                                  forbidden=[forbidden] if forbidden and lost else []))
    return Report(exercise="x", graded=True, checks=checks, score=sum(c.score for c in checks), max_score=len(CHECKS))


#: What ``lost_as`` reports say, as evidence, by how they were lost.
SAID = {"timeout": ["timeout"], "error": None, "forbidden": ["forbidden"], "failed": ["test: got 1.0, expected 2.0"]}


def recorded(name: str, **lost: str | tuple[str, str]) -> MutantSignature:
    """A signature: check -> "failed" / "timeout" / ("error", "TypeError") / ("forbidden", api), each with the
    evidence a ``lost_as`` report of that kind gives."""
    def entry(h):
        how, detail = (h, None) if isinstance(h, str) else h
        said = [f"raised {detail}"] if how == "error" else SAID[how]
        return {"how": how, "detail": detail, "evidence": said} if detail else {"how": how, "evidence": said}
    entries = {c: entry(h) for c, h in lost.items()}
    return MutantSignature(name=name, file=f"mutants/{name}.diff", held_in=True, sha256="0" * 64,
                           description=f"the {name} mistake", signatures={Flavor.CPU: {"lost": entries}})


def test_timeouts_never_match_wrong_answers_and_say_what_happened():
    """Issue 26: an infinite loop (5 timeouts) was "looks like: cache appended on dim 1 (matches 5 of 5 failed
    checks)". Lost by timeouts, it matches no wrong-answer mistake; the diagnosis says every call timed out."""
    five = [(c, Status.TIMEOUT) for c in CHECKS]
    [d] = diagnose(lost_as(*five), record(mutant("wrong_dim", *CHECKS)), fingerprint="fp")
    assert d.kind == "outcome" and d.mutant == ""
    assert d.line == "no named mistake: every lost check timed out (5 of 5): no answer came back to compare"
    loops = record(recorded("loops", **{c: "timeout" for c in CHECKS}), mutant("wrong_dim", *CHECKS))
    [d] = diagnose(lost_as(*five), loops, fingerprint="fp")  # a recorded mistake that loops the same way: named
    assert (d.kind, d.mutant, d.answers_only) == ("mistake", "loops", False)
    assert d.line == "looks like: the loops mistake (matches 5 of 5 lost checks)"


def test_an_exception_matches_only_a_mistake_that_raises_the_same_class():
    """A file raising NotImplementedError in every call is not "looks like: transposes k" (a RuntimeError)."""
    transposes = recorded("transposes", test_a=("error", "RuntimeError"), test_b=("error", "RuntimeError"))
    rec = record(transposes)
    stub_like = lost_as(("test_a", Status.ERROR), ("test_b", Status.ERROR), raised="NotImplementedError")
    [d] = diagnose(stub_like, rec, fingerprint="fp")
    assert d.kind == "outcome" and d.description == (
        "every lost check raised NotImplementedError in the submission's code (2 of 2)")
    same = lost_as(("test_a", Status.ERROR), ("test_b", Status.ERROR), raised="RuntimeError")
    assert [x.mutant for x in diagnose(same, rec, fingerprint="fp")] == ["transposes"]


def test_a_forbidden_api_loss_is_named_as_that_never_as_a_wrong_answer():
    sdpa = "torch.nn.functional.scaled_dot_product_attention"
    forbidden_only = lost_as(*[(c, Status.FAILED) for c in CHECKS[:3]], forbidden=sdpa)
    wrong_answers = record(mutant("shape", *CHECKS[:3]))
    [d] = diagnose(forbidden_only, wrong_answers, fingerprint="fp")
    assert d.kind == "outcome" and d.line == (f"no named mistake: every lost check got no credit for the forbidden "
                                              f"{sdpa} (3 of 3)")
    uses_it = record(recorded("uses_sdpa", **{c: ("forbidden", sdpa) for c in CHECKS[:3]}), mutant("shape", *CHECKS[:3]))
    assert [x.mutant for x in diagnose(forbidden_only, uses_it, fingerprint="fp")] == ["uses_sdpa"]
    other = lost_as(*[(c, Status.FAILED) for c in CHECKS[:3]], forbidden="torch.nn.MultiheadAttention")
    assert [x.kind for x in diagnose(other, uses_it, fingerprint="fp")] == ["outcome"]  # another API: not that one


def test_mixed_losses_are_told_by_kind_and_wrong_answers_alone_say_nothing_new():
    mixed = lost_as(("test_a", Status.TIMEOUT), ("test_b", Status.TIMEOUT), ("test_c", Status.FAILED))
    [d] = diagnose(mixed, record(mutant("far", "test_e")), fingerprint="fp")
    assert d.description == "3 lost checks: 2 timed out, 1 was a wrong answer"
    assert diagnose(lost_as(("test_e", Status.FAILED), ("test_d", Status.FAILED)), record(mutant("far", "test_a")),
                    fingerprint="fp") == []  # wrong answers, no match: nothing, as before


def test_a_format_1_record_reads_as_wrong_answers_and_a_format_2_record_round_trips(tmp_path):
    old = MistakeRecord.model_validate({"exercise": "x", "exercise_fingerprint": "fp", "reference_sha256": "0",
                                        "checks": CHECKS, "schema_version": 1,
                                        "mutants": [{"name": "m", "file": "mutants/m.py", "held_in": True, "sha256": "0",
                                                     "description": "d", "signature": ["test_a", "test_b"]}]})
    assert old.mutants[0].signature(Flavor.CPU) == Signature(lost={"test_a": Lost(how=Loss.FAILED), "test_b": Lost(how=Loss.FAILED)})
    new = record(recorded("m", test_a="timeout", test_b=("error", "TypeError")))
    assert MistakeRecord.model_validate_json(new.model_dump_json()) == new


def test_the_issues_looping_candidate_gets_no_looks_like_from_kv_cache_decodes_stored_record():
    """The walk of issue 26, on the stored record: attend_step loops, its five checks time out."""
    ex = load_exercise("kv_cache_decode")
    rec = load_record(ex)
    attention = ["test_decode_matches_causal_attention", "test_cache_grows_by_one_token", "test_step_from_a_given_cache",
                 "test_step_float64", "test_step_leaves_arguments_alone"]
    checks = [CheckResult(id=f"test_kv.py::{c}", name=c, status=Status.TIMEOUT if c in attention else Status.PASSED,
                          score=0 if c in attention else 1, max_score=1, visibility=Visibility.VISIBLE)
              for c in rec.checks[Flavor.CPU]]
    report = Report(exercise="kv_cache_decode", graded=True, checks=checks, score=len(checks) - 5,
                    max_score=len(checks))
    got = diagnose(report, rec, fingerprint=ex.fingerprint)
    assert [d.kind for d in got] == ["outcome"], [d.line for d in got]
    assert "timed out" in got[0].line and "looks like" not in got[0].line
