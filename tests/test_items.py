"""Item analysis (``grader.batch.items``): every figure checked against a direct computation.

The direct formulas are written here again, independently of the module (numpy.corrcoef
for the item-rest correlation, KR-20 from p and q, alpha from sample variances), on small
matrices; the first one's answers are also worked out by hand in its docstring.
"""

from __future__ import annotations

import csv
import math
from concurrent.futures import Future
from fractions import Fraction

import numpy as np
import pytest

from grader.batch import exports
from grader.batch.items import (EVERYBODY_PASSES, MIN_CANDIDATES, NEGATIVE_DISCRIMINATION, NOBODY_PASSES, analyse,
                                analyse_exercise)
from grader.batch.model import Row, RowStatus
from grader.batch.panel import render_panel
from grader.batch.publish import publish
from grader.batch.runner import run_batch
from grader.batch.store import Store
from grader.exercise import load_exercise
from grader.reports.model import CheckResult, Report, Status, Visibility
from tests.conftest import TOY
from tests.test_batch_runner import FakeEngine

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")  # a NaN from numpy arrives with a RuntimeWarning: fail on it

HOSTILE = "<img src=x onerror=alert(1)>"
#: Ten candidates x four pass/fail checks of 1 point (rows: candidates).
KNOWN = np.array([[1, 1, 1, 1], [1, 1, 1, 0], [1, 1, 0, 1], [1, 1, 0, 0], [1, 0, 1, 0],
                  [1, 0, 0, 0], [0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0], [1, 1, 1, 1]])


def check(j: int, earned: float | None, points: float = 1.0, name: str | None = None) -> CheckResult:
    """Check ``j``: ``earned`` points of ``points`` (full: passed; None: skipped)."""
    if earned is None:
        status = Status.SKIPPED
    else:
        status = Status.PASSED if earned >= points else Status.FAILED
    return CheckResult(id=f"test_ex.py::test_{j}", name=name or f"check {j}", status=status, score=earned or 0.0,
                       max_score=points, visibility=Visibility.HIDDEN)


def rows_from(matrix, points=None, exercise: str = "ex", names=None) -> list[Row]:
    """One graded row per matrix row; a NaN cell is a skipped check."""
    points = points or [1.0] * len(matrix[0])
    out = []
    for i, line in enumerate(matrix):
        checks = [check(j, None if isinstance(v, float) and math.isnan(v) else float(v), points[j],
                        names[j] if names else None) for j, v in enumerate(line)]
        report = Report(exercise=exercise, graded=True, checks=checks, score=sum(c.score for c in checks),
                        max_score=sum(points))
        out.append(Row(f"cand{i:02d}", exercise, RowStatus.GRADED, report.score, report.max_score, report=report))
    return out


def item_rest(matrix: np.ndarray, j: int) -> float:
    return float(np.corrcoef(matrix[:, j], matrix.sum(axis=1) - matrix[:, j])[0, 1])


def test_known_batch_matches_kr20_and_point_biserial_computed_directly():
    """By hand: p = .8, .6, .4, .3, so sum p*q = .16 + .24 + .24 + .21 = .85; totals 4 3 3 2 2 1 1 1 0 4
    have mean 2.1 and variance 6.1 - 4.41 = 1.69; KR-20 = 4/3 * (1 - .85/1.69) = 112/169 = 0.6627."""
    ex = analyse_exercise("ex", rows_from(KNOWN))
    assert ex.shown and ex.graded == 10 and ex.method == "KR-20" and ex.core == 4
    p = KNOWN.mean(axis=0)
    kr20 = 4 / 3 * (1 - (p * (1 - p)).sum() / KNOWN.sum(axis=1).var())
    assert ex.reliability == pytest.approx(kr20, abs=1e-12) == pytest.approx(float(Fraction(112, 169)), abs=1e-12)
    assert [it.difficulty for it in ex.items] == pytest.approx([0.8, 0.6, 0.4, 0.3])
    assert [it.full for it in ex.items] == [8, 6, 4, 3]
    for j, it in enumerate(ex.items):
        assert it.discrimination == pytest.approx(item_rest(KNOWN, j), abs=1e-12)
        assert it.flags == () and it.note == ""
    assert ex.items[0].discrimination == pytest.approx(4 / 11)  # by hand: cov .12 / sqrt(.16 * .6875)


