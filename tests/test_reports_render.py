"""Tests for the scorecard renderers: HTML, Markdown, terminal, and ``write_reports``.

Reports are built in code here; none of this grades anything or needs Docker.

Golden files: ``tests/golden/report_mixed.json`` is a stored report and
``tests/golden/report_mixed.md`` is its expected Markdown scorecard (panel view).
After an intended change to the Markdown rendering, regenerate the expected file with

    GRADER_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_reports_render.py -k golden

and review the diff before keeping it.
"""

from __future__ import annotations

import html
import json
import os
import re
from pathlib import Path

import pytest
from rich.console import Console

from grader.errors import UsageError
from grader.reports.model import (
    Finding, FindingKind,
    CheckResult,
    Environment,
    ForbiddenHit,
    Report,
    SkipReason,
    Status,
    Visibility,
    cap_text,
    total,
)
from grader.reports.render import md_code, md_fence, md_text, render_html, render_markdown, write_reports
from grader.reports.terminal import big_text, preview, render_terminal
from grader.reports.derived import report_from_json

GOLDEN = Path(__file__).parent / "golden"
SDPA = "torch.nn.functional.scaled_dot_product_attention"
SCRIPT = "<script>alert('pwned')</script>"

# Text only the panel may see: every one belongs to the hidden failing check.
HIDDEN_SECRETS = (
    "max abs diff 0.031 at [1, 0, 2]",
    "q=torch.zeros(2, 1, 3, 8)",
    "Check the scale: 1/sqrt(d_k)",
    "debug: hidden-check print",
    "HiddenTraceback",
    "test_reference.py::test_matches_reference",
)


def mixed_report() -> Report:
    """A graded report with every status, a hidden failing check, forbidden hits and capped output."""
    long_output, truncated = cap_text(f"{SCRIPT}\nrow | col\n" + "step loss=0.5\n" * 400)
    assert truncated
    sdpa_check = "test_forbidden.py::test_no_builtin_sdpa"
    checks = [
        CheckResult(id="test_shapes.py::test_output_shape", name="Output has shape (..., L_q, D_v)",
                    status=Status.PASSED, score=1, max_score=1, visibility=Visibility.VISIBLE, duration_s=0.12),
        CheckResult(id="test_softmax.py::test_rows_sum_to_one", name="Attention rows sum to one",
                    status=Status.PASSED, score=2, max_score=2, visibility=Visibility.HIDDEN, duration_s=0.4),
        CheckResult(
            id="test_mask.py::test_masked_weights_are_zero", name="Masked positions get zero weight",
            status=Status.FAILED, score=0, max_score=2, visibility=Visibility.VISIBLE,
            message="weights at masked positions are not zero: max |w| = 0.25\nexpected exactly 0 where mask is False",
            counterexample="q = k = v = torch.ones(1, 2, 4)\nmask = torch.tensor([[True, False]])",
            hint="Fill masked scores with -inf before the softmax, not after it.",
            output=long_output, output_truncated=True, duration_s=1.5,
        ),
        CheckResult(
            id=HIDDEN_SECRETS[5], name="Matches the reference on random shapes",
            status=Status.FAILED, score=0, max_score=3, visibility=Visibility.HIDDEN,
            message=f"outputs differ: {HIDDEN_SECRETS[0]}", counterexample=HIDDEN_SECRETS[1],
            hint=HIDDEN_SECRETS[2], output=HIDDEN_SECRETS[3], details=f"{HIDDEN_SECRETS[4]}: x",
            forbidden=[SDPA], duration_s=2.25,
        ),
        CheckResult(
            id="test_errors.py::test_bad_head_dims", name="Rejects mismatched head dims with ValueError",
            status=Status.ERROR, score=0, max_score=1, visibility=Visibility.VISIBLE,
            message="raised TypeError instead of ValueError",
            details='Traceback (most recent call last):\n  File "attention.py", line 9, in scaled_dot_product_attention\n'
                    "    scores = q @ k.transpose(-2, -1)\nTypeError: unsupported operand",
        ),
        CheckResult(id="test_perf.py::test_long_sequence", name="Handles L=4096 within 10 s",
                    status=Status.TIMEOUT, score=0, max_score=1, visibility=Visibility.VISIBLE,
                    message="the call ran past its 10.0 s deadline", duration_s=10.0),
        CheckResult(id=sdpa_check, name="Does not call the built-in SDPA", status=Status.FAILED, score=0,
                    max_score=1, visibility=Visibility.VISIBLE, message=f"forbidden API used: {SDPA}",
                    forbidden=[SDPA]),
        CheckResult(id="test_cuda.py::test_runs_on_gpu", name="Runs on CUDA tensors", status=Status.SKIPPED,
                    score=0, max_score=1, visibility=Visibility.VISIBLE, message="no GPU in this sandbox"),
    ]
    score, max_score = total(checks)
    return Report(
        exercise="attention", title="Scaled dot-product attention", graded=True, score=score,
        max_score=max_score, checks=checks,
        forbidden=[
            ForbiddenHit(api=SDPA, how="static", where="attention.py:14"),
            ForbiddenHit(api=SDPA, how="runtime", where=sdpa_check, check=sdpa_check),
            ForbiddenHit(api=SDPA, how="runtime", where=HIDDEN_SECRETS[5], check=HIDDEN_SECRETS[5]),
        ],
        warnings=["GPU checks skipped: no GPU in this sandbox.", "Output of 1 check was capped at 4000 characters."],
        started_at="2025-11-22T10:15:00Z", duration_s=18.4,
        environment=Environment(
            submission_name="attention.py", submission_sha256="9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
            exercise_version="1.0.0", sandbox="docker", image="grader-runtime:0.1",
            image_id="sha256:4b825dc642cb6eb9a060e54bf8d69288fbee4904a1b2c3d4e5f60718293a4b5c",
            torch_version="2.13.0+cpu", judge_torch_version="2.13.0+cpu", python_version="3.11.2",
            grader_version="0.1.0", limits={"memory": "1g", "pids": 128, "call_timeout_s": 10},
            hypothesis_seed=1234,
        ),
    )


