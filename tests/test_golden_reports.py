"""Every report the grader makes for a fixed set of submissions, pinned byte for byte (issue 28).

Each case is graded in the local sandbox and its JSON report (the panel's, and the candidate's
redacted copy), and its Markdown scorecard rendered from it, are compared with the files in
``tests/golden/reports/``. What cannot be the same from one run to the next is normalised first,
by field name only (:func:`normalised`): timestamps, durations, the graded file's temporary path,
the grader's and torch's versions, and the clock's figures in a timeout's message. Anything else
that changes (a score, a status, a message, a warning, a diagnosis, a follow-up, the order of
anything) fails here, naming the case.

The set: the toy's corpus (reference, variant, both mutants), toy answers made for this test
(``fixtures/golden_submissions/``: a file that prints markup, a NaN, an exception, a timeout, a parse
error, a file outside the subset), the stub answered alone and graded for real; and (``slow``) the reference
and held-in mutants of seven exercises, a forbidden API, NaN answers and the stub answered alone
among them. Record again after an intended change, and read the diff:

    GRADER_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_golden_reports.py
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from grader.corpus import corpus
from grader.exercise import EXERCISES_DIR, load_exercise
from grader.host.grading import grade
from grader.reports.model import Report
from grader.reports.redact import for_audience
from grader.reports.render import render_markdown

HERE = Path(__file__).parent
GOLDEN = HERE / "golden" / "reports"
TOY = HERE / "fixtures" / "toy"
TOY_SOLUTIONS = HERE / "fixtures" / "toy_solutions"
MADE = HERE / "fixtures" / "golden_submissions"
UPDATE = os.environ.get("GRADER_UPDATE_GOLDEN") == "1"


@dataclass(frozen=True)
class Case:
    name: str
    exercise: Path
    file: str | None  # a path under the repository, "corpus:<kind>:<stem>" for a solution, None for the stub
    answer_alone: bool = True
    slow: bool = False


TOY_CASES = [
    Case("toy_reference", TOY, "tests/fixtures/toy/solution.py"),
    Case("toy_variant_loop", TOY, "tests/fixtures/toy_solutions/toy/variants/loop.py"),
    Case("toy_mutant_uses_mul", TOY, "tests/fixtures/toy_solutions/toy/mutants/uses_mul.py"),
    Case("toy_mutant_wrong_for_long", TOY, "tests/fixtures/toy_solutions/toy/mutants/wrong_for_long.py"),
    Case("toy_prints", TOY, "tests/fixtures/golden_submissions/toy_prints.py"),
    Case("toy_nan", TOY, "tests/fixtures/golden_submissions/toy_nan.py"),
    Case("toy_raises", TOY, "tests/fixtures/golden_submissions/toy_raises.py"),
    Case("toy_parse_error", TOY, "tests/fixtures/golden_submissions/toy_parse_error.py"),
    Case("toy_outside_subset", TOY, "tests/fixtures/golden_submissions/toy_outside_subset.py"),
    Case("toy_stub_alone", TOY, None),
    Case("toy_stub_graded", TOY, None, answer_alone=False),
    Case("toy_timeout", TOY, "tests/fixtures/golden_submissions/toy_hangs_on_nan.py", slow=True),
]

#: Seven exercises, each with its reference and (where it has one) a held-in mutant of a telling kind.
EXERCISE_CASES = [
    Case(f"{ex}_{stem or kind}", EXERCISES_DIR / ex, f"corpus:{kind}:{stem}", slow=True)
    for ex, kind, stem in [
        ("custom_layer", "reference", ""),
        ("custom_layer", "mutant", "uses_functional_linear"),  # a forbidden API
        ("custom_layer", "mutant", "no_value_error"),
        ("clip_grad_norm", "reference", ""),
        ("clip_grad_norm", "mutant", "returns_nan"),  # a NaN answer
        ("collate_fn", "reference", ""),
        ("collate_fn", "mutant", "mask_inverted"),
        ("early_stopping", "reference", ""),
        ("early_stopping", "mutant", "nan_improves"),
        ("label_smoothing_ce", "reference", ""),
        ("label_smoothing_ce", "mutant", "calls_forbidden_cross_entropy"),  # a whole file, a forbidden API
        ("kv_cache_decode", "reference", ""),
        ("kv_cache_decode", "mutant", "step_returns_nan"),
        ("warmup_cosine_scheduler", "reference", ""),
    ]
] + [Case("custom_layer_stub_alone", EXERCISES_DIR / "custom_layer", None, slow=True)]

CASES = TOY_CASES + EXERCISE_CASES

#: Fields whose value differs from run to run, by where they sit: replaced by a placeholder.
VARYING_REPORT = {"started_at": "<started_at>", "duration_s": 0.0}
VARYING_CHECK = {"duration_s": 0.0}
VARYING_ENVIRONMENT = {"grader_version": "<version>", "torch_version": "<version>",
                       "judge_torch_version": "<version>", "python_version": "<version>"}
#: In the text of a check or a load error (a traceback, a falsifying example), what names this run's places:
#: the judge's working folder (``grader-judge-XXXX``, where the sandbox's files are staged), the checkout's own
#: folder, and an object's address in a repr (``<CheckSandbox object at 0x7f...>``).
RUN_PLACES = [(re.compile(re.escape(tempfile.gettempdir()) + r"/grader-judge-[A-Za-z0-9_]+"), "<judge workdir>"),
              # pytest writes a path relative to the judge's folder where that is shorter: ``../fresh/grader/..``
              # for a checkout that shares its parent with the temporary folder (a clone under /tmp).
              (re.compile(r"(?<![\w./])(?:\.\./)+" + re.escape(os.path.relpath(
                  HERE.parent, os.path.commonpath([tempfile.gettempdir(), str(HERE.parent)]))) + "/"), "<repo>/"),
              (re.compile(re.escape(str(HERE.parent)) + "/"), "<repo>/"),
              (re.compile(r" object at 0x[0-9a-f]+>"), " object at 0x...>")]
#: The fields of a check that can quote them.
QUOTING_PATHS = ("message", "details", "output")
#: Where a timeout's message stops being the judge's fixed words and starts giving the clocks' figures.
CLOCK_FIGURES = (": it used ", ": the wall-clock ceiling ", ": the hard limit ")


def normalised(report: dict, submission: str) -> dict:
    """``report`` (a report's JSON as a dict) with what cannot repeat replaced, field by field."""
    out = {**report, **{k: v for k, v in VARYING_REPORT.items() if k in report}}
    out["environment"] = {**report["environment"], "submission_path": submission,
                          **{k: v for k, v in VARYING_ENVIRONMENT.items() if report["environment"].get(k) is not None}}
    out["checks"] = []
    for c in report["checks"]:
        check = {**c, **VARYING_CHECK, **{k: _workdir(c[k]) for k in QUOTING_PATHS if k in c}}
        if c["status"] == "timeout":
            check["message"] = _without_clock_figures(check["message"])
        if c.get("trace"):
            check["trace"] = _trace_workdir(c["trace"])
        out["checks"].append(check)
    if report.get("load_error"):
        out["load_error"] = {**report["load_error"], **{k: _workdir(report["load_error"][k])
                                                         for k in ("summary", "traceback")}}
        if report["load_error"].get("trace"):
            out["load_error"]["trace"] = _trace_workdir(report["load_error"]["trace"])
    return out


def _trace_workdir(trace: dict) -> dict:
    """A traceback as data with its frames' files (the sandbox's staged paths) normalised like text."""
    return {**trace, "frames": [{**f, "file": _workdir(f["file"])} for f in trace["frames"]]}


def _workdir(text: str) -> str:
    for place, placeholder in RUN_PLACES:
        text = place.sub(placeholder, text)
    return text


def _without_clock_figures(message: str) -> str:
    cut = min((message.find(m) for m in CLOCK_FIGURES if m in message), default=-1)
    return message if cut < 0 else message[:cut] + ": <clock figures>"


def _submission(case: Case, tmp: Path) -> tuple[Path | None, str]:
    """The file to grade and how the golden file names it (relative to the repository)."""
    if case.file is None:
        return None, "<stub>"
    if case.file.startswith("corpus:"):
        _, kind, stem = case.file.split(":")
        ex = load_exercise(case.exercise)
        item = next(i for i in corpus(ex) if i.kind == kind and (not stem or i.name == stem))
        return item.gradable(tmp), f"solutions/{ex.name}/{item.path.parent.name + '/' if stem else ''}{item.path.name}"
    return HERE.parent / case.file, case.file


def _compare(path: Path, actual: str) -> None:
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
    assert path.is_file(), f"no golden file {path.name}: record it with GRADER_UPDATE_GOLDEN=1"
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, f"{path.name} differs from its golden file (GRADER_UPDATE_GOLDEN=1 rewrites it)"


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name, marks=[pytest.mark.slow] if c.slow else [])
                                  for c in CASES])
