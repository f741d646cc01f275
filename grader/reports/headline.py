"""What the head of every scorecard says beside the score, in words: the status counts and the checks left out.

A skipped check counts toward neither score nor maximum, so "21/21 (100%)" alone would hide that two
GPU checks never ran: :func:`not_counted_lines` says which and why, and every format (terminal,
HTML, Markdown, the panel page's flag) shows those lines by the score. Counts read as English
("! 11 errors", "◷ 1 timed out"), never "11 error".
"""

from __future__ import annotations

from dataclasses import dataclass

from grader.reports.model import CheckResult, Status


def fmt_points(value: float) -> str:
    """``7.0`` -> ``"7"``, ``2.5`` -> ``"2.5"``, ``1/3`` -> ``"0.33"``."""
    return f"{value:.2f}".rstrip("0").rstrip(".") if value != int(value) else str(int(value))


def fmt_duration(seconds: float) -> str:
    """``1390.4`` -> ``"23 min 10 s"``, ``3605`` -> ``"1 h 5 s"``: whole seconds, zero parts left out."""
    total = max(0, round(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{n} {unit}" for n, unit in ((hours, "h"), (minutes, "min"), (secs, "s")) if n]
    return " ".join(parts) or "0 s"


def short_hash(value: str | None, n: int = 12) -> str:
    """First ``n`` hex digits of a digest, without a ``sha256:`` prefix."""
    if not value:
        return ""
    return value.split(":", 1)[-1][:n]



#: How a count of checks in each status reads: (one, several). "11 error" is not English.
STATUS_WORDS: dict[Status, tuple[str, str]] = {
    Status.PASSED: ("passed", "passed"),
    Status.FAILED: ("failed", "failed"),
    Status.ERROR: ("error", "errors"),
    Status.TIMEOUT: ("timed out", "timed out"),
    Status.SKIPPED: ("skipped", "skipped"),
    Status.CHECK_ERROR: ("check error", "check errors"),
}


#: A count of checks that never ran (the file did not import, the stub, ...): apart from the statuses.
NOT_RUN = "not run"


@dataclass(frozen=True)
class StatusCount:
    """How many checks ended in one status: ``"! 11 errors"``; ``status`` is the CSS class and style key."""

    symbol: str
    status: str
    n: int

    @property
    def text(self) -> str:
        one, several = (NOT_RUN, NOT_RUN) if self.status == NOT_RUN else STATUS_WORDS[Status(self.status)]
        return f"{self.symbol} {self.n} {one if self.n == 1 else several}"


def not_counted_lines(checks: list[CheckResult]) -> list[str]:
    """The checks left out of the score, grouped by why: ``"2 GPU checks (4 points) not run: no GPU in the
    sandbox"``. A skipped check counts toward neither score nor maximum, so a 100% without this line would
    hide that part of the exercise was never tried (the GPU policy, a sandbox without a device)."""
    groups: dict[tuple[bool, str], list[CheckResult]] = {}
    for c in checks:
        if c.status is Status.SKIPPED:
            groups.setdefault((c.gpu, c.message.strip().split("\n", 1)[0]), []).append(c)
    out = []
    for (gpu, reason), group in groups.items():
        n, points = len(group), fmt_points(sum(c.max_score for c in group))
        kind = "GPU check" if gpu else "check"
        out.append(f"{n} {kind}{'s' if n != 1 else ''} ({points} point{'s' if points != '1' else ''}) not run"
                   + (f": {reason}" if reason else " (the reason is withheld: hidden checks)"))
    return out
