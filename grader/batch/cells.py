"""One cell of the panel's score table: a score, or a status word with its reason, and its flags.

Colour is never the only cue: every state has a word, and the reason a row was not
scored is both visible and in the cell's ``title``. A not-graded row has no sort
value (it sorts last in either direction) and a candidate with one has no total:
the infrastructure failing is never turned into a 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from grader.batch.model import Row, RowStatus
from grader.batch.similarity_page import pair_anchors
from grader.reports.model import FINDING_LABELS, Report
from grader.reports.headline import fmt_points, not_counted_lines

#: The word a cell shows for each status that is not a plain score.
WORDS = {
    RowStatus.NOT_GRADED: "not graded — rerun",
    RowStatus.MISSING: "missing",
    RowStatus.EMPTY: "empty",
    RowStatus.INVALID: "invalid",
    RowStatus.UNTOUCHED_STUB: "untouched stub",
    RowStatus.CHECK_ERROR: "not graded — check error",
    RowStatus.UNREADABLE: "unreadable",
    RowStatus.AMBIGUOUS: "ambiguous",
    RowStatus.UNKNOWN_EXERCISE: "unknown exercise",
}
FLAG_LABELS = {"forbidden": "forbidden API", "subset": "outside the subset", "timeout": "timeout", "error": "crash", "similar": "similar",
               "published": "published answer", "skipped": "checks not run", "not_isolated": "not isolated", "check_error": "check error",
               "check_counted": "check broke on answer", "handin": "hand-in checked",
               "resembles_published": "resembles a published answer",
               "handin_differs": "hand-in record differs",
               **{kind.value: label for kind, label in FINDING_LABELS.items()}}
FINDING_KINDS = frozenset(kind.value for kind in FINDING_LABELS)
MAX_SIMILAR_FLAGS = 3

#: (candidate, exercise) -> [(pair number, its anchor on similarity.html, the other candidate, similarity)]
Similar = dict[tuple[str, str], list[tuple[int, str, str, float]]]


@dataclass(frozen=True)
class Flag:
    kind: str  # forbidden, timeout, error, similar, ...: a CSS class
    label: str
    title: str = ""
    href: str | None = None


@dataclass(frozen=True)
class Cell:
    status: str  # RowStatus value, or "none" when there is no row at all
    text: str  # "7/10", "not graded — rerun", "missing", ...
    sort: str  # numeric sort key; "" sorts last whichever the direction
    href: str | None = None
    reason: str = ""
    show_reason: bool = False
    flags: list[Flag] = field(default_factory=list)


def similar_by_row(pairs: list) -> Similar:
    """Index similarity pairs by the rows they involve, with the anchors similarity.html gives them."""
    anchors = pair_anchors(pairs)
    out: Similar = {}
    for n, p in enumerate(pairs, start=1):
        for me, other in ((p.a, p.b), (p.b, p.a)):
            out.setdefault((me.candidate, p.exercise), []).append((n, anchors[p], other.candidate, p.similarity))
    return out


def handin_flag(row: Row) -> Flag:
    """Where a collected file came from (grader.batch.provenance): its sha256, checked against its hand-in record."""
    came = row.provenance
    more = f"; {came.handins} hand-ins collected, the newest graded" if came.handins > 1 else ""
    if came.checked:
        return Flag("handin", f"hand-in {(row.sha256 or '')[:10]}, checked",
                    f"graded file sha256 {row.sha256}: the same as its HANDIN.toml{more}")
    return Flag("handin_differs", "hand-in record differs", f"graded file sha256 {row.sha256}: {came.disagreement}"
                                                           f"{more}")


def _flags(row: Row, similar: Similar) -> list[Flag]:
    report = row.report
    out = []
    for kind in row.flags:  # filled from the report by the batch runner (model.flags_for)
        if kind == "similar":
            continue  # from the pairs below, which say with whom
        if kind in ("published", "resembles_published"):
            if row.published is not None:  # names the file, links to both sources side by side
                out.append(Flag(kind, row.published.line, "evidence, not proof: the similarity report shows both "
                                "sources side by side", f"similarity.html#{row.published.anchor}"))
            else:
                out.append(Flag("published", FLAG_LABELS[kind], "see the similarity report", "similarity.html"))
            continue
        title = ""
        load_error = report.load_error if report is not None else None
        if kind == "error" and load_error is not None and load_error.found in ("sandbox", "subset"):
            if load_error.found == "sandbox":  # no check crashed: the file never imported
                out.append(Flag(kind, load_error.headline, load_error.summary))
            continue  # refused by the subset: nothing ran, its flag and reason say why
        if kind == "forbidden" and report is not None:
            title = "; ".join(f"{h.api} ({h.how}, {h.where})" for h in report.forbidden)
        elif kind == "subset" and report is not None:
            title = "; ".join(f"{v.where}: {v.text}" + (f": {v.fix}" if v.fix else "") for v in report.violations)
        elif kind in FINDING_KINDS and report is not None:
            title = "; ".join(f"{f.what} ({f.how}, {f.where})" for f in report.findings if f.kind.value == kind)
        elif kind in ("timeout", "error", "check_error") and report is not None:
            title = "; ".join(c.name or c.id for c in report.checks if c.status.value == kind)
        elif kind == "skipped" and report is not None:
            title = "; ".join(not_counted_lines(report.checks))
        elif kind == "check_counted" and report is not None:
            title = ("the check's own code raised on this answer but not on the exercise's reference, so it counts as "
                     "a failure: " + "; ".join(f"{c.name or c.id} ({c.check_error})" for c in report.checks
                                              if c.check_error is not None))
        elif kind == "not_isolated":
            title = "graded in the local sandbox: the candidate's code ran as the grader's user, not in Docker"
        label = FLAG_LABELS.get(kind, kind)
        if kind == "skipped" and report is not None:
            skipped = [c for c in report.checks if c.status.value == "skipped"]
            kind_word = "GPU check" if all(c.gpu for c in skipped) else "check"
            label = f"{len(skipped)} {kind_word}{'s' if len(skipped) != 1 else ''} not run"
        out.append(Flag(kind, label, title))
    if row.provenance is not None:
        out.append(handin_flag(row))
    matches = similar.get((row.candidate, row.exercise), [])
    for n, anchor, other, sim in matches[:MAX_SIMILAR_FLAGS]:
        out.append(Flag("similar", f"similar to {other} ({sim:.0%})", f"pair {n} in the similarity report",
                        f"similarity.html#{anchor}"))
    if len(matches) > MAX_SIMILAR_FLAGS:
        out.append(Flag("similar", f"+{len(matches) - MAX_SIMILAR_FLAGS} more similar", "", "similarity.html"))
    elif "similar" in row.flags and not matches:
        out.append(Flag("similar", "similar", "see the similarity report", "similarity.html"))
    return out


def first_violation(report: Report) -> str:
    """``line 3: the module `os` is not part of ... (+1 more)``: why the subset refused the file, shown in its row
    (every violation is on the scorecard and in the subset flag's title); empty when it did not."""
    if not report.violations:
        return ""
    first, more = report.violations[0], len(report.violations) - 1
    return f"{first.where}: {first.text}" + (f" (+{more} more)" if more else "")


def cell(row: Row | None, similar: Similar, max_score: float | None) -> Cell:
    """The cell for one (candidate, exercise); ``row`` is None when the batch has no row for it."""
    if row is None:
        return Cell("none", "—", "", reason="no result recorded for this exercise")
    flags = _flags(row, similar)
    if row.status is RowStatus.GRADED and row.score is not None:
        text = f"{fmt_points(row.score)}/{fmt_points(row.max_score or max_score or 0)}"
        refused = first_violation(row.report) if row.report is not None else ""
        return Cell("graded", text, repr(float(row.score)), row.scorecard, refused or row.reason, bool(refused), flags)
    scored = row.status.scored and row.score is not None
    text = WORDS.get(row.status, row.status.value) + (" · scored 0" if scored and row.score == 0 else "")
    return Cell(row.status.value, text, repr(float(row.score)) if scored else "", row.scorecard,
                row.reason or WORDS.get(row.status, ""), row.status is not RowStatus.MISSING, flags)


def total(cells: list[Cell], maxima: dict[str, float]) -> Cell:
    """A candidate's total; none while a row awaits a rerun, since a partial sum would compare as a score."""
    if all(c.status == "none" for c in cells):
        return Cell("none", "—", "", reason="no results for this candidate")
    if broken := sum(c.status == RowStatus.CHECK_ERROR.value for c in cells):
        return Cell("incomplete", "incomplete — check error", "", show_reason=True,
                    reason=f"no total: {broken} grading{'s' if broken != 1 else ''} hit a check error (the grader's bug)")
    if rerun := sum(c.status == RowStatus.NOT_GRADED.value for c in cells):
        return Cell("incomplete", "incomplete — rerun", "", reason=f"no total until rerun: {rerun} not graded",
                    show_reason=True)
    got = sum(float(c.sort) for c in cells if c.sort)  # missing adds 0; so do empty and invalid files
    return Cell("total", f"{fmt_points(got)}/{fmt_points(sum(maxima.values()))}", repr(got))
