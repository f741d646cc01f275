"""Tests for the panel page (``grader.batch.panel``) and its chart data (``grader.batch.charts``).

Rows and reports are built by hand; nothing is graded. The HTML is read back with the
standard library's parser, cell by cell, the way the page's table is laid out.
``test_panel_browser.py`` checks the same page in a real browser.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from html.parser import HTMLParser

import pytest

from grader.batch.charts import histogram, pass_rates
from grader.batch.model import Row, RowStatus, flags_for
from grader.batch.panel import render_panel
from grader.reports.model import (CheckResult, Finding, FindingKind, ForbiddenHit, LoadError, Report, Status, Violation,
                                  ViolationCode, Visibility)

HOSTILE = "<img src=x onerror=alert(1)>"
SDPA = "torch.nn.functional.scaled_dot_product_attention"
EXERCISES = {"attention": "Scaled dot-product attention", "layernorm": "LayerNorm"}
CHECKS = [("test_shape.py::test_shape", "Output has the right shape", 1),
          ("test_softmax.py::test_rows", "Rows sum to one", 2),
          ("test_ref.py::test_reference", "Matches the reference", 7)]


@dataclass(frozen=True)
class Submission:  # stand-in for grader.batch.similarity.Submission: the panel reads attributes only
    candidate: str
    exercise: str
    source: str = ""
    score: float | None = None


@dataclass(frozen=True)
class Pair:
    exercise: str
    a: Submission
    b: Submission
    similarity: float


def graded(candidate: str, exercise: str, statuses: list[Status], *, forbidden: tuple[str, ...] = ()) -> Row:
    """A graded row whose report has one check per status, worth 1, 2 and 7 points (10 in all)."""
    checks = [CheckResult(id=cid, name=name, status=s, score=pts if s is Status.PASSED else 0, max_score=pts,
                          visibility=Visibility.VISIBLE) for (cid, name, pts), s in zip(CHECKS, statuses)]
    report = Report(exercise=exercise, graded=True, checks=checks,
                    score=sum(c.score for c in checks), max_score=sum(c.max_score for c in checks),
                    forbidden=[ForbiddenHit(api=api, how="static", where="attention.py:4") for api in forbidden])
    return Row(candidate, exercise, RowStatus.GRADED, report.score, report.max_score, report=report,
               flags=flags_for(report))


P, F, E = Status.PASSED, Status.FAILED, Status.ERROR


def batch() -> tuple[list[Row], list[Pair]]:
    rows = [
        graded("alice", "attention", [P, P, P]),  # 10
        graded("bob", "attention", [P, F, E]),  # 1, crashed
        graded("carol", "attention", [P, P, F], forbidden=(SDPA,)),  # 3, forbidden
        Row("dave", "attention", RowStatus.NOT_GRADED, reason="docker daemon died (3 attempts)"),
        graded("alice", "layernorm", [P, F, P]),  # 8
        Row("bob", "layernorm", RowStatus.MISSING, reason="no file in bob/layernorm/"),
        Row("carol", "layernorm", RowStatus.INVALID, 0, 10, reason="SyntaxError: invalid syntax (line 3)"),
        graded("dave", "layernorm", [P, P, P]),  # 10
        graded(HOSTILE, "attention", [F, F, F]),  # 0
        Row("erin", "notes", RowStatus.UNKNOWN_EXERCISE, reason="no exercise named 'notes'"),
    ]
    pairs = [Pair("attention", Submission("alice", "attention"), Submission("bob", "attention"), 0.97),
             Pair("attention", Submission("bob", "attention"), Submission("carol", "attention"), 0.91)]
    return rows, pairs


class Page(HTMLParser):
    """Every tag's attributes, plus the score table as {candidate: [cell, ...]} with text and links."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.table: dict[str, list[dict]] = {}
        self._row: list[dict] | None = None
        self._cell: dict | None = None
        self._in_body = False
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag == "tbody":
            self._in_body = True
        elif tag == "tr" and self._in_body:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = {"attrs": a, "parts": [], "links": []}
        elif tag == "a" and self._cell is not None:
            self._cell["links"].append(a.get("href"))

    def handle_endtag(self, tag):
        if tag == "tbody":
            self._in_body = False
        elif tag in ("td", "th") and self._cell is not None:
            self._cell["text"] = " ".join(" ".join(self._cell["parts"]).split())
            self._row.append(self._cell)
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.table[self._row[0]["parts"][0].strip()] = self._row[1:]  # keyed by the candidate's name
            self._row = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell["parts"].append(data)

    def bar_counts(self) -> list[list[int]]:
        """data-count of each histogram's bars, histogram by histogram."""
        out: list[list[int]] = []
        for tag, a in self.tags:
            if tag == "svg" and "hist" in a.get("class", ""):
                out.append([])
            elif tag == "g" and "data-count" in a:
                out[-1].append(int(a["data-count"]))
        return out


