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
from grader.reports.model import CheckResult, Diagnosis, Environment, Report, Status, Visibility
from grader.reports.render import render_html
from grader.batch.published import Published
from grader.batch.similarity import PublishedMatch
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


# --- the batch of issue 26: 8 candidates on two exercises with long titles, read at 1,400 px and on a phone ---

ISSUE_EXERCISES = {"kv_cache_decode": "KV-cache decoding: one attention step and top-p sampling",
                   "evaluate": "Evaluate a classifier: sample-weighted loss and accuracy, modes restored"}
KV = [("test_decode_matches_causal_attention", 3), ("test_cache_grows_by_one_token", 2),
      ("test_step_from_a_given_cache", 2), ("test_step_float64", 1), ("test_step_leaves_arguments_alone", 1),
      ("test_samples_stay_in_the_nucleus", 2), ("test_ties_rank_lower_index_first", 1),
      ("test_frequencies_follow_the_renormalised_nucleus", 2), ("test_reproducible_from_the_generator", 1),
      ("test_sampler_leaves_logits_alone", 1), ("test_sampler_rejects_bad_arguments", 1)]
EVALUATE = [("test_loss_and_accuracy_equal_batches", 2), ("test_weights_batches_by_size", 2),
            ("test_returns_python_floats", 1), ("test_eval_mode_during_every_forward", 1),
            ("test_no_grad_during_every_forward", 1), ("test_restores_each_modules_mode", 2),
            ("test_restores_modes_when_something_raises", 2), ("test_gpu_forward", 2), ("test_gpu_mixed_devices", 2)]
LONG = ("applies the temperature after the top-p cut instead of before it, so the nucleus is chosen from the "
        "untempered distribution and every token between the two cuts is drawn with the wrong probability; "
        "with temperature 1 the two agree, which is why the public example passes")


def issue_report(exercise: str, statuses: dict[str, Status], *, sandbox: str = "docker",
                 diagnosis: tuple[Diagnosis, ...] = ()) -> Report:
    checks = []
    for name, points in (KV if exercise == "kv_cache_decode" else EVALUATE):
        status = statuses.get(name, Status.SKIPPED if name.startswith("test_gpu") else Status.PASSED)
        checks.append(CheckResult(id=f"test_{exercise}.py::{name}", name=name.removeprefix("test_").replace("_", " "),
                                  status=status, score=points if status is Status.PASSED else 0, max_score=points,
                                  visibility=Visibility.VISIBLE, gpu=name.startswith("test_gpu"),
                                  message="no GPU in the sandbox" if status is Status.SKIPPED else ""))
    counted = [c for c in checks if c.status is not Status.SKIPPED]
    return Report(exercise=exercise, title=ISSUE_EXERCISES[exercise], graded=True, checks=checks,
                  score=sum(c.score for c in counted), max_score=sum(c.max_score for c in counted),
                  diagnosis=list(diagnosis), environment=Environment(sandbox=sandbox))


def issue_row(candidate: str, report: Report, status: RowStatus = RowStatus.GRADED, reason: str = "") -> Row:
    return Row(candidate, report.exercise, status, report.score, report.max_score, report=report,
               flags=flags_for(report), reason=reason)


def mistake(description: str, matched: int = 3) -> Diagnosis:
    return Diagnosis(mutant="m", description=description, matched=matched, failed=matched, signature=matched)


