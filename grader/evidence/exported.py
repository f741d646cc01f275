"""A batch's tables (``summary.csv``, ``results.jsonl``) against its store: what a panel reads must be what it decided.

Every export is rebuilt from the store at the end of each run, so after a run they agree;
one edited afterwards (a score raised in the CSV a panel opens in a spreadsheet) is a
difference ``grader regrade OUTDIR`` names, as it names an edited per-candidate JSON. The
score, the max score and the flags a report makes are compared; ``similar`` and ``published``
come from the batch's similarity pass, not from one report, and are left out here.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass
from pathlib import Path

from grader.reports.derived import report_flags
from grader.reports.model import Report

#: Flags the similarity pass adds to a row: about the batch, not recorded in the report.
BATCH_FLAGS = ("similar", "published")
TABLES = ("summary.csv", "results.jsonl")


@dataclass(frozen=True)
class Exported:
    score: float | None
    max_score: float | None
    flags: tuple[str, ...]


def read_tables(out_dir: Path) -> dict[str, dict[tuple[str, str], Exported] | str]:
    """Each table the folder has: its rows by (candidate, exercise), or why it cannot be read."""
    out: dict[str, dict[tuple[str, str], Exported] | str] = {}
    for name in TABLES:
        path = Path(out_dir) / name
        if not path.is_file():
            continue
        try:
            out[name] = _summary(path) if name.endswith(".csv") else _results(path)
        except (OSError, ValueError, KeyError, TypeError) as e:
            out[name] = f"cannot be read ({type(e).__name__})"
    return out


def table_differences(tables: dict, candidate: str, exercise: str, report: Report) -> list[str]:
    """One line per table whose row for (candidate, exercise) says otherwise than the stored ``report``."""
    found = []
    flags = tuple(report_flags(report))
    for name, rows in tables.items():
        if isinstance(rows, str):
            found.append(f"{name} {rows}")
            continue
        row = rows.get((candidate, exercise))
        if row is None:
            found.append(f"{name} has no row for it")
            continue
        for what, theirs, ours in (("score", row.score, report.score), ("max_score", row.max_score, report.max_score)):
            if theirs is None or not math.isclose(theirs, ours, rel_tol=1e-3, abs_tol=1e-6):  # the CSV keeps 4 digits
                found.append(f"{name} disagrees with the store: {what}: {ours:g} vs {_n(theirs)}")
        mine = tuple(f for f in row.flags if f not in BATCH_FLAGS)
        if mine != flags:
            found.append(f"{name} disagrees with the store: flags: {' '.join(flags) or '(none)'} vs "
                         f"{' '.join(mine) or '(none)'}")
    return found


def _summary(path: Path) -> dict[tuple[str, str], Exported]:
    with open(path, newline="", encoding="utf-8") as f:
        return {(_uncell(r["candidate"]), _uncell(r["exercise"])): Exported(
            _float(r["score"]), _float(r["max_score"]), tuple((r.get("flags") or "").split()))
            for r in csv.DictReader(f)}


def _results(path: Path) -> dict[tuple[str, str], Exported]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        out[(str(r["candidate"]), str(r["exercise"]))] = Exported(
            _float(r.get("score")), _float(r.get("max_score")), tuple(map(str, r.get("flags") or ())))
    return out


def _uncell(text: str) -> str:
    """A CSV cell as the name it was: ``grader.batch.exports`` prefixes a formula-like name with ``'``."""
    return text[1:] if text.startswith("'") and text[1:2] in ("=", "+", "-", "@", "\t", "\r") else text


def _float(value) -> float | None:
    if value in (None, ""):
        return None
    return float(value)


def _n(value: float | None) -> str:
    return "(empty)" if value is None else f"{value:g}"