@pytest.fixture(scope="module")
def html() -> str:
    rows, pairs = batch()
    return render_panel(rows, pairs, exercises=EXERCISES, generated_at="2025-05-01 09:00",
                        problems=["stray file notes.txt at the top level"])


@pytest.fixture(scope="module")
def page(html) -> Page:
    return Page(html)


def test_graded_cells_show_score_and_link_to_the_scorecard(page):
    alice = page.table["alice"]
    assert [c["text"] for c in alice] == ["10/10 similar to bob (97%)", "8/10", "", "18/20"]  # looks like nothing
    assert alice[0]["links"] == ["candidates/alice/attention.html", "similarity.html#pair-1"]
    assert alice[1]["links"] == ["candidates/alice/layernorm.html"]
    assert alice[-1]["attrs"]["data-sort"] == "18.0" and "total" in alice[-1]["attrs"]["class"]


def test_not_graded_is_loud_never_zero_and_blocks_the_total(page, html):
    dave = page.table["dave"]
    assert dave[0]["text"] == "not graded — rerun docker daemon died (3 attempts)"
    assert dave[0]["attrs"]["title"] == "docker daemon died (3 attempts)"
    assert dave[0]["attrs"]["data-sort"] == ""  # sorts last, never as a 0
    assert "0/" not in dave[0]["text"]
    assert dave[-1]["text"].startswith("incomplete — rerun") and "/" not in dave[-1]["text"].split("(")[0]
    assert 'id="rerun"' in html and "1 submission was not graded — rerun the batch" in html


def test_missing_and_invalid_rows_say_why(page):
    bob, carol = page.table["bob"], page.table["carol"]
    assert bob[1]["text"] == "missing" and bob[1]["attrs"]["title"] == "no file in bob/layernorm/"
    assert carol[1]["text"] == "invalid · scored 0 SyntaxError: invalid syntax (line 3)"
    assert carol[1]["attrs"]["title"] == "SyntaxError: invalid syntax (line 3)"
    assert bob[-1]["text"] == "1/20" and carol[-1]["text"] == "3/20"  # missing and invalid add 0


def test_flags_name_what_to_look_at(page, html):
    bob, carol = page.table["bob"], page.table["carol"]
    assert "crash" in bob[0]["text"].split()
    assert bob[0]["links"][1:] == ["similarity.html#pair-1", "similarity.html#pair-2"]
    assert "similar to alice (97%)" in bob[0]["text"] and "similar to carol (91%)" in bob[0]["text"]
    assert "forbidden API" in carol[0]["text"] and f'title="{SDPA} (static, attention.py:4)"' in html
    assert "forbidden" not in page.table["alice"][0]["text"]