def issue_batch() -> tuple[list[Row], list]:
    T, F, E = Status.TIMEOUT, Status.FAILED, Status.ERROR
    loop = {n: T for n, _ in KV[:5]}
    looping = issue_report("kv_cache_decode", loop, diagnosis=(Diagnosis(
        kind="outcome", description="every lost check timed out (5 of 5): no answer came back to compare",
        matched=0, failed=5, signature=0, answers_only=False),))
    sampler = {n: F for n, _ in KV[5:8]}
    rows = [
        issue_row("alice", issue_report("kv_cache_decode", {})),
        issue_row("alice", issue_report("evaluate", {})),
        issue_row("bob", looping),
        issue_row("bob", issue_report("evaluate", {"test_restores_modes_when_something_raises": F},
                                      diagnosis=(mistake("restores the modes only when nothing raises", 1),))),
        issue_row("carol", issue_report("kv_cache_decode", sampler, diagnosis=(
            mistake(LONG), mistake("sorts the probabilities ascending, keeping the least likely tokens"),
            mistake("draws from the global RNG instead of the generator it is given")))),
        issue_row("carol", issue_report("evaluate", {"test_no_grad_during_every_forward": E, "test_returns_python_floats": E},
                                        diagnosis=(mistake("keeps the autograd graph of every batch alive", 2),))),
        issue_row("dave", issue_report("kv_cache_decode", {n: E for n, _ in KV}).model_copy(
            update={"untouched_stub": True}), RowStatus.UNTOUCHED_STUB, "the exercise's stub, unchanged"),
        Row("dave", "evaluate", RowStatus.MISSING, reason="no folder dave/evaluate/"),
        issue_row("erin", issue_report("kv_cache_decode", {}, sandbox="local")),
        issue_row("erin", issue_report("evaluate", {"test_weights_batches_by_size": F})),
        Row("frank", "kv_cache_decode", RowStatus.NOT_GRADED, reason="not graded after 3 attempts (docker daemon "
            "died while the sandbox was starting: the engine closed the attach socket); rerun the batch"),
        issue_row("frank", issue_report("evaluate", {})),
        issue_row("grace-the-candidate-with-a-rather-long-folder-name", issue_report(
            "kv_cache_decode", {n: F for n, _ in KV[:2]}, diagnosis=(mistake(LONG, 2),))),
        issue_row("grace-the-candidate-with-a-rather-long-folder-name", issue_report("evaluate", {})),
        issue_row("heidi", issue_report("kv_cache_decode", sampler, diagnosis=(mistake(LONG),))),
        Row("heidi", "evaluate", RowStatus.INVALID, 0, 10, reason="heidi/evaluate/evaluate.py is not valid Python: "
            "'(' was never closed (line 12)"),
    ]
    for row in rows:  # two copies of the reference (issue 39: the red badge ran out of its cell over "Looks like")
        if row.exercise == "kv_cache_decode" and row.candidate in ("heidi", "grace-the-candidate-with-a-rather-long-"
                                                                              "folder-name"):
            row.published = PublishedMatch(Submission(row.candidate, row.exercise), Published(
                row.exercise, "solutions/kv_cache_decode/kv_cache_decode.py", "", public=True), 0.97)
            row.flags = [*row.flags, "published"]
    pairs = [Pair("kv_cache_decode", Submission("alice", "kv_cache_decode"), Submission("erin", "kv_cache_decode"), 0.93)]
    return rows, pairs


@pytest.fixture(scope="module")
def issue_site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("issue26")
    rows, pairs = issue_batch()
    (out / "index.html").write_text(render_panel(
        rows, pairs, exercises=ISSUE_EXERCISES, generated_at="now",
        problems=["alice/kv_cache_decode.py: a Python file outside any exercise folder is not graded; to grade it, "
                  "move it to alice/kv_cache_decode/kv_cache_decode.py"],
        ignored=["alice/README.txt: not a submission (only <candidate>/<exercise>/<file>.py is read)"]), "utf-8")
    return out


def box(locator) -> dict:
    return locator.bounding_box()


@pytest.mark.parametrize("width", [1400, 1920, 2400])
def test_at_desktop_widths_the_total_and_looks_like_columns_are_in_view_and_no_header_is_cut(browser, issue_site,
                                                                                               width):
    v = Visit(browser, width)
    try:
        v.page.goto((issue_site / "index.html").as_uri())
        assert v.page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
        scroller = v.page.locator(".scroll").first
        assert scroller.evaluate("e => e.scrollWidth <= e.clientWidth"), "the table scrolls sideways"
        seen = box(scroller)  # what the table's box shows: a header past its right edge is cut
        right = min(width, seen["x"] + seen["width"])
        for name in ("Total", "Looks like"):
            header = box(v.page.locator("#scores thead th", has_text=name))
            assert 0 <= header["x"] and header["x"] + header["width"] <= right, (name, header, right)
        for i, title in enumerate(ISSUE_EXERCISES.values(), start=1):
            th = v.page.locator("#scores thead th").nth(i)
            assert th.evaluate("e => e.scrollWidth <= e.clientWidth && e.scrollHeight <= e.clientHeight"), title
            assert title in th.inner_text()
            b = box(th)
            assert b["x"] + b["width"] <= right, (title, b, right)
        table = box(v.page.locator("#scores"))
        assert table["width"] >= 0.85 * width  # the window's width, not a 1,200 px column
    finally:
        v.context.close()


