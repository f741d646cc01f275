"""A broken file is one clear message, not a wall (issue 14, part 2).

Real gradings run the toy exercise in the local sandbox (the same worker Docker runs);
renderer tests build reports by hand. Each test failed before the change it names.
"""

import io
import math
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from rich.console import Console

from grader.host.grading import grade
from grader.judge.calls import CandidateError
from grader.judge.outcomes import classify as _classify
from grader.judge.weights_only import weights_only_refusal
from grader.reports.model import NOT_RUN_MESSAGE, CheckResult, LoadError, Report, Status, Visibility
from grader.reports.redact import for_audience
from grader.reports.render import render_html, render_markdown
from grader.reports.terminal import render_terminal
from grader.reports.tracebacks import Frame, Trace, format_trace
from grader.untrusted import without_ansi

TOY = Path(__file__).parent / "fixtures" / "toy"
SOLUTIONS = Path(__file__).resolve().parent.parent / "solutions"


def terminal(report: Report, audience: str = "candidate") -> str:
    console = Console(width=80, no_color=True, record=True, file=io.StringIO())
    render_terminal(report, console, audience=audience)
    return console.export_text()


def every_format(report: Report, audience: str = "candidate") -> dict[str, str]:
    return {"terminal": terminal(report, audience), "markdown": render_markdown(report, audience=audience),
            "html": render_html(report, audience=audience)}


def graded(tmp_path, source: str) -> Report:
    sub = tmp_path / "toy.py"
    sub.write_text(textwrap.dedent(source))
    report = grade(TOY, sub, sandbox="local")
    assert report.graded, report.not_graded_reason
    return report


# ------------------------------------------------------------------ 1. a file that does not import


def test_a_module_level_name_error_is_told_once_with_its_line_and_the_checks_are_not_run(tmp_path):
    report = graded(tmp_path, """
        import torch
        SCALE = undefined_name * 2

        def scale(x, factor):
            return x * factor
    """)
    error = report.load_error
    assert error.found == "sandbox" and error.summary == "NameError: name 'undefined_name' is not defined"
    assert error.line == 3 and 'File "toy.py", line 3, in <module>' in error.traceback
    assert "probes" not in error.traceback  # the grader's `import toy` frame is not the candidate's
    assert report.score == 0 and all(c.not_run and c.status is Status.ERROR and c.message == NOT_RUN_MESSAGE
                                     and c.counterexample is None and c.details == "" for c in report.checks)
    out = terminal(report)
    assert out.count("undefined_name' is not defined") == 2  # the headline and the traceback's last line, once
    assert "Failing explicit example" not in out and f"{len(report.checks)} checks" in out


@pytest.mark.docker
def test_in_docker_the_untouched_attention_stub_with_a_name_error_is_a_short_scorecard(docker_client, tmp_path):
    """Today's main: 165 lines, the NameError repeated per check with the grader's probe frames."""
    stub = (Path(__file__).resolve().parent.parent / "exercises" / "attention" / "attention.py").read_text()
    sub = tmp_path / "attention.py"
    line = "from torch import Tensor, nn\n"
    sub.write_text(stub.replace(line, line + "SCALE = undefined_name\n"))
    report = grade("attention", sub, sandbox="docker")
    assert report.load_error.summary == "NameError: name 'undefined_name' is not defined"
    assert 'File "attention.py", line 11, in <module>' in report.load_error.traceback
    assert all(c.not_run for c in report.checks)
    out = terminal(report)
    assert len(out.splitlines()) < 40 and "probes.py" not in out


def test_an_import_that_never_finishes_is_the_does_not_import_banner_with_its_deadline(tmp_path):
    """Issue 30.5: a module that hangs while importing showed one timeout row per check (18 lines)."""
    report = graded(tmp_path, """
        import torch

        torch.futures.Future().wait()  # never set: the import blocks (time is outside the subset)

        def scale(x, factor):
            return x * factor
    """)
    assert report.load_error.found == "sandbox"
    assert report.load_error.summary.startswith("it never finished importing (it ran past its 3 s deadline")
    assert all(c.not_run and c.status is Status.ERROR for c in report.checks)
    assert not any(c.status is Status.TIMEOUT for c in report.checks)
    out = terminal(report)
    assert "The file does not import: it never finished importing (it ran past its 3 s deadline" in " ".join(
        out.split())
    assert "timeout" not in out and "3 checks (6 points) not run: the file does not import" in out


def test_an_exception_raised_at_import_never_counts_as_the_one_a_check_expects(tmp_path):
    """The toy's "raises ValueError naming factor" check passed for a file that raised it while importing."""
    report = graded(tmp_path, """
        raise ValueError("factor must be finite")

        def scale(x, factor):
            return x * factor
    """)
    assert report.score == 0 and all(c.not_run for c in report.checks)


def test_a_syntax_error_is_the_judges_own_parse_told_once(tmp_path):
    report = graded(tmp_path, "def scale(x, factor)\n    return x\n")
    assert report.load_error.found == "source" and report.load_error.line == 1
    assert report.load_error.summary == "SyntaxError: expected ':'"
    for name, text in every_format(report).items():
        cause = "expected &#39;:&#39;" if name == "html" else "expected ':'"
        assert text.count(cause) == 2, name  # the headline and Python's own report under it
        assert "Failing explicit example" not in text and "not run: the file does not import" in text, name