def not_graded_report() -> Report:
    """Grading never finished: infrastructure failed, so there is no score."""
    return Report(
        exercise="attention", title="Scaled dot-product attention", graded=False,
        not_graded_reason="Docker engine not reachable: is dockerd running?", score=0, max_score=4,
        checks=[CheckResult(id="test_shapes.py::test_output_shape", name="Output has shape (..., L_q, D_v)",
                            status=Status.ERROR, score=0, max_score=4, visibility=Visibility.VISIBLE,
                            message="no outcome: the sandbox never started")],
        environment=Environment(submission_name="attention.py", sandbox="docker"),
    )


@pytest.fixture
def report() -> Report:
    return mixed_report()


# --- model ------------------------------------------------------------------------------------


def test_json_round_trip(report):
    assert report_from_json(report.to_json()) == report
    assert report_from_json(not_graded_report().to_json()) == not_graded_report()


def test_sample_covers_every_status(report):
    """Every status a graded report can hold (a check error makes the grading not graded: tested apart)."""
    assert all(n > 0 for s, n in report.counts().items() if s is not Status.CHECK_ERROR)
    assert (report.score, report.max_score) == (3, 11)  # the skipped check counts toward neither


# --- HTML -------------------------------------------------------------------------------------


def test_html_escapes_candidate_text(report):
    html = render_html(report)
    assert "<script" not in html.lower()
    assert "&lt;script&gt;alert(" in html
    assert "row | col" in html


def test_html_is_self_contained(report):
    html = render_html(report)
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", html, re.I)
    assert "url(" not in html and "@import" not in html
    assert "<style>" in html


def test_html_lists_every_check_with_status_word(report):
    html = render_html(report)
    assert html.count('<span class="tag">hidden</span>') >= 2
    for c in report.checks:
        assert c.name.replace("'", "&#39;") in html
        assert f"{c.status.value}</span>" in html
    assert "3</b>" in html and "/ 11 points" in html


