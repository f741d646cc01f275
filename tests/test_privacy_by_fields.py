"""What a candidate reads is chosen from fields the judge filled, never by matching text.

A failed check's explanation is the assertion it raised (``said``, ``said_as``); an error's traceback is the
worker's frames as data, the candidate's own chosen by their ``file`` field; a probe is named in
``CheckResult.probe`` (the panel's), never in a message.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from grader.judge.answers import call
from grader.judge.calls import CandidateError, CheckSandbox, SandboxTimeout
from grader.judge.outcomes import SAID_CAP, classify
from grader.backends.call_result import CallResult, Failure
from grader.reports.model import CheckResult, Report, Status, Visibility
from grader.reports.redact import for_audience
from grader.reports.tracebacks import MAX_FRAMES, Frame, Trace, format_trace, last_candidate_line
from grader.reports.views import check_view
from grader.sandbox.worker import _error
from grader.wire.error_record import MalformedErrorRecord, read_error_record


def _check(visible: bool = True) -> CheckResult:
    return CheckResult(id="test_x.py::test_a", name="A", status=Status.PASSED, score=0.0, max_score=1.0,
                       visibility=Visibility.VISIBLE if visible else Visibility.HIDDEN)


def _classified(exc: BaseException, longrepr: str = "", source_lines=()) -> CheckResult:
    ended = classify(SimpleNamespace(value=exc), SimpleNamespace(longreprtext=longrepr), source_lines)
    return _check().model_copy(update=ended)


def _candidate(result: CheckResult) -> CheckResult:
    return for_audience(Report(exercise="x", graded=True, checks=[result]), "candidate").checks[0]


# ------------------------------------------------------------------ a failed check's explanation


def test_a_failed_checks_explanation_is_the_assertion_it_raised_kept_whole_and_capped():
    text = "out: 3 of 4 values differ\n  first at (0, 1): got 2.0, expected 1.0\n" + "x" * 3000
    result = _classified(AssertionError(f"  {text}  "), longrepr="E   something pytest wrote\nE   more")
    assert result.message == "out: 3 of 4 values differ" and result.said == text.strip()[:SAID_CAP]
    assert result.said_as == "AssertionError"
    assert _candidate(result).details == "AssertionError: " + text.strip()[:SAID_CAP]  # not pytest's E lines
    failed = _classified(pytest.fail.Exception("the answer is not a dict"))
    assert (failed.said, failed.said_as) == ("the answer is not a dict", "Failed")
    assert _candidate(failed).details == "Failed: the answer is not a dict"


def test_an_assertion_with_no_words_says_nothing_more_than_its_class():
    result = _classified(AssertionError())
    assert result.said is None and _candidate(result).details == "AssertionError"


# ------------------------------------------------------------------ frames as data


def _raise_deep(n: int) -> None:
    if n:
        _raise_deep(n - 1)
    raise ValueError("deep")


def test_the_worker_sends_its_frames_as_data_bounded_and_the_judge_reads_them_once():
    try:
        _raise_deep(3 * MAX_FRAMES)
    except ValueError as e:
        record = read_error_record(_error(e, (str(Path(__file__).parent),)))
    frames = record.trace.frames
    assert len(frames) == MAX_FRAMES and frames[-1].function == "_raise_deep" and frames[-1].source.strip() == \
        'raise ValueError("deep")' and frames[-1].column is not None
    assert record.trace.exception == "ValueError: deep\n"
    too_many = {"type": "E", "qualnames": ["E"], "builtin": False, "message": "",
                "trace": {"frames": [frames[0].model_dump()] * (MAX_FRAMES + 1), "exception": ""}}
    with pytest.raises(MalformedErrorRecord, match="frames"):
        read_error_record(too_many)
    with pytest.raises(MalformedErrorRecord, match="line"):
        read_error_record({**too_many, "trace": {"frames": [{**frames[0].model_dump(), "line": "7"}]}})


PROBE = Frame(file="/sandbox/probes/probes.py", line=7, function="scale", source="    return toy.scale(x)\n")
OWN = Frame(file="/sandbox/submission/toy.py", line=5, function="scale", source="    return x.scale(factor)\n",
            end_line=5, column=11, end_column=18)


def test_where_the_candidates_code_raised_is_the_innermost_own_frame_never_a_line_of_text():
    """Exception text that reads like a frame of the submission names no line: only the frames' fields do."""
    lying = 'ValueError: x\n  File "/sandbox/submission/toy.py", line 2, in scale\n    secret()\n'
    record = {"type": "ValueError", "qualnames": ["ValueError"], "builtin": True, "message": "x",
              "trace": {"frames": [PROBE.model_dump()], "exception": lying}}
    result = _classified(CandidateError("scale", record), source_lines=["a = 1", "b = 2"])
    assert result.message == "your code raised ValueError: x"  # no " at line 2"
    honest = {**record, "trace": {"frames": [PROBE.model_dump(), OWN.model_dump()], "exception": "ValueError: x\n"}}
    result = _classified(CandidateError("scale", honest), source_lines=["", "", "", "", "return x.scale(factor)"])
    assert result.message == "your code raised ValueError at line 5 (`return x.scale(factor)`): x"
    assert result.trace.frames == [PROBE, OWN]
    assert 'File "/sandbox/probes/probes.py", line 7' in result.details  # the panel's text keeps the probe frame
    assert "probes.py" not in _candidate(result).details and _candidate(result).trace is None