def test_unequal_points_and_partial_credit_use_alpha_on_points():
    """Partial credit counts toward the correlations and alpha, never as full points for difficulty."""
    points = [1.0, 2.0, 3.0]
    earned = np.array([[1, 2, 3], [1, 2, 1.5], [0, 2, 3], [1, 0, 0], [0, 0, 1.5], [1, 2, 0],
                       [0, 0, 0], [1, 2, 3], [1, 0, 1.5], [0, 2, 0], [1, 2, 3], [0, 0, 0]])
    ex = analyse_exercise("ex", rows_from(earned, points))
    assert ex.method == "Cronbach's alpha"
    k, totals = 3, earned.sum(axis=1)
    alpha = k / (k - 1) * (1 - earned.var(axis=0, ddof=1).sum() / totals.var(ddof=1))
    assert ex.reliability == pytest.approx(alpha, abs=1e-12)
    assert ex.items[2].full == 4 and ex.items[2].difficulty == pytest.approx(4 / 12)  # the 1.5s are not full
    for j, it in enumerate(ex.items):
        assert it.discrimination == pytest.approx(item_rest(earned, j), abs=1e-12)


def flag_batch() -> np.ndarray:
    """Twelve candidates, strongest first: A everybody passes, B nobody, C the weak pass, D, E, F the strong pass."""
    strong = ([1] * 8 + [0] * 4, [1] * 4 + [0] * 8, [1] * 6 + [0] * 6)
    weak_c = [0] * 5 + [1] + [0] * 2 + [1] * 4
    return np.array([[1, 0, c, d, e, f] for c, d, e, f in zip(weak_c, *strong)])


def test_flags_on_constructed_checks():
    m = flag_batch()
    ex = analyse_exercise("ex", rows_from(m))
    a, b, c, *strong = ex.items
    assert a.flags == (EVERYBODY_PASSES,) and a.difficulty == 1 and a.discrimination is None
    assert "every candidate scored the same on this check" in a.note
    assert b.flags == (NOBODY_PASSES,) and b.difficulty == 0 and b.discrimination is None
    assert c.flags == (NEGATIVE_DISCRIMINATION,) and c.discrimination == pytest.approx(item_rest(m, 2))
    assert c.discrimination < -0.5
    for j, it in enumerate(strong, start=3):
        assert it.flags == () and it.discrimination == pytest.approx(item_rest(m, j)) and it.discrimination > 0.2


def test_fewer_than_ten_graded_shows_no_figures_and_says_why():
    nine = analyse_exercise("ex", rows_from(KNOWN[:MIN_CANDIDATES - 1]))
    assert not nine.shown and nine.reliability is None
    assert "9 graded candidates" in nine.why_not_shown and "at least 10" in nine.why_not_shown
    assert all(it.difficulty is None and it.discrimination is None and it.flags == () for it in nine.items)
    assert [it.full for it in nine.items] == [7, 5, 3, 2]  # the counts are facts, kept
    assert analyse_exercise("ex", rows_from(KNOWN[:MIN_CANDIDATES])).shown


def test_rows_that_were_not_graded_are_left_out_and_counted():
    extra = [Row("zed", "ex", RowStatus.NOT_GRADED, reason="engine down"),
             Row("yan", "ex", RowStatus.EMPTY, 0, 4), Row("xia", "ex", RowStatus.INVALID, 0, 4),
             Row("wil", "ex", RowStatus.MISSING), Row("vic", "ex", RowStatus.NOT_GRADED, reason="engine down")]
    ex = analyse_exercise("ex", rows_from(KNOWN) + extra)
    alone = analyse_exercise("ex", rows_from(KNOWN))
    assert ex.graded == 10 and ex.excluded == {"not_graded": 2, "empty": 1, "invalid": 1, "missing": 1}
    assert ex.items == alone.items and ex.reliability == alone.reliability