def test_source_audit_findings_are_flags_with_what_and_where():
    row = graded("frank", "attention", [P, P, P])
    row.report.findings = [Finding(kind=FindingKind.DYNAMIC_ACCESS, what="getattr(torch, <computed name>)",
                                   where="attention.py:10"),
                           Finding(kind=FindingKind.TAMPERING, what="sys.modules", where="attention.py:8")]
    row.flags = flags_for(row.report)
    html = render_panel([row], [], exercises=EXERCISES, generated_at="2025-05-01 09:00", problems=[])
    cell = Page(html).table["frank"][0]["text"]
    assert "tampering" in cell and "dynamic access" in cell
    assert 'title="sys.modules (static, attention.py:8)"' in html
    assert 'title="getattr(torch, &lt;computed name&gt;) (static, attention.py:10)"' in html


def _summary(html: str) -> str:
    return " ".join(html.split('id="summary">')[1].split("</div>")[0].split())


def _problems_listed(html: str) -> list[str]:
    if 'id="problems"' not in html:
        return []
    box = html.split('id="problems"')[1].split("</section>")[0]
    return [li.split("</li>")[0] for li in box.split("<li>")[1:]]


def test_summary_counts_and_layout_problems(page, html):
    summary = _summary(html)
    for part in ("<b>6</b> candidates", "<b>9</b> submissions", "<b>6</b> graded", "<b>1</b> invalid (scored 0)",
                 "<b>1</b> not graded (rerun)", "<b>1</b> missing", "<b>2</b> problems"):
        assert part in summary
    assert _problems_listed(html) == ["stray file notes.txt at the top level",
                                      "erin/notes: no exercise named &#39;notes&#39;"]
    assert page.table["erin"][0]["text"] == "—" and "notes/: no exercise named &#39;notes&#39;" in html


def test_header_counts_add_up_and_name_every_problem_they_count():
    """Every submission is counted once, files scored 0 as empty or invalid included; the problems count is
    the number of problems listed under it (it once said "4 problems" above a list of one)."""
    rows = [graded("ann", "attention", [P, P, P]), graded("ben", "attention", [F, F, F]),
            Row("cat", "attention", RowStatus.EMPTY, 0, 10, reason="cat/attention/attention.py is empty"),
            Row("dan", "attention", RowStatus.INVALID, 0, 10, reason="not valid Python (line 1)"),
            Row("eve", "attention", RowStatus.INVALID, 0, 10, reason="not valid Python (line 2)"),
            Row("fay", "attention", RowStatus.UNREADABLE, reason="fay/attention/ is a symbolic link"),
            Row("gus", "attention", RowStatus.AMBIGUOUS, reason="2 .py files in gus/attention/"),
            Row("hal", "attention", RowStatus.MISSING, reason="no folder hal/attention/"),
            Row("ivy", "attention", RowStatus.NOT_GRADED, reason="docker daemon died")]
    html = render_panel(rows, [], exercises=EXERCISES, problems=["junk.txt: a file at the top level"])
    summary = _summary(html)
    counts = {"submissions": 8, "graded": 2, "empty (scored 0)": 1, "invalid (scored 0)": 2,
              "not graded (rerun)": 1, "missing": 1, "problems": 3}
    for label, n in counts.items():
        assert f"<b>{n}</b> {label}" in summary, (label, summary)
    assert 2 + 1 + 2 + 1 + 2 == counts["submissions"]  # graded, empty, invalid, not graded, problem rows
    assert _problems_listed(html) == ["junk.txt: a file at the top level",
                                      "fay/attention: fay/attention/ is a symbolic link",
                                      "gus/attention: 2 .py files in gus/attention/"]
    clean = render_panel(rows[:2], [], exercises=EXERCISES, problems=[])
    assert "<b>0</b> problems" in _summary(clean) and not _problems_listed(clean)
    assert "scored 0" not in _summary(clean)  # a count that is 0 here is left out, not shown as noise


def test_hostile_candidate_name_is_escaped_everywhere(html, page):
    assert HOSTILE not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert page.table[HOSTILE][0]["links"] == ["candidates/%3Cimg%20src%3Dx%20onerror%3Dalert%281%29%3E/attention.html"]