def _forms(secret: str) -> set[str]:
    """The ways a renderer may spell ``secret``: raw, HTML-escaped, Markdown-escaped."""
    return {secret, html.escape(secret), md_text(secret)}


def test_panel_sees_hidden_details(report):
    for text in (render_html(report, audience="panel"), render_markdown(report, audience="panel")):
        for secret in HIDDEN_SECRETS[:5]:
            assert any(form in text for form in _forms(secret)), secret
    assert HIDDEN_SECRETS[5] in render_html(report, audience="panel")  # its id, under its name


@pytest.mark.parametrize("render", [render_html, render_markdown])
def test_candidate_view_withholds_hidden_details(report, render):
    text = render(report, audience="candidate")
    for secret in HIDDEN_SECRETS:
        assert not any(form in text for form in _forms(secret)), secret
    assert "Matches the reference on random shapes" in text  # name, status and points stay
    assert "0/3" in text
    # Visible checks keep their details.
    assert "Fill masked scores with -inf" in text
    assert "Does not call the built-in SDPA" in text


def test_candidate_terminal_withholds_hidden_details(report):
    console = Console(width=80, no_color=True, record=True)
    render_terminal(report, console, audience="candidate")
    out = console.export_text()
    for secret in HIDDEN_SECRETS[:5]:
        assert secret not in out
    assert re.search(r"Matches the reference\s.*\s+on random shapes\s.*\s+\(hidden\)", out)  # its name, folded in its cell


@pytest.mark.parametrize("render", [render_html, render_markdown])
def test_not_graded_shows_reason_not_score(render):
    text = render(not_graded_report())
    assert "NOT GRADED" in text
    assert "Docker engine not reachable" in text
    assert "0/4" not in text and "0 / 4" not in text and "/ 4" not in text


def test_unknown_audience_is_a_usage_error(report):
    with pytest.raises(UsageError, match="'reviewer'"):
        render_html(report, audience="reviewer")


# --- Markdown ---------------------------------------------------------------------------------


def test_markdown_table_rows_stay_intact(report):
    md = render_markdown(report)
    checks_table = md.split("## Checks", 1)[1].split("\n\n", 2)[1].splitlines()
    assert len(checks_table) == 2 + len(report.checks)  # header, rule, one line per check
    for line in checks_table:
        assert len(re.findall(r"(?<!\\)\|", line)) == 5, line  # 4 cells: no stray pipe


def test_markdown_escaping_helpers():
    assert md_text("a | b\nc <b>") == r"a \| b<br>c &lt;b&gt;"
    assert md_code("a | b\nc") == r"`a \| b c`"
    assert md_code("x`y") == "``x`y``"
    assert md_fence("x ``` y").startswith("````text\n")
    assert md_fence("x ``` y").endswith("\n````")


def test_markdown_matches_golden():
    stored = report_from_json((GOLDEN / "report_mixed.json").read_text(encoding="utf-8"))
    actual = render_markdown(stored)
    golden = GOLDEN / "report_mixed.md"
    if os.environ.get("GRADER_UPDATE_GOLDEN") == "1":
        golden.write_text(actual, encoding="utf-8")
    assert actual == golden.read_text(encoding="utf-8")


def test_golden_json_is_the_sample_report():
    stored = report_from_json((GOLDEN / "report_mixed.json").read_text(encoding="utf-8"))
    assert stored == mixed_report()


# --- terminal ---------------------------------------------------------------------------------


def _terminal(report: Report, **kw) -> str:
    console = Console(width=80, no_color=True, record=True)
    render_terminal(report, console, **kw)
    return console.export_text()


@pytest.mark.parametrize("make", [mixed_report, not_graded_report])
@pytest.mark.parametrize("audience", ["panel", "candidate"])
def test_terminal_fits_80_columns(make, audience):
    out = _terminal(make(), audience=audience)
    assert out.strip()
    assert max(len(line) for line in out.splitlines()) <= 80