def test_formatting_a_frame_never_reads_a_file_of_the_judges():
    """A frame without a source line is printed without one: the sandbox names a file, the judge does not open it."""
    mine = Frame(file=str(Path(__file__).resolve()), line=1, function="f", end_line=2, column=0, end_column=3)
    text = format_trace(Trace(frames=[mine], exception="E\n"), candidate=False)
    assert Path(__file__).read_text().splitlines()[0] not in text
    assert last_candidate_line(Trace(frames=[mine])) is None and last_candidate_line(Trace(frames=[OWN])) == 5


# ------------------------------------------------------------------ probe names


class _Box:
    def __init__(self, result):
        self.result = result

    def call(self, probe, args, kwargs, already_bytes=0):
        return self.result


def test_no_message_names_a_probe_the_panel_reads_it_from_its_field():
    wrong_shape = _classified(_raised(lambda: call(SimpleNamespace(call=lambda probe: [1]), "secret_probe")))
    box = CheckSandbox(_Box(CallResult("secret_probe", failure=Failure.TIMEOUT,
                                       failure_message="a call ran past its 3 s deadline")))
    timed_out = _classified(_raised(lambda: box.call("secret_probe")))
    assert isinstance(_raised(lambda: box.call("secret_probe")), SandboxTimeout)  # a later call: the same probe
    for result in (wrong_shape, timed_out):
        assert result.probe == "secret_probe" and "secret_probe" not in result.message + (result.said or "")
        assert "secret_probe" not in _candidate(result).model_dump_json()
        panel = check_view(result, redacted_copy=False, graded=True)
        assert panel.message.endswith("(probe 'secret_probe')")


def _raised(thunk) -> BaseException:
    try:
        thunk()
    except BaseException as e:  # noqa: BLE001 (what the check ended with)
        return e
    raise AssertionError("nothing raised")


def test_a_report_stored_before_these_fields_reads_and_renders_and_a_candidate_gets_no_parsed_text():
    import json

    from grader.reports.derived import report_from_json
    from grader.reports.render import render_markdown

    stored = json.loads((Path(__file__).parent / "golden" / "reports" / "toy_raises.json").read_text())
    for c in stored["checks"]:
        for field in ("said", "said_as", "trace", "probe"):
            c.pop(field)
    old = report_from_json(json.dumps(stored))
    assert "probes.py" in render_markdown(old)  # the panel's text is as it was stored
    candidate = render_markdown(old, audience="candidate")
    assert "probes.py" not in candidate and "Traceback" not in candidate
    assert "your code raised AttributeError at line 5" in candidate