def test_a_skipped_check_is_left_out_for_that_candidate_only():
    """Check 4 is skipped for two of twelve: its figures come from the ten it ran for, against the rest
    of the checks that ran for everyone; alpha covers those four checks only and says so."""
    base = np.vstack([KNOWN, [[1, 1, 1, 0], [0, 0, 1, 0]]])
    extra = np.array([1, 1, 0, 1, 0, 0, 0, 1, 0, 1, np.nan, np.nan])
    ex = analyse_exercise("ex", rows_from(np.column_stack([base, extra])))
    skipped = ex.items[4]
    assert (skipped.ran, skipped.skipped, skipped.full) == (10, 2, 5) and skipped.difficulty == 0.5
    ran = ~np.isnan(extra)
    direct = np.corrcoef(extra[ran], base[ran].sum(axis=1))[0, 1]
    assert skipped.discrimination == pytest.approx(direct, abs=1e-12)
    p = base.mean(axis=0)
    assert ex.core == 4 and ex.reliability == pytest.approx(4 / 3 * (1 - (p * (1 - p)).sum() / base.sum(1).var()))
    assert "4 checks that ran for everyone" in ex.reliability_note
    assert ex.items[0].discrimination == pytest.approx(item_rest(base, 0), abs=1e-12)  # rest without the skipped one


def test_degenerate_batches_give_none_never_nan(tmp_path):
    same = analyse_exercise("same", rows_from(np.ones((12, 3))))  # everyone full marks: no variance at all
    one = analyse_exercise("one", rows_from(np.array([[i % 2] for i in range(12)])))  # one check: no rest
    assert same.reliability is None and "same score" in same.reliability_note
    assert one.reliability is None and "at least 2 checks" in one.reliability_note
    assert one.items[0].discrimination is None and "rest of the exercise" in one.items[0].note
    assert one.items[0].difficulty == 0.5
    exports.write_items_csv([same, one], tmp_path / "items.csv")
    text = (tmp_path / "items.csv").read_text(encoding="utf-8")
    assert "nan" not in text.lower() and "inf" not in text.lower()
    for ex in (same, one):
        for it in ex.items:
            for v in (it.difficulty, it.discrimination):
                assert v is None or math.isfinite(v)


def test_items_csv_round_trip(tmp_path):
    m = flag_batch()
    names = ["=cmd|' /C calc'!A0", "b", "c", "d", "e", "f"]  # a check name a spreadsheet would run
    small = rows_from(KNOWN[:4], exercise="few")
    analysis = analyse(rows_from(m, names=names) + small, ["ex", "few"])
    exports.write_items_csv(analysis, tmp_path / "items.csv")
    with open(tmp_path / "items.csv", newline="", encoding="utf-8") as f:
        read = list(csv.DictReader(f))
    assert list(read[0]) == exports.ITEMS_HEAD and len(read) == 6 + 4
    ex = analysis[0]
    for line, it in zip(read, ex.items):
        assert (line["exercise"], line["check"], int(line["ran"]), int(line["full_points"])) == ("ex", it.check,
                                                                                               it.ran, it.full)
        for col, value in (("difficulty", it.difficulty), ("discrimination", it.discrimination)):
            assert (line[col] == "") if value is None else float(line[col]) == pytest.approx(value, abs=5e-5)
        assert line["flags"].split() == list(it.flags)
        assert float(line["reliability"]) == pytest.approx(ex.reliability, abs=5e-5)
        assert line["reliability_method"] == "KR-20" and line["graded"] == "12"
    assert read[0]["name"] == "'" + names[0]  # never a formula
    assert read[0]["note"] and read[0]["discrimination"] == ""  # undefined, with why
    few = read[6:]
    assert all(r["exercise"] == "few" and r["difficulty"] == r["reliability"] == r["reliability_method"] == ""
               for r in few)
    assert "Not meaningful yet: 4 graded candidates" in few[0]["note"]


def test_panel_page_shows_the_section_with_explanations_and_escapes_names():
    rows = rows_from(flag_batch(), names=[HOSTILE, "b", "c", "d", "e", "f"])
    rows += rows_from(KNOWN[:3], exercise="few")
    rows.append(Row(HOSTILE, "ex", RowStatus.NOT_GRADED, reason=HOSTILE))
    html = render_panel(rows, [], exercises={"ex": "Exercise <One>", "few": "Few"})
    section = html[html.index('<section id="items">'):html.index("</section>", html.index('<section id="items">'))]
    assert "<img" not in section and "&lt;img src=x onerror=alert(1)&gt;" in section
    assert "Exercise &lt;One&gt;" in section
    for words in ("Difficulty", "Discrimination", "Reliability", "strong candidates fail it more often than weak",
                  "grader validate"):
        assert words in section
    assert "Reliability (KR-20):" in section and "12 graded candidates · not counted: 1 not graded (rerun)" in section
    for label in ("everybody passes", "nobody passes", "negative discrimination"):
        assert f'">{label}</span>' in section
    assert "Not meaningful yet: 3 graded candidates" in section
    assert section.count('<table class="items">') == 1  # the exercise with three graded has no table