def test_terminal_shows_status_words_without_colour(report):
    out = _terminal(report)
    for word in ("✓ passed", "✗ failed", "! error", "◷ timeout", "○ skipped"):
        assert word in out
    assert "Score: 3 / 11 points" in out
    assert "Fill masked scores with -inf" in out
    assert SDPA in out
    assert "warning: GPU checks skipped" in out
    assert "sha256 9f86d081884c" in out and "seed 1234" in out and "image 4b825dc642cb" in out


def test_terminal_not_graded(report):
    out = _terminal(not_graded_report())
    assert "NOT GRADED — rerun" in out and "Docker engine not reachable" in out
    assert "0/4" not in out and "Score:" not in out


def test_terminal_does_not_obey_candidate_markup_or_escapes(report):
    output = "[bold red]FAKE PASS[/] \x1b[2J cleared?"
    report.checks[2] = report.checks[2].model_copy(update={"output": output})
    console = Console(width=80, record=True, force_terminal=True, color_system="truecolor")
    render_terminal(report, console)
    text = console.export_text()
    assert "[bold red]FAKE PASS[/]" in text
    assert "\\x1b[2J" in text and "\x1b[2J" not in console.export_text(styles=True)


def test_terminal_caps_long_output(report):
    out = _terminal(report)
    assert out.count("step loss=0.5") < 30
    assert "more lines not shown here" in out


def test_big_text_draws_three_lines():
    lines = big_text("3 / 10")
    assert len(lines) == 3 and all(set(line) <= set("█▀▄ ") for line in lines)


# --- write_reports ----------------------------------------------------------------------------


def test_write_reports_writes_requested_files(report, tmp_path):
    out = tmp_path / "new" / "dir"
    written = write_reports(report, json_path=out / "r.json", md_path=out / "r.md")
    assert written == [out / "r.json", out / "r.md"]
    assert report_from_json((out / "r.json").read_text()) == report
    assert (out / "r.md").read_text() == render_markdown(report)
    assert not (out / "r.html").exists()
    write_reports(report, html_path=out / "r.html", audience="candidate")
    assert (out / "r.html").read_text() == render_html(report, audience="candidate")
    assert sorted(p.name for p in out.iterdir()) == ["r.html", "r.json", "r.md"]  # no temp files left


def test_write_reports_refuses_a_directory(report, tmp_path):
    with pytest.raises(UsageError, match=re.escape(str(tmp_path))):
        write_reports(report, html_path=tmp_path)


def test_write_reports_refuses_python_files(report, tmp_path):
    code = tmp_path / "attention.py"
    code.write_text("def f(): ...\n")
    with pytest.raises(UsageError, match="attention.py"):
        write_reports(report, md_path=tmp_path / "out.md", json_path=code)
    assert code.read_text() == "def f(): ...\n"
    assert not (tmp_path / "out.md").exists()  # every path is checked before anything is written
    with pytest.raises(UsageError, match="new.py"):
        write_reports(report, html_path=tmp_path / "new.py")
    link = tmp_path / "report.html"
    link.symlink_to(code)
    with pytest.raises(UsageError, match="report.html"):
        write_reports(report, html_path=link)


def test_every_format_shows_the_source_audit_and_the_spelling_behind_a_hit(report):
    """Tampering, dynamic access and private torch are named with where they were found, in every format;
    a runtime finding in a hidden check names the check, never its id, to a candidate."""
    hidden = HIDDEN_SECRETS[5]
    report.forbidden[0] = report.forbidden[0].model_copy(update={"via": "torch._scaled_dot_product_attention_math"})
    report.findings = [
        Finding(kind=FindingKind.TAMPERING, what="sys.modules", where="attention.py:8"),
        Finding(kind=FindingKind.DYNAMIC_ACCESS, what="getattr(torch, <computed name>)", where="attention.py:10"),
        Finding(kind=FindingKind.PRIVATE_TORCH, what="torch._C._nn", where="attention.py:12"),
        Finding(kind=FindingKind.TAMPERING, what="mode taken off the stack", where=hidden, how="runtime"),
    ]
    outputs = [_terminal(report), render_html(report, audience="panel"), render_markdown(report, audience="panel")]
    for out in outputs:
        for word in ("tampering", "dynamic access", "private torch", "sys.modules", "attention.py:10",
                     "torch._scaled_dot_product_attention_math"):
            assert word in out, word
    candidate = render_markdown(report, audience="candidate")
    # A runtime finding's text came from the sandbox: a candidate reads the judge's fixed words instead (issue 25).
    from grader.reports.redact import SANDBOX_TAMPERING

    assert SANDBOX_TAMPERING in candidate and "mode taken off the stack" not in candidate and hidden not in candidate


