"""What a candidate's copy of a report holds: hidden checks as name, points and status; our frames gone."""

import pytest

from grader.reports.model import CheckResult, Diagnosis, FollowUp, ForbiddenHit, Report
from grader.reports.redact import candidate_details, for_audience, opaque_id
from grader.reports.tracebacks import Frame, Trace, format_trace

# pytest's --tb=short text for a failed visible check, as the judge records it.
LONGREPR = """\
/work/main/exercises/attention/checks/test_sdpa.py:81: in test_sdpa_no_mask
    close(weights, expected_weights, "weights", **F32)
/work/main/grader/judge/expect.py:42: in expect_close
    torch.testing.assert_close(actual, expected)
E   AssertionError: weights: Tensor-likes are not close!
E   
E   Mismatched elements: 6 / 6 (100.0%)
E   (note: 2 other explicit examples also failed with this error; use Verbosity.verbose to view)
E   Failing explicit example: test_sdpa_no_mask(
E       sandbox=<grader.judge.calls.CheckSandbox object at 0x7f>,
E       case=SdpaCase(L=2),
E   )
"""


def check(id, visibility, status="failed", **kw):
    return CheckResult(id=id, name=id.upper(), status=status, score=0, max_score=2, visibility=visibility, **kw)


def test_a_failed_checks_details_are_the_assertion_the_judge_raised_never_our_frames():
    said = "weights: Tensor-likes are not close!\n\nMismatched elements: 6 / 6 (100.0%)"
    text = candidate_details(check("a", "visible", details=LONGREPR, said=said, said_as="AssertionError"))
    assert text == "AssertionError: " + said
    for ours in ("grader/judge", "checks/test_sdpa.py", "CheckSandbox", "explicit example", "(note:"):
        assert ours not in text


def test_a_report_older_than_the_fields_shows_a_candidate_no_details_rather_than_parse_them():
    assert candidate_details(check("a", "visible", details=LONGREPR)) == ""
    tb = 'Traceback (most recent call last):\n  File "/sandbox/submission/attention.py", line 3\nValueError: x'
    assert candidate_details(check("a", "visible", status="error", details=tb)) == ""


PROBE = Frame(file="/sandbox/probes/probes.py", line=7, function="scale", source="    secret_probe_code(x)\n")
OWN = Frame(file="/sandbox/submission/toy.py", line=5, function="scale", source="    return x.scale(factor)\n",
            end_line=5, column=11, end_column=18)


def test_an_errors_details_are_the_submissions_frames_chosen_by_their_file_field():
    trace = Trace(frames=[PROBE, OWN], exception="AttributeError: no scale\n")
    text = candidate_details(check("a", "visible", status="error", details="panel text", trace=trace))
    assert text == ('Traceback (most recent call last):\n  File "toy.py", line 5, in scale\n'
                    "    return x.scale(factor)\n           ^^^^^^^\nAttributeError: no scale")


@pytest.mark.parametrize("lying", [
    # A frame named by a bare file name, or one whose text reads like the submission's: only the field counts.
    Frame(file="probes.py", line=7, function="scale", source="    secret_probe_code(x)\n"),
    Frame(file="/sandbox/probes/probes.py", line=7, function='f\n  File "/sandbox/submission/toy.py", line 1, in g',
          source="    secret_probe_code(x)\n"),
])
def test_a_frame_whose_text_lies_about_being_the_candidates_stays_the_panels(lying):
    trace = Trace(frames=[lying, OWN], exception="AttributeError: no scale\n")
    copy = for_audience(Report(exercise="x", graded=True, checks=[
        check("a", "visible", status="error", details=format_trace(trace, candidate=False), trace=trace)]),
        "candidate")
    assert "secret_probe_code" not in copy.to_json() and copy.checks[0].trace is None
    assert 'File "toy.py", line 5' in copy.checks[0].details


def test_candidate_copy_withholds_hidden_details_and_ids_and_panel_copy_is_untouched():
    hidden_id = "test_mask.py::test_rows[3-True]"
    report = Report(exercise="x", graded=True, checks=[
        check(hidden_id, "hidden", message="expected 5, got 4", counterexample="n=3", output="debug print",
              details=LONGREPR, hint="think").model_copy(update={"name": "Rows add up [3-True]"}),
        check("test_a.py::test_v", "visible", message="wrong", details=LONGREPR),
    ], forbidden=[ForbiddenHit(api="torch.mul", how="runtime", where=hidden_id, check=hidden_id)])
    assert for_audience(report, "panel") is report
    copy = for_audience(report, "candidate")
    hidden, visible = copy.checks
    assert copy.audience == "candidate" and report.audience == "panel"
    assert (hidden.message, hidden.counterexample, hidden.output, hidden.details, hidden.hint) == ("", None, "", "", None)
    assert (hidden.name, hidden.status.value, hidden.max_score) == ("Rows add up [case 1]", "failed", 2)
    assert hidden.id == opaque_id(hidden_id) and "3-True" not in copy.to_json()
    assert visible.message == "wrong" and "grader/judge" not in visible.details
    assert copy.forbidden[0].where == "Rows add up [case 1]" and copy.forbidden[0].api == "torch.mul"
    assert report.checks[0].message == "expected 5, got 4"  # the original is not changed