#: Every element of the score table that is drawn outside the cell holding it (a badge running over its
#: neighbour), as "cell text: element text".
OUT_OF_THEIR_CELLS = """() => {
  const out = [];
  for (const cell of document.querySelectorAll('#scores td, #scores th')) {
    const c = cell.getBoundingClientRect();
    for (const e of cell.querySelectorAll('*')) {
      if (!e.checkVisibility({contentVisibilityAuto: true, visibilityProperty: true})) continue;  // a closed <details>
      let r = e.getBoundingClientRect();
      let [left, right, top, bottom] = [r.left, r.right, r.top, r.bottom];
      for (let a = e.parentElement; a && a !== cell; a = a.parentElement) {  // what a clipping box hides is not drawn
        if (getComputedStyle(a).overflow === 'visible') continue;
        const b = a.getBoundingClientRect();
        [left, right, top, bottom] = [Math.max(left, b.left), Math.min(right, b.right), Math.max(top, b.top),
                                      Math.min(bottom, b.bottom)];
      }
      if (right - left < 1 || bottom - top < 1) continue;
      if (left < c.left - 1 || right > c.right + 1 || top < c.top - 1 || bottom > c.bottom + 1)
        out.push(cell.innerText.slice(0, 40) + ': ' + e.innerText.slice(0, 60));
    }
  }
  return out;
}"""


@pytest.mark.parametrize("width", [1366, 1920])
def test_at_laptop_and_desktop_widths_nothing_overlaps_and_nothing_scrolls_sideways(browser, issue_site, width):
    v = Visit(browser, width)
    try:
        v.page.goto((issue_site / "index.html").as_uri())
        assert v.page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
        assert v.page.locator(".scroll").first.evaluate("e => e.scrollWidth <= e.clientWidth"), "the table scrolls"
        badge = v.row("heidi").locator(".f-published")
        assert badge.inner_text() == ("resembles the published solutions/kv_cache_decode/kv_cache_decode.py: 0.97; "
                                      "no two honest solutions of this exercise to compare with")
        assert v.page.evaluate(OUT_OF_THEIR_CELLS) == []
        cell, looks = box(v.row("heidi").locator("td").first), box(v.row("heidi").locator("td.looks"))
        assert box(badge)["x"] + box(badge)["width"] <= min(cell["x"] + cell["width"], looks["x"])
    finally:
        v.context.close()


def test_a_long_diagnosis_folds_instead_of_making_a_tall_empty_row(browser, issue_site):
    v = Visit(browser, 1400)
    try:
        v.page.goto((issue_site / "index.html").as_uri())
        alice = box(v.row("alice").locator("td").first)["height"]
        for candidate in ("carol", "heidi", "grace-the-candidate-with-a-rather-long-folder-name"):
            row = v.row(candidate)
            assert box(row.locator("td.looks"))["height"] <= max(4 * alice, 130), candidate
            assert LONG[:40] in row.locator("td.looks").inner_text()  # all of it is there, folded
        looks = v.row("heidi").locator("td.looks details.fold")
        folded = box(looks)["height"]
        looks.locator("summary").click()  # opens in place: the whole description
        assert box(looks)["height"] > folded
        carol = v.row("carol").locator("td.looks")
        assert carol.locator("details.more > summary").inner_text() == "+2 more"
    finally:
        v.context.close()


def test_on_a_phone_the_candidate_and_total_stay_in_view_while_the_table_scrolls(browser, issue_site):
    v = Visit(browser, 390)
    try:
        v.page.goto((issue_site / "index.html").as_uri())
        assert v.page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
        scroller = v.page.locator(".scroll").first
        assert scroller.evaluate("e => e.scrollWidth > e.clientWidth")  # it scrolls inside its box
        view = box(scroller)
        for at in ("start", "end"):
            scroller.evaluate("e => e.scrollLeft = 0" if at == "start" else "e => e.scrollLeft = e.scrollWidth")
            name, total = box(v.row("bob").locator("th")), box(v.row("bob").locator("td.total"))
            assert name["x"] >= view["x"] - 1 and name["x"] + name["width"] <= view["x"] + view["width"], at
            assert total["x"] >= view["x"] and total["x"] + total["width"] <= view["x"] + view["width"] + 1, at
            assert total["x"] > name["x"] + name["width"] - 1  # side by side, never on top of each other
        assert v.row("bob").locator("th").inner_text() == "bob" and v.row("alice").locator("td.total").is_visible()
    finally:
        v.context.close()