def test_no_remote_assets(page, html):
    assert "http://" not in html and "https://" not in html and "@import" not in html
    refs = [a[k] for _, a in page.tags for k in ("src", "href") if k in a]
    assert refs and all(":" not in r.split("/")[0] and not r.startswith("//") for r in refs)


def test_histograms_count_only_graded_submissions(page, html):
    attention, layernorm = page.bar_counts()
    assert len(attention) == 11  # one bar per point value, 0..10
    assert {i: n for i, n in enumerate(attention) if n} == {0: 1, 1: 1, 3: 1, 10: 1}
    assert {i: n for i, n in enumerate(layernorm) if n} == {8: 1, 10: 1}
    assert "4 graded · out of 10 points · not counted below: 1 not graded (rerun)" in html
    assert "2 graded · out of 10 points · not counted below: 1 missing, 1 invalid (scored 0)" in html


def test_pass_rates_per_check(html):
    assert "Rows sum to one: 2/4 passed (50%)" in html  # attention: alice, carol passed; bob, hostile did not
    assert "Matches the reference: 1/4 passed (25%)" in html


def test_sorting_script_and_phone_layout_are_inline(html):
    assert '<meta name="viewport"' in html and "overflow-x: auto" in html
    assert 'aria-sort="ascending">Candidate' in html and "setAttribute(\"aria-sort\"" in html


def test_histogram_bins_for_fractional_scores():
    h = histogram([0, 2.5, 4.9, 5.0, 25, 30], 25, what="x")
    assert [b.count for b in h.bars] == [1, 2, 1, 0, 0, 0, 0, 0, 0, 2]  # [lo, hi); 25 and past-the-end 30 in the last
    tallest = max(h.bars, key=lambda b: b.count)
    assert tallest.height == pytest.approx(2 * h.bars[0].height) and tallest.y == h.top
    assert histogram([], 10, what="x") is None and histogram([1], None, what="x") is None


def test_histogram_bars_of_whole_points_put_full_marks_under_a_label_it_reaches():
    """attention is worth 22: full marks was drawn at "19.8" (ten bins of 2.2 points)."""
    h = histogram([0, 10, 21, 22, 22], 22, what="x")
    assert [b.label for b in h.bars] == ["0–2", "3–5", "6–8", "9–11", "12–14", "15–17", "18–20", "21–22"]
    assert [b.count for b in h.bars] == [1, 0, 0, 1, 0, 0, 0, 3]
    assert h.bars[-1].title == "21 to 22 points: 3 submissions" and h.bars[3].title == "9 to 11 points: 1 submission"
    assert [b.label for b in histogram([100], 100, what="x").bars][-1] == "99–100"  # at most ten bars of 11 points


def test_pass_rates_leave_skipped_checks_out_of_the_rate():
    rows = [graded("a", "x", [P, P, P]), graded("b", "x", [F, Status.SKIPPED, P])]
    rates = {r.name: r.text for r in pass_rates([r.report for r in rows])}
    assert rates == {"Output has the right shape": "1/2 passed (50%)",
                     "Rows sum to one": "1/1 passed (100%), 1 skipped", "Matches the reference": "2/2 passed (100%)"}
    assert Counter(r.percent for r in pass_rates([r.report for r in rows])) == Counter({50: 1, 100: 2})


def test_the_looks_like_column_names_each_graded_rows_diagnosis_by_exercise():
    """A candidate's diagnoses, one per exercise in column order, escaped; nothing for a row that has none."""
    from grader.reports.model import Diagnosis

    rows, pairs = batch()
    mistake = Diagnosis(mutant="m", description=f"mask read upside down {HOSTILE}", matched=2, failed=2, signature=2)
    for r in rows:
        if r.candidate == "alice" and r.exercise == "layernorm":
            r.report = r.report.model_copy(update={"diagnosis": [mistake]})
    html = render_panel(rows, pairs, exercises=EXERCISES)
    alice, bob = Page(html).table["alice"], Page(html).table["bob"]
    assert alice[-2]["text"] == f"layernorm looks like: mask read upside down {HOSTILE} (matches 2 of 2 failed checks)"
    assert alice[-2]["attrs"]["data-sort"].startswith("looks like: mask read upside down")
    assert bob[-2]["text"] == "" and bob[-2]["attrs"]["data-sort"] == ""  # sorts last
    assert HOSTILE not in html  # escaped like every other candidate-facing string


