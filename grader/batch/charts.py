"""Chart data for the panel page: score histograms and per-check pass rates.

The geometry (bins, bar positions in SVG user units) is computed here, in plain
Python that tests can read; the template only draws what it is given. Only
graded submissions count: a file that could not be graded, or that scored 0
because it was empty or not Python, says nothing about how hard a check is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from grader.reports.model import Report, Status
from grader.reports.headline import fmt_points

#: Histogram canvas, in SVG user units (the SVG scales to its container).
WIDTH, HEIGHT = 360, 200
LEFT, RIGHT, TOP, BOTTOM = 40, 8, 18, 44
#: Up to this many points, each point value gets its own bar; above it, ten equal bins.
MAX_POINT_BARS = 12


@dataclass(frozen=True)
class Bar:
    label: str  # under the bar: the point value, its whole-point range, or the bin's lower edge
    title: str  # hover text: "7 points: 2 submissions"
    count: int
    x: float
    y: float
    width: float
    height: float

    @property
    def cx(self) -> float:
        return self.x + self.width / 2


@dataclass(frozen=True)
class Histogram:
    bars: list[Bar]
    y_max: int
    aria_label: str
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    top: int = TOP
    bottom: float = HEIGHT - BOTTOM  # y of the x axis


def _bins(scores: list[float], max_score: float) -> tuple[list[tuple[str, str]], float]:
    """``([(label, range_text)], per_bin)``: score s falls in bin ``int(s / per_bin)``, clamped."""
    whole = float(max_score).is_integer() and all(float(s).is_integer() for s in scores)
    if whole and max_score <= MAX_POINT_BARS:
        return [(str(k), f"{k} point{'s' if k != 1 else ''}") for k in range(int(max_score) + 1)], 1.0
    if whole:  # bars of whole points, at most ten, so full marks sits in a bar labelled with points it holds
        top, width = int(max_score), math.ceil((max_score + 1) / 10)
        spans = [(lo, min(lo + width - 1, top)) for lo in range(0, top + 1, width)]
        return [(f"{lo}–{hi}" if hi > lo else str(lo), f"{lo} to {hi} points" if hi > lo else f"{lo} points")
                for lo, hi in spans], width
    step = max_score / 10
    edges = [fmt_points(step * i) for i in range(11)]
    return [(edges[i], f"{edges[i]} to {edges[i + 1]} points") for i in range(10)], step


def histogram(scores: list[float], max_score: float | None, *, what: str) -> Histogram | None:
    """Bars counting ``scores`` over 0..``max_score``; None when there is nothing to draw."""
    if not scores or not max_score or max_score <= 0:
        return None
    bins, per_bin = _bins(scores, max_score)
    counts = [0] * len(bins)
    for s in scores:
        counts[min(max(int(s / per_bin + 1e-9), 0), len(bins) - 1)] += 1  # 1e-9: 0.7 / 0.07 is 9.99...
    y_max = max(counts)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    slot = plot_w / len(bins)
    bars = []
    for (label, range_text), n in zip(bins, counts):
        h = plot_h * n / y_max
        x = LEFT + slot * len(bars) + slot * 0.1
        noun = "submission" if n == 1 else "submissions"
        bars.append(Bar(label, f"{range_text}: {n} {noun}", n, round(x, 2), round(TOP + plot_h - h, 2),
                        round(slot * 0.8, 2), round(h, 2)))
    aria = f"Score distribution for {what}, {len(scores)} graded: " + "; ".join(b.title for b in bars)
    return Histogram(bars=bars, y_max=y_max, aria_label=aria)


@dataclass(frozen=True)
class PassRate:
    id: str
    name: str
    passed: int
    ran: int  # graded submissions where the check ran (not skipped)
    skipped: int

    @property
    def percent(self) -> int:
        return round(100 * self.passed / self.ran) if self.ran else 0

    @property
    def text(self) -> str:
        base = f"{self.passed}/{self.ran} passed ({self.percent}%)" if self.ran else "never ran"
        return base + (f", {self.skipped} skipped" if self.skipped else "")


def pass_rates(reports: list[Report]) -> list[PassRate]:
    """Per check (in the order checks first appear): how many graded submissions passed it."""
    seen: dict[str, list] = {}  # id -> [name, passed, ran, skipped]
    for report in reports:
        for c in report.checks:
            entry = seen.setdefault(c.id, [c.name or c.id, 0, 0, 0])
            if c.status is Status.SKIPPED:
                entry[3] += 1
                continue
            entry[2] += 1
            entry[1] += c.status is Status.PASSED
    return [PassRate(id, name, passed, ran, skipped) for id, (name, passed, ran, skipped) in seen.items()]
