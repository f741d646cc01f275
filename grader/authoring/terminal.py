"""The authoring rules as ``grader validate`` runs them: per exercise, before grading, printed as text.

An error fails the exercise (exit 4; the summary names the rule again, in one line);
a warning is printed and fails only with ``strict`` (``--strict``), as the repository's
tests hold it. Every name and message is printed as text, never markup (a path or a
quote from the prompt may hold ``[``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from rich.console import Console

from grader.authoring.findings import Concern, Finding
from grader.authoring.run import check_exercise
from grader.exercise import Exercise
from grader.untrusted import in_markup


def failing(findings: Iterable[Finding], *, strict: bool = False) -> list[Finding]:
    """The findings that fail an exercise: its errors, and its warnings too when ``strict``."""
    return [f for f in findings if strict or f.is_error]


def shown_where(finding: Finding) -> str:
    """``file:line``, relative to the current folder when the file is under it."""
    return finding.where(Path.cwd())


def line(exercise: str, finding: Finding) -> str:
    return f"{exercise}: {shown_where(finding)}: {finding.severity.value} [{finding.rule.value}] {finding.message}"


def check_and_print(console: Console, exercises: list[Exercise], solutions_dir: Path, *, strict: bool = False,
                    records: bool = True) -> dict[str, list[Finding]]:
    """Each exercise's findings (name -> findings), printed as they come; ``records=False`` leaves out the mistake
    record's rules (``--record`` is about to write it)."""
    concerns = [c for c in Concern if records or c is not Concern.RECORDS]
    out: dict[str, list[Finding]] = {}
    for ex in exercises:
        found = out[ex.name] = check_exercise(ex, solutions_dir, concerns=concerns)
        bad = failing(found, strict=strict)
        for f in found:
            style = "red" if f in bad else "yellow"
            console.print(f"[{style}]{in_markup(line(ex.name, f))}[/]", soft_wrap=True)
        summary = (f"{len(bad)} finding(s) fail it" if bad else
                   f"no finding fails it{f' ({len(found)} warning(s))' if found else ''}")
        console.print(f"{in_markup(ex.name)}: authoring rules: {summary}", soft_wrap=True)
    return out
