"""Run the authoring rules on one exercise folder: every concern's rules, in a fixed order.

A rule whose own code raises is reported as a ``rule-crashed`` finding naming the rule and
the exception (an error: never a silent pass), and the other rules still run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable

from grader.authoring import (checks, contract, counts, instruments, interview, layout, nan_safe, prompt, records,
                              replies, subset)
from grader.authoring.findings import Concern, Finding, Rule
from grader.authoring.folder import Folder
from grader.exercise import Exercise, load_exercise

RuleFunction = Callable[[Folder], list[Finding]]

#: Every rule, by concern, in the order they run and report.
RULES: dict[Concern, tuple[RuleFunction, ...]] = {
    Concern.PROMPT: prompt.RULES,
    Concern.LAYOUT: layout.RULES,
    Concern.COUNTS: counts.RULES,
    Concern.SUBSET: subset.RULES,
    Concern.CHECKS: checks.RULES,
    Concern.NAN_SAFE: nan_safe.RULES,
    Concern.CONTRACT: contract.RULES,
    Concern.RECORDS: records.RULES,
    Concern.INTERVIEW: interview.RULES,
    Concern.INSTRUMENTS: instruments.RULES,
    Concern.REPLIES: replies.RULES,
}


def check_exercise(exercise: Exercise | Path, solutions_dir: Path, *,
                   concerns: Iterable[Concern] | None = None) -> list[Finding]:
    """Every finding of the authoring rules on ``exercise`` (a loaded exercise or its folder), whose reference,
    variants, mutants and contract table are under ``solutions_dir / <name>``; ``concerns``: only those rules."""
    ex = exercise if isinstance(exercise, Exercise) else load_exercise(Path(exercise))
    folder = Folder(ex, Path(solutions_dir))
    wanted = list(RULES) if concerns is None else [Concern(c) for c in concerns]
    out: list[Finding] = []
    for concern in wanted:
        for rule in RULES[concern]:
            try:
                out += rule(folder)
            except Exception as e:  # noqa: BLE001 - a rule's own bug is a finding, never a pass or a traceback
                out.append(Finding(Rule.RULE_CRASHED, ex.root, f"the rule {rule.__module__}.{rule.__name__} raised "
                                   f"{type(e).__name__}: {e}. This is a bug in grader's authoring rules (or a folder "
                                   "they did not foresee): please report it with the folder."))
    return out


def errors(findings: Iterable[Finding]) -> list[Finding]:
    return [f for f in findings if f.is_error]