def test_with_no_figure_to_show_the_page_explains_no_figure():
    """Fewer than 10 graded candidates on every exercise: no paragraphs explaining figures that are not there,
    one line saying when they come, and each exercise's own reason."""
    rows = rows_from(KNOWN[:3], exercise="few")
    html = render_panel(rows, [], exercises={"few": "Few"})
    section = html[html.index('<section id="items">'):html.index("</section>", html.index('<section id="items">'))]
    assert "Discrimination" not in section and "KR-20" not in section and '<dl class="explain">' not in section
    assert "shown once an exercise has 10 graded candidates" in section
    assert "Not meaningful yet: 3 graded candidates" in section


class MatrixEngine(FakeEngine):
    """The stand-in engine of test_batch_runner, answering candidate ``candNN`` with row NN of ``matrix``."""

    def __init__(self, matrix, script=None):
        super().__init__(script)
        self.matrix = matrix

    def submit(self, job, **kwargs):
        report = super().submit(job, **kwargs).result()
        if report.graded:
            checks = [check(j, float(v)) for j, v in enumerate(self.matrix[int(job.key.candidate[-2:])])]
            report = report.model_copy(update={"checks": checks, "score": sum(c.score for c in checks),
                                               "max_score": float(len(checks))})
        future = Future()
        future.set_result(report)
        return future


def test_a_published_batch_writes_items_csv_and_the_panel_section(tmp_path):
    subs, out = tmp_path / "subs", tmp_path / "out"
    for i in range(len(KNOWN) + 1):
        (subs / f"cand{i:02d}" / "toy").mkdir(parents=True)
        (subs / f"cand{i:02d}" / "toy" / "toy.py").write_text(f"def scale(x, k):\n    return x * k * {i}\n")
    out.mkdir()
    store = Store(out)
    try:
        engine = MatrixEngine(KNOWN, script={"cand10": ["infra"]})  # the eleventh is never graded
        batch = run_batch(subs, store, engine, exercises={"toy": load_exercise(TOY)}, sandbox="local", retries=0)
        written = publish(batch, out, {"toy": load_exercise(TOY)})
    finally:
        store.close()
    assert out / "items.csv" in written
    with open(out / "items.csv", newline="", encoding="utf-8") as f:
        read = list(csv.DictReader(f))
    assert [r["check"] for r in read] == [f"test_ex.py::test_{j}" for j in range(4)]
    assert {r["graded"] for r in read} == {"10"} and {r["reliability_method"] for r in read} == {"KR-20"}
    assert float(read[0]["reliability"]) == pytest.approx(112 / 169, abs=5e-5)
    assert [float(r["difficulty"]) for r in read] == [0.8, 0.6, 0.4, 0.3]
    html = (out / "index.html").read_text(encoding="utf-8")
    assert '<section id="items">' in html and "10 graded candidates · not counted: 1 not graded (rerun)" in html


def test_a_check_uncorrelated_with_the_rest_is_not_flagged_for_rounding_noise():
    """Exactly uncorrelated (12 * sum xy == sum x * sum y), yet floating point makes r -5e-17: not a negative."""
    x = [1, 0, 0, 0, 1, 1, 0, 1, 0, 1, 0, 1]
    rest = [8, 5, 2, 3, 8, 1, 4, 3, 6, 0, 0, 0]  # candidate i passes the first rest[i] of eight more checks
    assert 12 * np.dot(x, rest) == sum(x) * sum(rest)
    matrix = np.array([[xi] + [1] * r + [0] * (8 - r) for xi, r in zip(x, rest)])
    item = analyse_exercise("ex", rows_from(matrix)).items[0]
    assert item.discrimination == 0.0 and item.flags == ()