def test_a_candidate_copy_is_final_and_keeps_the_reason_not_its_panel_detail():
    report = Report(exercise="x", graded=False, not_graded_reason="the judge ended without an outcome for check 2 of 3",
                    not_graded_detail="test_m.py::test_rows[918273]\njudge log (end):\nE  assert 918273 == 4")
    copy = for_audience(report, "candidate")
    assert copy.not_graded_reason == "the judge ended without an outcome for check 2 of 3"
    assert copy.not_graded_detail is None and "918273" not in copy.to_json()
    assert for_audience(copy, "candidate") is copy  # redacting again changes nothing (details stay as they are)


def test_a_stored_reason_of_several_lines_is_read_as_reason_and_detail():
    """Reports stored before the detail had its own field kept the panel's part below the reason's first line:
    read, the first line is the reason and the rest its detail, so a candidate's copy of one never shows it."""
    stored = Report(exercise="x", graded=False).model_dump(mode="json")
    stored.pop("not_graded_detail")
    stored["not_graded_reason"] = "a check of this exercise raised an error\ntest_m.py::test_rows[918273]: KeyError"
    report = Report.model_validate(stored)
    assert report.not_graded_reason == "a check of this exercise raised an error"
    assert report.not_graded_detail == "test_m.py::test_rows[918273]: KeyError"
    assert "918273" not in for_audience(report, "candidate").to_json()


def test_split_check_id_finds_the_parameters_after_the_function():
    from grader.reports.model import split_check_id

    assert split_check_id("test_m.py::test_rows[3-True]") == ("test_m.py::test_rows", "3-True")
    assert split_check_id("test_m.py::Cls::test_rows[a::b[c]]") == ("test_m.py::Cls::test_rows", "a::b[c]")
    assert split_check_id("test_m.py::test_plain") == ("test_m.py::test_plain", None)


# --- diagnosis and follow-ups (issue 17) --------------------------------------------------------

HIDDEN_MISTAKE = Diagnosis(mutant="secret_mutant_name", description="divides by the secret hidden constant",
                           matched=2, failed=2, signature=2, candidate_visible=False)
SHOWN_MISTAKE = Diagnosis(mutant="adds_instead", description="adds where it should multiply", matched=1, failed=2,
                          signature=1, candidate_visible=True)
QUESTION = FollowUp(ask="Why would the panel-only question be asked?", answer="the panel-only answer text",
                    because="check test_rows failed")


def every_format(report, audience: str) -> dict[str, str]:
    """The terminal, JSON, HTML and Markdown scorecards of ``report`` for ``audience``, as submit writes them."""
    import io

    from rich.console import Console

    from grader.reports.render import render_html, render_markdown
    from grader.reports.terminal import render_terminal

    console = Console(width=100, no_color=True, record=True, file=io.StringIO())
    render_terminal(report, console, audience=audience)
    copy = for_audience(report, audience)
    return {"terminal": " ".join(console.export_text().split()), "json": copy.to_json(),
            "html": render_html(copy, audience=audience), "markdown": render_markdown(copy, audience=audience)}


def diagnosed_report() -> Report:
    return Report(exercise="x", graded=True, score=0, max_score=4, checks=[
        check("test_mask.py::test_rows[3-True]", "hidden"), check("test_a.py::test_v", "visible")],
        diagnosis=[HIDDEN_MISTAKE, SHOWN_MISTAKE], follow_ups=[QUESTION])


@pytest.mark.parametrize("fmt", ["terminal", "json", "html", "markdown"])
def test_a_hidden_checks_diagnosis_and_every_follow_up_stay_out_of_every_candidate_format(fmt):
    text = every_format(diagnosed_report(), "candidate")[fmt]
    for secret in ("secret_mutant_name", "divides by the secret", "panel-only", "test_rows failed"):
        assert secret not in text, f"{secret!r} reached the candidate's {fmt}"
    hint = "adds where it should multiply" + ("" if fmt == "json" else " (matches 1 of 2 failed checks)")
    assert hint in text  # every check it involves is visible: a hint