def test_header_parts_add_up_to_the_submissions_and_problems_to_what_is_listed():
    """Issue 26: "13 submissions · 11 graded · 1 invalid · 0 not graded · 3 missing · 2 problems" did not add up.
    The parts after "submissions:" partition them (stub, check error and unreadable rows included); missing is
    beside them; "problems" is what the box lists; an ignored notes file is counted nowhere."""
    from grader.reports.model import Environment

    stub = graded("cat", "attention", [E, E, E])
    stub.report = stub.report.model_copy(update={"untouched_stub": True})
    stub.status, stub.score, stub.flags = RowStatus.UNTOUCHED_STUB, 0, flags_for(stub.report)
    broken = Report(exercise="attention", graded=False, not_graded_reason="a check raised",
                    checks=[CheckResult(id="t.py::c", name="c", status=Status.CHECK_ERROR, score=0, max_score=1,
                                        visibility=Visibility.VISIBLE)], environment=Environment(sandbox="docker"))
    rows = [graded("ann", "attention", [P, P, P]), graded("ben", "attention", [F, F, F]), stub,
            Row("dan", "attention", RowStatus.INVALID, 0, 10, reason="not valid Python (line 1)"),
            Row("eve", "attention", RowStatus.CHECK_ERROR, report=broken, flags=flags_for(broken), reason="check error in c"),
            Row("fay", "attention", RowStatus.UNREADABLE, reason="fay/attention/ is a symbolic link"),
            Row("hal", "attention", RowStatus.MISSING, reason="no folder hal/attention/"),
            Row("ivy", "attention", RowStatus.NOT_GRADED, reason="docker daemon died")]
    html = render_panel(rows, [], exercises=EXERCISES, problems=["ann/attention.py: a Python file outside any "
                                                                 "exercise folder is not graded"],
                        ignored=["ann/README.txt: not a submission (only <candidate>/<exercise>/<file>.py is read)"])
    summary = _summary(html)
    parts = [int(x.split('"')[0]) for x in summary.split('data-part="')[1:]]
    assert "<b>7</b> submissions:" in summary and sum(parts) == 7, summary
    for label in ("<b>2</b> graded", "<b>1</b> untouched stub (scored 0)", "<b>1</b> invalid (scored 0)",
                  "<b>1</b> not graded (rerun)", "<b>1</b> check error (not graded)",
                  "<b>1</b> could not be read (see problems)", "<b>1</b> missing", "<b>2</b> problems"):
        assert label in summary, (label, summary)
    assert len(_problems_listed(html)) == 2 and "README.txt" not in "".join(_problems_listed(html))
    assert 'id="ignored"' in html and "1 file ignored" in html
    assert 'id="check-errors"' in html and "the grader's own bug, not the candidate's" in html


def test_the_page_says_when_a_row_was_not_isolated():
    from grader.reports.model import Environment

    rows, pairs = batch()
    for r in rows:
        if r.candidate == "alice" and r.report is not None:
            r.report = r.report.model_copy(update={"environment": Environment(sandbox="local")})
            r.flags = flags_for(r.report)
    html = render_panel(rows, pairs, exercises=EXERCISES)
    assert 'id="not-isolated"' in html and "2 results were graded in the local sandbox: NOT isolated" in html
    assert "not isolated" in Page(html).table["alice"][0]["text"]
    clean = render_panel(*batch(), exercises=EXERCISES)
    assert 'id="not-isolated"' not in clean


