"""What a candidate's copy of a report holds: hidden checks as name, points and status; our frames gone."""

from grader.reports.model import CheckResult, ForbiddenHit, Report
from grader.reports.redact import candidate_details, for_audience, opaque_id

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


def test_a_failed_checks_details_keep_the_explanation_and_drop_our_frames():
    text = candidate_details(check("a", "visible", details=LONGREPR))
    assert text.startswith("AssertionError: weights: Tensor-likes are not close!")
    assert "Mismatched elements: 6 / 6" in text
    for ours in ("grader/judge", "checks/test_sdpa.py", "CheckSandbox", "explicit example", "(note:"):
        assert ours not in text


def test_an_errors_details_are_the_candidates_own_traceback_and_stay():
    tb = 'Traceback (most recent call last):\n  File "/sandbox/submission/attention.py", line 3\nValueError: x'
    assert candidate_details(check("a", "visible", status="error", details=tb)) == tb


def test_candidate_copy_withholds_hidden_details_and_ids_and_panel_copy_is_untouched():
    hidden_id = "test_mask.py::test_rows[3-True]"
    report = Report(exercise="x", graded=True, checks=[
        check(hidden_id, "hidden", message="expected 5, got 4", counterexample="n=3", output="debug print",
              details=LONGREPR, hint="think"),
        check("test_a.py::test_v", "visible", message="wrong", details=LONGREPR),
    ], forbidden=[ForbiddenHit(api="torch.mul", how="runtime", where=hidden_id, check=hidden_id)])
    assert for_audience(report, "panel") is report
    copy = for_audience(report, "candidate")
    hidden, visible = copy.checks
    assert copy.audience == "candidate" and report.audience == "panel"
    assert (hidden.message, hidden.counterexample, hidden.output, hidden.details, hidden.hint) == ("", None, "", "", None)
    assert (hidden.name, hidden.status.value, hidden.max_score) == (hidden_id.upper(), "failed", 2)
    assert hidden.id == opaque_id(hidden_id) and "3-True" not in copy.to_json()
    assert visible.message == "wrong" and "grader/judge" not in visible.details
    assert copy.forbidden[0].where == hidden_id.upper() and copy.forbidden[0].api == "torch.mul"
    assert report.checks[0].message == "expected 5, got 4"  # the original is not changed
