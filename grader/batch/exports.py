"""The batch's machine-readable outputs: summary.csv, results.jsonl, scorecards, Gradescope files.

All of them are rebuilt from the rows (and the stored reports) at the end of each
run, so they always agree with the store and with each other. A row that was not
graded has an empty score everywhere and no Gradescope file: an importer can
never read it as a zero.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from grader.atomic import atomic_write
from grader.batch.items import ExerciseItems
from grader.batch.model import Row
from grader.batch.outdir import candidate_dir
from grader.reports.model import Report, Status, Visibility
from grader.reports.render import write_reports

SUMMARY_HEAD = ["candidate", "exercise", "score", "max_score", "status", "sandbox"]
#: Spreadsheet programs run a cell starting with these as a formula (CSV injection).
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def write_summary_csv(rows: list[Row], path: Path) -> None:
    """One row per (candidate, exercise): its status and the sandbox that graded it (``docker``, ``docker
    (runsc)``, ``local``: not isolated; empty when nothing was graded), a column per check (points earned),
    then the flags (forbidden, tampering, dynamic_access, private_torch, timeout, error, skipped,
    not_isolated, check_error, check_counted, similar, published), the diagnosis (``diagnosis_cell``), the reason,
    the published answer the submission matches (``solutions/attention/attention.py 0.97``), and last the
    file's provenance: the sha256 graded, ``handin`` (``checked``: its HANDIN.toml agrees; ``differs``; ``none``:
    not collected from a hand-in), ``handin_sha256`` (what the record says) and ``handins`` (how many)."""
    checks: list[tuple[str, str]] = []  # (exercise, check id), in first-seen order
    for row in rows:
        for c in row.report.checks if row.report else []:
            if (row.exercise, c.id) not in checks:
                checks.append((row.exercise, c.id))
    header = SUMMARY_HEAD + [f"{ex}::{check}" for ex, check in checks] + ["flags", "diagnosis", "reason", "published",
                                                                         *PROVENANCE_HEAD]
    with atomic_write(path) as f:
        out = csv.writer(f)
        out.writerow(header)
        for row in rows:
            # Points only where the row has a score (a check error's report has none), and none for a check
            # that did not run (skipped: it counts toward neither score nor maximum).
            earned = {(row.exercise, c.id): _num(c.score) for c in (row.report.checks if row.report else [])
                      if c.status is not Status.SKIPPED} if row.status.scored else {}
            out.writerow([_cell(row.candidate), _cell(row.exercise), _num(row.score), _num(row.max_score),
                          row.status.value, row.sandbox or "", *[earned.get(k, "") for k in checks],
                          " ".join(row.flags), _cell(diagnosis_cell(row.report)), _cell(row.reason),
                          _cell(published_cell(row)), *provenance_cells(row)])


#: summary.csv's last columns: where the graded file came from (grader.batch.provenance).
PROVENANCE_HEAD = ["sha256", "handin", "handin_sha256", "handins"]


def provenance_cells(row: Row) -> list[str]:
    came = row.provenance
    if came is None:
        return [row.sha256 or "", "none" if row.sha256 else "", "", ""]
    return [row.sha256 or "", came.state, _cell(came.handin_sha256 or ""), str(came.handins)]


def published_cell(row: Row) -> str:
    """The published answer a row matches, and how closely: ``solutions/attention/attention.py 0.97``."""
    m = row.published
    return "" if m is None else f"{m.file.label} {m.similarity:.2f}"


def diagnosis_cell(report: Report | None) -> str:
    """The named mistakes in one cell: ``mutant (matched/failed): description``, ``; `` between them."""
    if report is None:
        return ""
    return "; ".join(f"{d.mutant} ({d.matched}/{d.failed}): {d.description}" if d.kind == "mistake" else d.line
                     for d in report.diagnosis)


def write_results_jsonl(rows: list[Row], path: Path) -> None:
    with atomic_write(path) as f:
        for row in rows:
            f.write(json.dumps({
                "candidate": row.candidate, "exercise": row.exercise, "status": row.status.value,
                "score": row.score, "max_score": row.max_score, "reason": row.reason, "flags": row.flags,
                "sha256": row.sha256, "source": row.source, "attempts": row.attempts,
                "sandbox": row.sandbox, "isolated": row.isolated if row.report is not None else None,
                "exercise_version": row.report.environment.exercise_version if row.report else None,
                "exercise_fingerprint": row.report.environment.exercise_fingerprint if row.report else None,
                "scorecard": row.scorecard,
                "diagnosis": [d.model_dump() for d in row.report.diagnosis] if row.report else [],
                "published": None if row.published is None else {
                    "file": row.published.file.label, "similarity": row.published.similarity,
                    "public": row.published.file.public},
                "handin": None if row.provenance is None else {
                    "state": row.provenance.state, "sha256": row.provenance.handin_sha256,
                    "handins": row.provenance.handins, "disagreement": row.provenance.disagreement},
            }) + "\n")


ITEMS_HEAD = ["exercise", "check", "name", "points", "ran", "skipped", "full_points", "difficulty", "discrimination",
              "flags", "note", "graded", "reliability", "reliability_method", "reliability_note"]


def write_items_csv(analysis: list[ExerciseItems], path: Path) -> None:
    """``items.csv``: one row per check of each exercise (grader.batch.items), the exercise's figures repeated.

    A figure that is undefined, or not shown because too few candidates were graded, is an
    empty cell (never "nan"), and ``note`` says why; flags are space-separated words.
    """
    with atomic_write(path) as f:
        out = csv.writer(f)
        out.writerow(ITEMS_HEAD)
        for ex in analysis:
            for item in ex.items:
                out.writerow([_cell(ex.exercise), _cell(item.check), _cell(item.name), _num(item.points), item.ran,
                              item.skipped, item.full, _ratio(item.difficulty), _ratio(item.discrimination),
                              " ".join(item.flags), _cell(item.note or ex.why_not_shown), ex.graded,
                              _ratio(ex.reliability), ex.method or "", _cell(ex.reliability_note)])


def write_scorecards(rows: list[Row], out: Path) -> None:
    """``candidates/<candidate>/<exercise>.json|.html`` (panel audience) and ``.../<exercise>/results.json``."""
    for row in rows:
        if row.report is None:
            continue
        base = candidate_dir(out, row.candidate)
        report = row.report.model_copy(update={"candidate": row.candidate})  # named on the page and in its title
        write_reports(report, json_path=base / f"{row.exercise}.json", html_path=base / f"{row.exercise}.html",
                      audience="panel")
        if not report.graded:  # a check error: its scorecard says which check broke; no score to import
            continue
        with atomic_write(base / row.exercise / "results.json") as f:
            json.dump(gradescope(report), f, indent=2)


def gradescope(report: Report) -> dict:
    """The report in Gradescope's autograder ``results.json`` format (tests with score/max_score/status)."""
    return {
        "score": report.score,
        "execution_time": round(report.duration_s),
        "output": "; ".join(w.message for w in report.warnings),
        "tests": [
            {
                "name": c.name,
                "number": str(i),
                "score": c.score,
                "max_score": c.max_score,
                "status": "passed" if c.status is Status.PASSED else "failed",
                "visibility": "visible" if c.visibility is Visibility.VISIBLE else "hidden",
                "output": c.message if c.status is not Status.PASSED else "",
                "tags": [c.status.value],
            }
            for i, c in enumerate(report.checks, 1)
            if c.status is not Status.SKIPPED
        ],
        "extra_data": {"grader": {"exercise": report.exercise, **report.environment.model_dump(
            include={"submission_sha256", "exercise_version", "exercise_fingerprint", "image_id", "hypothesis_seed",
                     "grader_version"})}},
    }


def _num(value: float | None) -> str:
    if value is None:
        return ""
    return str(int(value)) if value == int(value) else f"{value:.4g}"


def _ratio(value: float | None) -> str:
    """Four decimals: what a spreadsheet needs, and no float noise (0.30000000000000004)."""
    return "" if value is None else f"{value:.4f}"


def _cell(text: str) -> str:
    return "'" + text if text.startswith(_FORMULA_START) else text
