"""``grader validate``'s printing: each problem said once, in full, and the summary one line per failing exercise
(it once printed a patch that does not apply three times: as a rule, as the exercise's problem, in the summary)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console

from grader.authoring.findings import Finding, Rule
from grader.cli.validate_output import print_result, print_summary, write_json
from grader.host.validation import ExerciseValidation, Verdict
from grader.reports.model import Report

PATCH = "demo/mutants/adds.diff: hunk 1 does not apply to demo.py: line 10 is 'x + 1'"


def validation() -> tuple[ExerciseValidation, list[Finding]]:
    lost = Report(exercise="demo", graded=True, score=1, max_score=3)
    full = Report(exercise="demo", graded=True, score=3, max_score=3)
    result = ExerciseValidation("demo", verdicts=[
        Verdict("reference", Path("demo.py"), lost, problem="lost points on Returns x * factor"),
        Verdict("variant", Path("copy.py"), full)], problems=[PATCH, "no mutants in solutions/demo/mutants"])
    findings = [Finding(Rule.LAYOUT_SOURCE, Path("solutions/demo/mutants/adds.diff"),
                        PATCH + ". Make the patch again against today's reference (AUTHORING.md, section 6)."),
                Finding(Rule.PROMPT_LEVEL, Path("exercises/demo/README.md"), "the prompt says `Level: senior.`")]
    return result, findings


def printed(do) -> str:
    console = Console(width=300, record=True, color_system=None)
    do(console)
    return console.export_text()


def test_each_problem_is_said_once_and_the_summary_names_what_failed():
    result, findings = validation()
    text = printed(lambda c: print_result(c, result, findings, strict=False, gpus=False))
    assert PATCH not in text  # the rule said it before grading, with its fix
    assert text.count("lost points on Returns x * factor") == 1 and "no mutants in solutions/demo/mutants" in text
    summary = printed(lambda c: print_summary(c, [result], {"demo": findings}, strict=False))
    assert summary.strip() == ("demo: FAILED: reference demo.py; 1 problem(s) of the exercise; rule layout-source; "
                               "rule prompt-level (said above)")
    assert "lost points" not in summary and PATCH not in summary


def test_a_warning_fails_nothing_unless_strict():
    ok = ExerciseValidation("demo", verdicts=[Verdict("reference", Path("demo.py"),
                                                       Report(exercise="demo", graded=True, score=3, max_score=3))])
    warning = [Finding(Rule.PROMPT_TEMPLATE, Path("README.md"), "the prompt is still the template")]
    assert printed(lambda c: print_summary(c, [ok], {"demo": warning}, strict=False)).strip() == ""
    assert "rule prompt-template" in printed(lambda c: print_summary(c, [ok], {"demo": warning}, strict=True))


def test_json_holds_every_verdict_and_finding(tmp_path):
    result, findings = validation()
    write_json(tmp_path / "v.json", [result], {"demo": findings}, strict=False)
    [exercise] = json.loads((tmp_path / "v.json").read_text())["exercises"]
    assert exercise["ok"] is False and [v["kind"] for v in exercise["verdicts"]] == ["reference", "variant"]
    assert exercise["verdicts"][0]["problem"] == "lost points on Returns x * factor"
    assert [f["rule"] for f in exercise["findings"]] == ["layout-source", "prompt-level"]