def test_a_forbidden_api_is_told_once_naming_the_file_as_it_was_submitted(report):
    """Issue 39: twelve lines for one API (one per check, ids mixed with titles), and the file named by the module it
    ran under (attention.py) when the candidate had submitted forbidden.py."""
    hits = [ForbiddenHit(api=SDPA, how="static", where="attention.py:14"),
            *(ForbiddenHit(api=SDPA, how="runtime", where=f"test_x.py::test_{i}", check=f"test_x.py::test_{i}")
              for i in range(12))]
    env = report.environment.model_copy(update={"submission_name": "forbidden.py"})
    report = report.model_copy(update={"forbidden": hits, "environment": env})
    for name, out in _all_formats(report).items():
        section = out[out.index("Forbidden APIs used"):]
        assert "forbidden.py line 14" in section and "attention.py:14" not in section, name
        assert "called during 12 checks: no credit for them" in section and "test_x.py::test_3" not in section, name
        assert section.count(SDPA) == 1, name


def test_hidden_checks_that_never_ran_are_not_run_not_failed(report):
    """The stub (or a file that does not import): "11 not run" beside "0 passed, 8 not passed" read as 8 failures."""
    checks = [c.model_copy(update={"status": Status.ERROR, "score": 0, "not_run": True}) for c in report.checks]
    stub = report.model_copy(update={"checks": checks, "score": 0, "untouched_stub": True})
    for name, out in _all_formats(stub, audience="candidate").items():
        text = " ".join(out.split())
        assert "2 hidden checks (5 points): 0 passed, 2 not run" in text and "not passed" not in text, name


def test_a_table_cell_is_cut_where_a_clause_ends_never_mid_word():
    message = ("used forbidden API torch.nn.utils.clip_grad_norm_: no credit for this check (your code raised "
               "ForbiddenAPIError: torch.nn.utils.clip_grad_norm_ is forbidden in this exercise)")
    assert preview(message) == "used forbidden API torch.nn.utils.clip_grad_norm_: no credit for this check …"
    assert preview("short") == "short"
    assert preview("word " * 40).endswith("word …")


# --- what the head of every format says (issue 26) ---------------------------------------------------


def _all_formats(report: Report, audience: str = "panel") -> dict[str, str]:
    console = Console(width=100, no_color=True, record=True)
    render_terminal(report, console, audience=audience)
    return {"terminal": console.export_text(), "html": html.unescape(render_html(report, audience=audience)),
            "markdown": render_markdown(report, audience=audience).replace("\\", "")}


def gpu_skipped_report(hidden_gpu: bool = False) -> Report:
    """21 points earned of 21 counted; two GPU checks worth 4 points skipped without a GPU."""
    checks = [CheckResult(id=f"test_cpu.py::test_{i}", name=f"CPU check {i}", status=Status.PASSED, score=3,
                          max_score=3, visibility=Visibility.VISIBLE) for i in range(7)]
    checks += [CheckResult(id=f"test_gpu.py::test_cuda_{i}", name=f"CUDA check {i}", status=Status.SKIPPED, score=0,
                           max_score=2, gpu=True, visibility=Visibility.HIDDEN if hidden_gpu else Visibility.VISIBLE,
                           skipped_for=SkipReason.NO_GPU,
                           message="no GPU in the sandbox (its torch 2.13.0 is a CPU build: GPU gradings use the "
                                   "CUDA image)") for i in range(2)]
    score, max_score = total(checks)
    return Report(exercise="amp", title="Mixed precision", graded=True, checks=checks, score=score, max_score=max_score)


