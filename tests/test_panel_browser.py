"""The panel page (``index.html``) in a real headless Chromium: what a person sees and can do.

Uses Debian's ``/usr/bin/chromium`` through the ``playwright`` package (no downloaded
browser). Without either, these tests skip, except under ``GRADER_REQUIRE_BROWSER=1``
(CI), where they fail saying what is missing, as Docker tests do under
``GRADER_REQUIRE_DOCKER=1``. Every request the page makes is recorded and anything
but ``file:`` / ``data:`` is blocked: the page must work with no network.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from grader.batch.model import Row, RowStatus, flags_for
from grader.batch.panel import render_panel
from grader.reports.model import CheckResult, Diagnosis, Report, Status, Visibility
from grader.reports.render import render_html
from tests.test_panel import Pair, Submission  # stand-ins: the panel reads a pair's attributes only

CHROMIUM = Path("/usr/bin/chromium")
REQUIRE_BROWSER = os.environ.get("GRADER_REQUIRE_BROWSER") == "1"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
HOSTILE = "<img src=x onerror=alert(1)>"
EXERCISES = {ex: ex.replace("_", " ").capitalize() for ex in
             ("attention", "layernorm", "ddp_step", "kv_cache", "rope", "softmax_backward")}


def _unavailable(reason: str):
    if REQUIRE_BROWSER:
        pytest.fail(f"GRADER_REQUIRE_BROWSER=1 but {reason}", pytrace=False)
    pytest.skip(reason)


def graded(candidate: str, exercise: str, passed: int) -> Row:
    """A graded row: ``passed`` of five 2-point checks pass (score 2 * passed out of 10)."""
    checks = [CheckResult(id=f"test_{i}.py::test_{i}", name=f"Check number {i}",
                          status=Status.PASSED if i < passed else Status.FAILED,
                          score=2 if i < passed else 0, max_score=2, visibility=Visibility.VISIBLE)
              for i in range(5)]
    report = Report(exercise=exercise, title=EXERCISES[exercise], graded=True, checks=checks,
                    score=2 * passed, max_score=10)
    return Row(candidate, exercise, RowStatus.GRADED, report.score, 10, report=report, flags=flags_for(report))


def batch() -> list[Row]:
    scores = {"alice": 5, "bob": 2, "carol": 4, HOSTILE: 1}
    rows = [graded(name, ex, (passed + i) % 6) for name, passed in scores.items()
            for i, ex in enumerate(EXERCISES)]
    rows = [r for r in rows if not (r.candidate == "bob" and r.exercise == "layernorm")]
    rows += [Row("dave", "attention", RowStatus.NOT_GRADED, reason="docker daemon died (3 attempts)"),
             Row("bob", "layernorm", RowStatus.MISSING, reason="no file in bob/layernorm/")]
    bob = next(r for r in rows if r.candidate == "bob" and r.exercise == "attention")
    bob.report = bob.report.model_copy(update={"diagnosis": [Diagnosis(
        mutant="no_scaling", description="Scores are q·kᵀ with no 1/√E scaling.", matched=3, failed=3, signature=3)]})
    return rows


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """index.html and the graded rows' scorecards, laid out as ``grader batch`` writes them."""
    out = tmp_path_factory.mktemp("panel")
    rows = batch()
    pairs = [Pair("attention", Submission("alice", "attention"), Submission("carol", "attention"), 0.96)]
    (out / "index.html").write_text(render_panel(rows, pairs, exercises=EXERCISES, generated_at="now"), "utf-8")
    for r in rows:
        if r.report is not None:
            card = out / "candidates" / r.candidate / f"{r.exercise}.html"
            card.parent.mkdir(parents=True, exist_ok=True)
            card.write_text(render_html(r.report), "utf-8")
    return out


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        _unavailable("the playwright package is not installed (.venv/bin/pip install playwright)")
    if not CHROMIUM.exists():
        _unavailable(f"{CHROMIUM} not found (apt-get install chromium)")
    with sync_playwright() as p:
        try:
            b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        except Error as e:
            _unavailable(f"{CHROMIUM} did not start: {e.message.splitlines()[0]}")
        yield b
        b.close()