@pytest.mark.parametrize("fmt", ["terminal", "json", "html", "markdown"])
def test_the_panel_sees_every_diagnosis_and_follow_up_in_every_format(fmt):
    text = every_format(diagnosed_report(), "panel")[fmt].replace("\\_", "_")  # Markdown escapes "_"
    for shown_text in ("secret_mutant_name", "divides by the secret hidden constant", "adds where it should multiply",
                       "Why would the panel-only question be asked?", "the panel-only answer text",
                       "check test_rows failed"):
        assert shown_text in text, f"{shown_text!r} missing from the panel's {fmt}"


def test_a_candidate_copy_of_a_diagnosis_is_final():
    copy = for_audience(diagnosed_report(), "candidate")
    assert copy.diagnosis == [SHOWN_MISTAKE] and copy.follow_ups == []
    assert for_audience(copy, "candidate") == copy


def test_a_hidden_gpu_checks_skip_reason_is_the_judges_words_only():
    """The headline's "2 GPU checks (4 points) not run: no GPU in the sandbox" reaches a candidate for hidden GPU
    checks too; the versions after it, and any reason a hidden check's own code gave, are withheld."""
    from grader.reports.model import CheckResult, Report, SkipReason, Status, Visibility
    from grader.reports.redact import for_audience

    def skipped(cid, message, gpu=True, by_judge=False):
        return CheckResult(id=cid, name=cid, status=Status.SKIPPED, score=0, max_score=2, visibility=Visibility.HIDDEN,
                           gpu=gpu, message=message, skipped_for=SkipReason.NO_GPU if by_judge else None)

    report = Report(exercise="x", graded=True, checks=[
        skipped("t.py::a", "no GPU in the sandbox (its torch 2.13.0 is a CPU build: GPU gradings use the CUDA image)",
                by_judge=True),
        skipped("t.py::b", "skipping for n=918273"), skipped("t.py::c", "no GPU in the sandbox", gpu=False),
        # Issue 28: decided by who skipped it, not by the words: a check's own skip that starts with the judge's
        # words (and goes on with an input) is withheld like any other reason of a hidden check.
        skipped("t.py::d", "no GPU in the sandbox: n=918273")])
    a, b, c, d = for_audience(report, "candidate").checks
    assert (a.message, b.message, c.message, d.message) == ("no GPU in the sandbox", "", "", "")


def test_a_stored_report_with_the_sandboxs_words_in_a_hit_or_a_tampering_report_keeps_them_from_a_candidate():
    """Issue 25: a correct file sent every hidden input back as the *name* of a forbidden-API hit (126,819
    characters), and a tampering text of its own; reports made since name hits from the exercise's list,
    and a stored or edited one is held to the same rule in the candidate's copy."""
    from grader.reports.model import Finding, FindingKind
    from grader.reports.findings import UNNAMED_API
    from grader.reports.redact import SANDBOX_TAMPERING

    forged = "torch.mul (seen: 918273645, 'hush-5551212')" + " " * 126_000
    report = Report(exercise="x", graded=True, checks=[
        check("test_a.py::test_v", "visible", forbidden=[forged, "torch.clamp"], tampered=["hush-5551212"]),
    ], forbidden=[ForbiddenHit(api=forged, how="runtime", where="test_a.py::test_v", check="test_a.py::test_v"),
                  ForbiddenHit(api="torch.nn.functional.linear", how="static", where="x.py:3")],
        findings=[Finding(kind=FindingKind.TAMPERING, what="switched off (seen: hush-5551212)",
                          where="test_a.py::test_v", how="runtime"),
                  Finding(kind=FindingKind.TAMPERING, what="sys.setprofile", where="x.py:4")])
    copy = for_audience(report, "candidate")
    assert "hush" not in copy.to_json() and "918273645" not in copy.to_json()
    assert [h.api for h in copy.forbidden] == [UNNAMED_API, "torch.nn.functional.linear"]
    assert copy.checks[0].forbidden == [UNNAMED_API, "torch.clamp"] and copy.checks[0].tampered == []
    assert [f.what for f in copy.findings] == [SANDBOX_TAMPERING, "sys.setprofile"]


def test_a_hidden_checks_timing_stays_with_the_panel_and_the_total_is_whole_seconds():
    """A file that sleeps in proportion to an input could read a hidden example back from its check's duration:
    a candidate's copy keeps no duration for a hidden check, and the grading's total only in whole seconds."""
    report = Report(exercise="x", graded=True, duration_s=12.3456, checks=[
        check("test_h.py::test_hidden", "hidden", duration_s=3.1416),
        check("test_v.py::test_visible", "visible", duration_s=0.5772)])
    copy = for_audience(report, "candidate")
    assert [c.duration_s for c in copy.checks] == [None, 0.5772] and copy.duration_s == 12.0
    assert [c.duration_s for c in for_audience(report, "panel").checks] == [3.1416, 0.5772]
    assert for_audience(copy, "candidate") == copy  # redacting again changes nothing