@pytest.mark.parametrize("audience", ["panel", "candidate"])
def test_the_headline_says_which_checks_did_not_run_and_why_in_every_format(audience):
    """Issue 26: "21/21 (100%)" with two GPU checks (4 points) left out said only "2 skipped"."""
    for fmt, text in _all_formats(gpu_skipped_report(hidden_gpu=audience == "candidate"), audience).items():
        flat = " ".join(text.split())
        assert "2 GPU checks (4 points) not run: no GPU in the sandbox" in flat, (fmt, flat[:600])
        head = flat.split("Checks")[0]  # by the score, before the table
        assert "21" in head and "2 GPU checks (4 points) not run" in head, fmt
    view_line = __import__("grader.reports.render", fromlist=["scorecard_view"]).scorecard_view(
        gpu_skipped_report()).headline
    assert view_line.startswith("21/21 (100%) · 2 GPU checks (4 points) not run: no GPU in the sandbox")


def test_status_counts_read_as_english():
    checks = [CheckResult(id=f"t.py::e{i}", name=f"e{i}", status=Status.ERROR, score=0, max_score=1,
                          visibility=Visibility.VISIBLE, message="your code raised TypeError") for i in range(11)]
    checks += [CheckResult(id="t.py::t", name="t", status=Status.TIMEOUT, score=0, max_score=1,
                           visibility=Visibility.VISIBLE, message="ran past its deadline")]
    report = Report(exercise="x", graded=True, checks=checks, score=0, max_score=12)
    for fmt, text in _all_formats(report).items():
        assert "! 11 errors" in text and "◷ 1 timed out" in text, fmt
        assert "11 error " not in text and "11 error<" not in text, fmt


def test_a_passed_hidden_check_never_reads_details_withheld():
    checks = [CheckResult(id="t.py::ok", name="Hidden and passed", status=Status.PASSED, score=1, max_score=1,
                          visibility=Visibility.HIDDEN),
              CheckResult(id="t.py::bad", name="Hidden and failed", status=Status.FAILED, score=0, max_score=1,
                          visibility=Visibility.HIDDEN, message="secret")]
    report = Report(exercise="x", graded=True, checks=checks, score=1, max_score=2)
    for fmt, text in _all_formats(report, "candidate").items():
        rows = text.split("<tr>") if fmt == "html" else text.splitlines()  # a table row, in each format
        [passed] = [r for r in rows if "Hidden and passed" in r]
        [failed] = [r for r in rows if "Hidden and failed" in r and ("✗" in r or "failed</span>" in r)]
        assert "withheld" not in passed, (fmt, passed)
        assert "withheld" in failed, (fmt, failed)  # the failed one still says so


def test_an_outcome_diagnosis_names_no_mutant_in_any_format():
    from grader.reports.model import Diagnosis

    outcome = Diagnosis(kind="outcome", description="every lost check timed out (5 of 5): no answer came back to "
                        "compare", matched=0, failed=5, signature=0, answers_only=False)
    report = mixed_report().model_copy(update={"diagnosis": [outcome]})
    for fmt, text in _all_formats(report).items():
        assert "no named mistake: every lost check timed out (5 of 5)" in " ".join(text.split()), fmt
        assert "mutant )" not in text and "mutant ``" not in text and "mutant <code></code>" not in text, fmt


def test_a_warning_keeps_its_code_through_json_and_an_old_plain_warning_reads_as_unclassified():
    from grader.reports.warning import ReportWarning, WarningCode

    new = mixed_report().model_copy(update={"warnings": [ReportWarning(code=WarningCode.EMPTY_FILE, message="empty")]})
    assert report_from_json(new.to_json()).warnings == new.warnings
    old = json.loads(new.to_json())
    old["warnings"] = ["written before codes"]
    assert report_from_json(json.dumps(old)).warnings == [ReportWarning(code=WarningCode.UNCLASSIFIED,
                                                                         message="written before codes")]
    assert render_markdown(report_from_json(json.dumps(old))).count("written before codes") == 1
