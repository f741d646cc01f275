"""The panel page's item analysis in a real headless Chromium (the browser set-up of test_panel_browser).

One exercise has twelve graded candidates (figures shown, every flag raised once, a hostile
check name), the other three (the "not meaningful yet" line instead of figures).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.batch.model import Row, RowStatus
from grader.batch.panel import render_panel
from tests.test_items import HOSTILE, KNOWN, flag_batch, rows_from
from tests.test_panel_browser import Visit, browser  # noqa: F401 (browser is a fixture: chromium, or a skip)

EXERCISES = {"ex": "Flagged exercise", "few": "Few candidates"}


@pytest.fixture(scope="module")
def page_file(tmp_path_factory) -> Path:
    rows = rows_from(flag_batch(), names=[HOSTILE, "never passed", "weak pass", "d", "e", "f"])
    rows += rows_from(KNOWN[:3], exercise="few")
    rows.append(Row("zed", "ex", RowStatus.NOT_GRADED, reason="docker daemon died"))
    out = tmp_path_factory.mktemp("items") / "index.html"
    out.write_text(render_panel(rows, [], exercises=EXERCISES, generated_at="now"), "utf-8")
    return out


@pytest.fixture
def visit(browser, page_file):  # noqa: F811
    opened: list[Visit] = []

    def open_at(width: int = 1200) -> Visit:
        v = Visit(browser, width)
        v.page.goto(page_file.as_uri())
        opened.append(v)
        return v

    yield open_at
    for v in opened:
        v.context.close()


def test_item_table_reads_as_a_person_sees_it(visit):
    v = visit()
    section = v.page.locator("#items")
    assert section.is_visible()
    assert section.get_by_role("heading", name="Item analysis: is each check a fair question?").is_visible()
    for term in ("Difficulty", "Discrimination", "Reliability"):
        assert section.locator("dt", has_text=term).is_visible()
    first = v.page.locator("#items-1")
    assert "12 graded candidates · not counted: 1 not graded (rerun)" in first.inner_text()
    assert first.locator("p.reliability").inner_text().startswith("Reliability (KR-20): ")
    rows = first.locator("table.items tbody tr")
    assert rows.count() == 6
    cells = [rows.nth(i).locator("th, td").all_inner_texts() for i in range(rows.count())]
    assert cells[0][0] == HOSTILE and cells[0][2].startswith("100% (12 of 12)") and cells[0][4] == "everybody passes"
    assert cells[0][3].startswith("—") and "scored the same" in cells[0][3]
    assert cells[1][0] == "never passed" and cells[1][4] == "nobody passes"
    assert cells[2][0] == "weak pass" and cells[2][3].startswith("−0.") and cells[2][4] == "negative discrimination"
    assert all(c[4] == "" for c in cells[3:])


def test_few_candidates_read_not_meaningful_and_show_no_table(visit):
    v = visit()
    second = v.page.locator("#items-2")
    assert second.locator("p.notyet").inner_text().startswith("Not meaningful yet: 3 graded candidates")
    assert second.locator("table").count() == 0


def test_hostile_check_name_never_runs_and_nothing_leaves_file_urls(visit):
    v = visit()
    assert v.page.locator("#items img").count() == 0 and v.dialogs == []
    assert all(url.startswith(("file:", "data:")) for url in v.requests), v.requests


def test_on_a_phone_the_item_table_scrolls_inside_not_the_page(visit, tmp_path):
    v = visit(390)
    overflow = v.page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0
    table = v.page.locator("#items-1 table.items")
    assert table.bounding_box()["width"] > 100
    v.page.locator("#items").screenshot(path=str(tmp_path / "items-390.png"))
    assert (tmp_path / "items-390.png").stat().st_size > 5_000