def test_a_load_error_found_during_a_hidden_check_is_withheld_from_the_candidate():
    """Importing ran while a hidden check's call was in the sandbox: what the code wrote could hold its inputs."""
    checks = [_check("a", Status.PASSED, visible=True), _check("h1", not_run=True), _check("h2", not_run=True)]
    report = _report(checks, load_error=LoadError(found="sandbox", summary="ValueError: 0.123456789", line=1,
                                                  traceback="ValueError: 0.123456789", check=checks[1].id))
    for text in every_format(report).values():
        assert "0.123456789" not in text and "withheld" in text
    assert not any(c.not_run for c in for_audience(report, "candidate").checks)
    assert "0.123456789" in terminal(report, "panel")


def test_old_reports_without_load_errors_still_load():
    old = _report([_check("a", Status.PASSED, visible=True)]).model_dump(mode="json")
    old.pop("load_error")
    for c in old["checks"]:
        c.pop("not_run")
    assert Report.model_validate(old).load_error is None


# ------------------------------------------------------------------ 2. identical errors, grouped

def _probe_trace(n: int, probe: str) -> Trace:
    """The stub's traceback as the worker sends it: a probe's frame, then the submission's."""
    return Trace(frames=[Frame(file="/sandbox/probes/probes.py", line=n, function=probe,
                               source="    m = attention.MultiHeadAttention(d_model, n_heads, bias=bias)\n"),
                         Frame(file="/sandbox/submission/attention.py", line=45, function="__init__",
                               source='        raise NotImplementedError("MultiHeadAttention.__init__")\n')],
                 exception="NotImplementedError: MultiHeadAttention.__init__\n")


RAISED = "your code raised NotImplementedError: MultiHeadAttention.__init__"


def _stub_report() -> Report:
    checks = [_check(f"v{i}", Status.ERROR, visible=True, message=RAISED, trace=_probe_trace(100 + i, p))
              for i, p in enumerate(["mha_build", "mha_forward", "mha_grad"])]
    checks.append(_check("h", Status.ERROR, message=RAISED, trace=_probe_trace(200, "mha_hidden")))
    return _report(checks)


@pytest.mark.parametrize("fmt", ["terminal", "markdown", "html"])
def test_identical_errors_are_one_entry_with_the_traceback_once(fmt):
    text = every_format(_stub_report())[fmt]
    assert "3 checks: your code raised NotImplementedError" in text  # the hidden one is not counted for a candidate
    assert text.count("raise NotImplementedError(") == 1
    assert "probes.py" not in text and "mha_build" not in text


def test_the_panel_groups_hidden_checks_too_and_keeps_the_probe_frames():
    text = terminal(_stub_report(), "panel")
    assert "4 checks: your code raised NotImplementedError" in text and "probes.py" in text


# ------------------------------------------------------------------ 3. the candidate's terms


def test_probe_names_and_ansi_codes_never_reach_a_candidate():
    timeout = _check("t", Status.TIMEOUT, visible=True,
                     message="a call ran past its 20 s deadline while importing the submission", probe="clip")
    text = terminal(_report([timeout]))
    assert "'clip'" not in text and "a call ran past its 20 s deadline" in text
    assert "'clip'" in terminal(_report([timeout]), "panel")

    result = _check("c", Status.ERROR, visible=True)
    error = {"type": "RuntimeError", "qualnames": ["RuntimeError"], "builtin": True,
             "message": "\x1b[31mCUDA error\x1b[0m: bad",
             "trace": {"frames": [], "exception": "RuntimeError: \x1b[1mbad\x1b[0m"}}
    result = result.model_copy(update=_classify(SimpleNamespace(value=CandidateError("p", error)), None))
    assert result.message == "your code raised RuntimeError: CUDA error: bad" and "\x1b" not in result.details
    assert without_ansi("\x1b]0;title\x07plain \x1b[2Jtext") == "plain text"


def test_a_state_dict_that_a_safe_load_refuses_says_exactly_that(tmp_path):
    buffer = io.BytesIO()
    torch.save({"fn": math.cos}, buffer)  # not an allowed global: what a candidate's scheduler might keep
    buffer.seek(0)
    with pytest.raises(Exception) as refused:
        torch.load(buffer, weights_only=True)
    assert weights_only_refusal(str(refused.value)) == \
        "Unsupported global: GLOBAL math.cos was not an allowed global by default"

    source = (SOLUTIONS / "warmup_cosine_scheduler" / "scheduler.py").read_text()
    keep = "        self.min_lr = min_lr\n"
    source = source.replace(keep, keep + "        self.fn = math.cos\n")  # a state_dict() entry no safe load takes
    sub = tmp_path / "scheduler.py"
    sub.write_text(source)
    report = grade("warmup_cosine_scheduler", sub, sandbox="local")
    resume = next(c for c in report.checks if c.id.endswith("test_resume_from_state_dict"))
    assert resume.status is Status.FAILED and resume.message.startswith(
        "the scheduler's state_dict() holds something torch.load(weights_only=True) refuses (Unsupported global: "
        "GLOBAL math.cos")


# ------------------------------------------------------------------ helpers


def _check(name, status=Status.ERROR, *, visible=False, message="", details="", not_run=False, trace=None,
           probe=None) -> CheckResult:
    if not_run:
        status, message = Status.ERROR, NOT_RUN_MESSAGE
    return CheckResult(id=f"test_x.py::{name}", name=f"check {name}", status=status,
                       score=1.0 if status is Status.PASSED else 0.0, max_score=1.0,
                       visibility=Visibility.VISIBLE if visible else Visibility.HIDDEN, message=message,
                       details=format_trace(trace, candidate=False) if trace else details, trace=trace,
                       probe=probe, not_run=not_run,
                       counterexample="Failing explicit example: test_x(case=1)" if status is Status.ERROR else None)


def _report(checks, load_error=None) -> Report:
    return Report(exercise="attention", title="Attention", graded=True, checks=checks, load_error=load_error,
                  score=sum(c.score for c in checks), max_score=float(len(checks)))