def test_report_matches_golden(case: Case, tmp_path):
    path, named = _submission(case, tmp_path)
    report = grade(case.exercise, path, sandbox="local", shown_path=named, answer_alone=case.answer_alone)
    data = normalised(json.loads(report.to_json()), named)
    stable = Report.model_validate(data)  # the normalised report is still a report: it renders
    _compare(GOLDEN / f"{case.name}.json", json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    candidate = for_audience(stable, "candidate")
    _compare(GOLDEN / f"{case.name}.candidate.json", candidate.to_json() + "\n")
    _compare(GOLDEN / f"{case.name}.md", render_markdown(stable))


def test_normalising_keeps_everything_but_what_varies():
    """The normalisation touches the fields it names and nothing else (a field added to a report is compared)."""
    report = {"started_at": "2024-01-01T00:00:00+00:00", "duration_s": 3.2, "score": 1.0,
              "environment": {"submission_path": "/tmp/x/toy.py", "torch_version": "2.13.0", "cuda_version": None,
                              "sandbox": "local"},
              "checks": [{"status": "timeout", "duration_s": 1.5, "message": "the call to 'scale' ran past its 3 s "
                          "deadline: it used 3.0 of its 3 CPU-seconds (3.1 s by the clock)"},
                         {"status": "failed", "duration_s": 0.1, "message": "a: it used 3",
                          "details": f"File \"{tempfile.gettempdir()}/grader-judge-ab_12/stage/x.py\" "
                                     f"{HERE.parent}/grader/judge/expect.py:37 sandbox=<a.B object at 0x7f53ac>"}]}
    out = normalised(report, "toy.py")
    assert out == {"started_at": "<started_at>", "duration_s": 0.0, "score": 1.0,
                   "environment": {"submission_path": "toy.py", "torch_version": "<version>", "cuda_version": None,
                                   "sandbox": "local"},
                   "checks": [{"status": "timeout", "duration_s": 0.0,
                               "message": "the call to 'scale' ran past its 3 s deadline: <clock figures>"},
                              {"status": "failed", "duration_s": 0.0, "message": "a: it used 3",
                               "details": 'File "<judge workdir>/stage/x.py" <repo>/grader/judge/expect.py:37 '
                                          "sandbox=<a.B object at 0x...>"}]}


def test_a_path_pytest_wrote_relative_to_the_judges_folder_is_the_checkout_too():
    """A clone beside the temporary folder (``/tmp/fresh``) is quoted as ``../fresh/...`` by pytest."""
    tail = os.path.relpath(HERE.parent, os.path.commonpath([tempfile.gettempdir(), str(HERE.parent)]))
    report = {"environment": {}, "checks": [{"status": "failed", "details": f"../{tail}/grader/judge/expect.py:37"}]}
    assert normalised(report, "toy.py")["checks"][0]["details"] == "<repo>/grader/judge/expect.py:37"