class Visit:
    """A page in a fresh context that blocks and records every request not for file: or data:."""

    def __init__(self, browser, width: int):
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.context = browser.new_context(viewport={"width": width, "height": 900})
        self.context.route("**/*", lambda route: route.continue_() if route.request.url.startswith(
            ("file:", "data:")) else route.abort())
        self.page = self.context.new_page()
        self.page.set_default_timeout(10_000)
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))

    def row(self, candidate: str):
        return self.page.locator("#scores tbody tr").filter(has=self.page.get_by_role("rowheader", name=candidate))

    def names(self) -> list[str]:
        return self.page.locator("#scores tbody th").all_inner_texts()


@pytest.fixture
def visit(browser, site):
    def open_at(width: int = 1200) -> Visit:
        v = Visit(browser, width)
        v.page.goto((site / "index.html").as_uri())
        opened.append(v)
        return v

    opened: list[Visit] = []
    yield open_at
    for v in opened:
        v.context.close()


def test_cells_read_as_a_person_sees_them(visit):
    v = visit()
    assert v.row("alice").locator("td").nth(0).inner_text().split("\n")[:2] == ["10/10", "similar to carol (96%)"]
    dave = v.row("dave").locator("td")
    assert dave.nth(0).inner_text() == "not graded — rerun\ndocker daemon died (3 attempts)"
    assert v.row("dave").locator("td.total").inner_text().startswith("incomplete — rerun")
    assert v.row("bob").locator("td.looks").inner_text() == (
        "Attention: looks like: Scores are q·kᵀ with no 1/√E scaling (matches 3 of 3 failed checks)")
    assert dave.last.inner_text() == ""  # the "Looks like" column: nothing graded, nothing diagnosed
    assert v.row("bob").locator("td").nth(1).inner_text() == "missing"
    assert v.page.locator("#rerun").is_visible() and "rerun the batch" in v.page.locator("#rerun h2").inner_text()


def test_without_scripts_the_table_reads_the_same(browser, site):
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto((site / "index.html").as_uri())
        assert page.locator("#scores button").count() == 0  # nothing pretends to be clickable
        assert page.locator("#scores thead th").nth(1).inner_text() == "Attention /10"
        assert page.locator("#scores tbody tr").nth(1).locator("td").first.inner_text().startswith("10/10")
    finally:
        context.close()


def test_hostile_name_is_shown_as_text_and_never_runs(visit):
    v = visit()
    assert HOSTILE in v.names()
    assert v.page.locator("#scores img").count() == 0 and v.dialogs == []


def test_clicking_the_score_header_sorts_rows_and_sets_aria_sort(visit):
    v = visit()
    header = v.page.locator("#scores thead th").nth(1)  # attention
    name_header = v.page.locator("#scores thead th").nth(0)
    assert v.names()[:4] == [HOSTILE, "alice", "bob", "carol"]  # by name to start (< sorts first)
    header.click()
    assert header.get_attribute("aria-sort") == "descending" and name_header.get_attribute("aria-sort") is None
    assert v.names() == ["alice", "carol", "bob", HOSTILE, "dave"]  # 10, 8, 4, 2; not graded last
    header.click()
    assert header.get_attribute("aria-sort") == "ascending"
    assert v.names() == [HOSTILE, "bob", "carol", "alice", "dave"]  # not graded last either way


def test_scorecard_link_opens_the_scorecard(visit):
    v = visit()
    link = v.row("alice").locator("td").nth(0).get_by_role("link", name="10/10")
    assert link.get_attribute("href") == "candidates/alice/attention.html"
    link.click()
    v.page.wait_for_url("**/candidates/alice/attention.html")
    assert v.page.locator("h1").inner_text() == "Attention"


def test_histograms_are_drawn_with_visible_bars(visit):
    v = visit()
    charts = v.page.locator("svg.hist")
    assert charts.count() == len(EXERCISES)
    for i in range(charts.count()):
        box = charts.nth(i).bounding_box()
        assert box["width"] > 200 and box["height"] > 100
    bars = v.page.locator("svg.hist").first.locator("g.bar")
    drawn = {bars.nth(i).get_attribute("data-label"): bars.nth(i).locator("rect.fill").bounding_box()["height"]
             for i in range(bars.count()) if bars.nth(i).get_attribute("data-count") != "0"}
    assert set(drawn) == {"2", "4", "8", "10"} and all(h > 20 for h in drawn.values())