def test_sorting_and_the_flag_filter_work_together(browser, issue_site):
    v = Visit(browser, 1400)
    try:
        v.page.goto((issue_site / "index.html").as_uri())
        select = v.page.locator("#flag-filter")
        assert select.is_visible()
        select.select_option("timeout")
        shown = [n for n in v.page.locator("#scores tbody:not([hidden]) th").all_inner_texts()]
        assert shown == ["bob"] and v.page.locator("#filter-count").inner_text() == "1 of 8 candidates"
        select.select_option("not_isolated")
        assert v.page.locator("#scores tbody:not([hidden]) th").all_inner_texts() == ["erin"]
        select.select_option("")
        total = v.page.locator("#scores thead th", has_text="Total")
        total.click()
        assert total.get_attribute("aria-sort") == "descending"
        names = v.names()
        assert names[0] == "alice" and names[-2:] == ["frank", "heidi"] or names[-1] == "frank", names
        select.select_option("error")
        assert set(v.page.locator("#scores tbody:not([hidden]) th").all_inner_texts()) == {"carol"}
    finally:
        v.context.close()


def test_the_issue_batch_says_what_is_true_on_the_page(browser, issue_site):
    v = Visit(browser, 1400)
    try:
        v.page.goto((issue_site / "index.html").as_uri())
        assert v.row("dave").locator("td").first.inner_text().startswith("untouched stub · scored 0")
        assert "1 result was graded in the local sandbox: NOT isolated" in v.page.locator("#not-isolated").inner_text()
        assert "not isolated" in v.row("erin").locator("td").first.inner_text()
        evaluate = v.row("erin").locator("td").nth(1)
        assert "2 GPU checks not run" in evaluate.inner_text()  # the why is the flag's title: the headline's words
        assert evaluate.locator(".f-skipped").get_attribute("title") == "2 GPU checks (4 points) not run: no GPU in the sandbox"
        assert "6 results: 2 GPU checks (4 points) not run: no GPU in the sandbox" in v.page.locator("#not-run").inner_text()
        assert v.row("bob").locator("td.looks").inner_text().startswith(
            "kv_cache_decode no named mistake: every lost check timed out")
        assert v.page.locator("#problems li").count() == 1 and "README.txt" not in v.page.locator("#problems").inner_text()
        assert "1 file ignored" in v.page.locator("#ignored summary").inner_text()
    finally:
        v.context.close()


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
        "attention looks like: Scores are q·kᵀ with no 1/√E scaling (matches 3 of 3 failed checks)")
    assert dave.nth(-2).inner_text() == ""  # the "Looks like" column: nothing graded, nothing diagnosed
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


IMPORT_RAISES = '''"""A toy answer whose module raises while it is imported (line 10)."""

import torch


def scale(x, factor):
    return x * factor


raise RuntimeError("this module needs a GPU")
'''


def test_a_refused_file_and_one_that_does_not_import_say_why_in_their_rows(browser, tmp_path):
    """Graded for real (the toy, local sandbox): the subset's first reason and the import's exception and line are
    in the row, not a bare "crash"."""
    from grader.host.grading import grade

    toy = Path(__file__).parent / "fixtures" / "toy"
    broken = tmp_path / "toy.py"
    broken.write_text(IMPORT_RAISES)
    reports = {"ivan": grade(toy, Path(__file__).parent / "fixtures" / "golden_submissions" / "toy_outside_subset.py",
                             sandbox="local"), "judy": grade(toy, broken, sandbox="local")}
    rows = [Row(name, "toy", RowStatus.GRADED, r.score, r.max_score, report=r, flags=flags_for(r))
            for name, r in reports.items()]
    (tmp_path / "index.html").write_text(render_panel(rows, [], exercises={"toy": "Toy"}), "utf-8")
    v = Visit(browser, 1400)
    try:
        v.page.goto((tmp_path / "index.html").as_uri())
        refused = v.row("ivan").locator("td").first.inner_text()
        first = reports["ivan"].violations[0]
        assert f"line {first.line}: {first.text}" in refused and "outside the subset" in refused
        assert "crash" not in refused
        imports = v.row("judy").locator("td").first.inner_text()
        assert "does not import: RuntimeError at line 10" in imports and "crash" not in imports
    finally:
        v.context.close()