def test_the_untouched_stub_is_a_row_of_its_own_left_out_of_the_charts():
    rows, pairs = batch()
    stub = graded("zed", "attention", [E, E, E])
    stub.report = stub.report.model_copy(update={"untouched_stub": True})
    stub.status, stub.score, stub.reason = RowStatus.UNTOUCHED_STUB, 0, "the exercise's stub, unchanged"
    stub.flags = flags_for(stub.report)  # as the runner sets them: the stub's NotImplementedError is no "crash"
    html = render_panel([*rows, stub], pairs, exercises=EXERCISES)
    assert Page(html).table["zed"][0]["text"] == "untouched stub · scored 0 the exercise's stub, unchanged"
    assert Page(html).bar_counts() == Page(render_panel(rows, pairs, exercises=EXERCISES)).bar_counts()
    assert "4 graded · out of 10 points · not counted below: 1 not graded (rerun), 1 untouched stub (scored 0)" in html


def _not_run(row: Row, **update) -> Row:
    """``row`` whose file never ran: every check an error, not run, and ``update`` on its report."""
    checks = [c.model_copy(update={"status": Status.ERROR, "score": 0, "not_run": True}) for c in row.report.checks]
    report = row.report.model_copy(update={"checks": checks, "score": 0, **update})
    return Row(row.candidate, row.exercise, RowStatus.GRADED, 0, report.max_score, report=report,
               flags=flags_for(report))


def test_a_file_refused_by_the_subset_shows_its_first_reason_and_no_crash():
    violations = [Violation(code=ViolationCode.IMPORT, text="the module `hashlib` is not part of this exercise's "
                            "subset", line=3), Violation(code=ViolationCode.BUILTIN, text="`eval` is not allowed", line=9)]
    row = _not_run(graded("ivan", "attention", [P, P, P]), violations=violations, load_error=LoadError(
        found="subset", summary="the file leaves its exercise's language subset (2 violations, the first at line 3): "
                                "it was not run", line=3))
    [cell] = Page(render_panel([row], [], exercises=EXERCISES)).table["ivan"][:1]
    assert cell["text"].startswith("0/10 line 3: the module `hashlib` is not part of this exercise's subset (+1 more)")
    assert "outside the subset" in cell["text"] and "crash" not in cell["text"]


def test_a_file_that_does_not_import_says_what_it_raised_and_where_not_crash():
    row = _not_run(graded("judy", "attention", [P, P, P]), load_error=LoadError(
        found="sandbox", summary="RuntimeError: CUDA is not available", line=10, raised="RuntimeError"))
    [cell] = Page(render_panel([row], [], exercises=EXERCISES)).table["judy"][:1]
    assert cell["text"] == "0/10 does not import: RuntimeError at line 10"
    hung = _not_run(graded("kim", "attention", [P, P, P]), load_error=LoadError(
        found="sandbox", summary="it never finished importing (it ran past 20 s of CPU)"))
    [cell] = Page(render_panel([hung], [], exercises=EXERCISES)).table["kim"][:1]
    assert cell["text"] == "0/10 does not import: it never finished importing (it ran past 20 s of CPU)"


def test_a_collected_files_provenance_is_a_flag_on_its_cell():
    """Issue 36: the panel page shows where a graded file came from: its sha256 and whether its hand-in record
    agrees (grader collect, grader.batch.provenance)."""
    from grader.batch.provenance import Provenance

    checked = graded("ann", "attention", [Status.PASSED])
    checked.sha256, checked.provenance = "a1b2c3d4e5" + "0" * 54, Provenance("a1b2c3d4e5" + "0" * 54, True, 2)
    differs = graded("bob", "attention", [Status.PASSED])
    differs.sha256, differs.provenance = "f" * 64, Provenance("0" * 64, False, 1, "its HANDIN.toml says sha256 '000'")
    html = render_panel([checked, differs], [], exercises=EXERCISES, generated_at="2025-05-01 09:00", problems=[])
    assert 'class="flag f-handin"' in html and "hand-in a1b2c3d4e5, checked" in html
    assert "2 hand-ins collected, the newest graded" in html
    assert 'class="flag f-handin_differs"' in html and "its HANDIN.toml says sha256 &#39;000&#39;" in html