@pytest.mark.parametrize("width", [390, 1200])
def test_no_horizontal_page_overflow_the_table_scrolls_inside(visit, tmp_path, width):
    v = visit(width)
    overflow = v.page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0
    scroller = v.page.locator(".scroll")
    if width == 390:  # six exercise columns cannot fit a phone: the container scrolls, not the page
        assert scroller.evaluate("e => e.scrollWidth > e.clientWidth")
    v.page.screenshot(path=str(tmp_path / f"panel-{width}.png"), full_page=True)
    assert (tmp_path / f"panel-{width}.png").stat().st_size > 10_000


def test_no_request_leaves_file_urls(visit):
    v = visit()
    v.page.locator("#scores thead th").nth(1).click()
    v.page.locator("svg.hist g.bar").first.hover()
    v.row("alice").get_by_role("link", name="10/10").click()
    v.page.wait_for_url("**/candidates/alice/attention.html")
    assert v.requests and all(url.startswith(("file:", "data:")) for url in v.requests), v.requests


def test_the_request_guard_sees_and_blocks_remote_assets(browser, tmp_path):
    """The check above can fail: a page with a remote image is caught, and the image never loads."""
    page = tmp_path / "remote.html"
    page.write_text('<img id="i" src="http://example.invalid/x.png">', "utf-8")
    v = Visit(browser, 800)
    try:
        v.page.goto(page.as_uri())
        v.page.wait_for_load_state("load")
        assert "http://example.invalid/x.png" in v.requests
        assert v.page.locator("#i").evaluate("img => img.complete && img.naturalWidth === 0")
    finally:
        v.context.close()


def test_a_candidates_scorecard_reads_on_a_phone_without_sideways_scrolling(browser, tmp_path):
    """`grader submit --html` for a candidate: long names, a long unbroken counterexample, hidden checks, late."""
    from grader.reports.model import Timing

    long_token = "SdpaCase(lead=(2,3),L=7,S=9,E=16,Ev=5,seed=12345)" * 6  # no space to wrap at
    checks = [
        CheckResult(id="test_sdpa.py::test_no_mask", name="sdpa: No mask: weights = softmax over keys of q·kᵀ/√E",
                    status=Status.FAILED, score=0, max_score=2, visibility=Visibility.VISIBLE,
                    message="weights: Tensor-likes are not close!", counterexample=long_token,
                    hint="Scale the scores by 1/√E before the softmax.", output="print " * 200),
        CheckResult(id="test_mask.py::test_rows[3-True]", name="Fully blocked rows: zero weights", status=Status.FAILED,
                    score=0, max_score=3, visibility=Visibility.HIDDEN, message="expected 0, got nan"),
        CheckResult(id="test_a.py::test_ok", name="Shapes", status=Status.PASSED, score=1, max_score=1,
                    visibility=Visibility.VISIBLE),
    ]
    report = Report(exercise="attention", title="Scaled dot-product and multi-head attention", graded=True,
                    checks=checks, score=1, max_score=6,
                    timing=Timing(clock_started_at="2026-11-22T08:00:00+00:00", limit_minutes=45, elapsed_s=3000,
                                  over_limit=True))
    card = tmp_path / "card.html"
    card.write_text(render_html(report, audience="candidate"), "utf-8")
    v = Visit(browser, 390)
    try:
        v.page.goto(card.as_uri())
        overflow = v.page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0
        text = v.page.locator("body").inner_text()
        assert "1 hidden check (3 points): 0 passed, 1 not passed" in text and "LATE" in text
        assert "Fully blocked rows: zero weights" in text and "expected 0, got nan" not in text
        assert "Scale the scores by 1/√E" in text and "SdpaCase(lead=(2,3)" in text
        assert all(url.startswith(("file:", "data:")) for url in v.requests)
    finally:
        v.context.close()
