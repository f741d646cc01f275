"""What a panel learns from a grading beyond its score: the mistake it looks like, and what to ask next.

Both come from files the exercise keeps beside its checks: ``mistakes.json`` (its mutants'
signatures, :mod:`grader.hindsight.records`) and ``interview.toml`` (its question bank,
:mod:`grader.hindsight.interview`). They are read before the grading starts, so a malformed one
is an error naming the file, never a grading that silently lacks them; an exercise with
neither gets an empty diagnosis and no follow-ups. This module is the one place that asks
the guide for questions: the report keeps only the questions' text, so a stored report
re-renders without the exercise.
"""

from __future__ import annotations

from dataclasses import dataclass

from grader.exercise import Exercise
from grader.hindsight import interview
from grader.hindsight.diagnosis import diagnose
from grader.hindsight.records import Loss, MistakeRecord, load_record, losses
from grader.reports.model import Diagnosis, FollowUp, Report

#: Follow-up questions suggested per grading.
FOLLOW_UPS = 3


@dataclass(frozen=True)
class Hindsight:
    """An exercise's record of mistakes and question bank, loaded once per grading (or per batch)."""

    exercise: Exercise
    record: MistakeRecord | None
    guide: interview.Guide

    @classmethod
    def load(cls, ex: Exercise) -> "Hindsight":
        return cls(ex, load_record(ex), interview.load_guide(ex))

    def annotate(self, report: Report, *, untouched_stub: bool = False) -> Report:
        """``report`` with its diagnosis and follow-ups: a new report, ``report`` itself left as it is. The
        follow-ups stay empty when nothing was graded or the file does not import: no check ran the
        candidate's logic, so there is nothing to ask about."""
        diagnosis = diagnose(report, self.record, fingerprint=self.exercise.fingerprint,
                             candidates=self.exercise.config.diagnosis.candidates, untouched_stub=untouched_stub)
        return report.model_copy(update={"diagnosis": diagnosis, "follow_ups": self._follow_ups(report, diagnosis)})

    def _follow_ups(self, report: Report, diagnosis: list[Diagnosis]) -> list[FollowUp]:
        if not report.graded or report.load_error is not None:
            return []
        lost = losses(report).lost
        in_order = [name for name in dict.fromkeys(c.function for c in report.checks) if name in lost]
        failed = [name for name in in_order if lost[name].how is Loss.FAILED]  # wrong answers
        otherwise = {name: lost[name] for name in in_order if lost[name].how is not Loss.FAILED}
        diagnosed = [d.mutant for d in diagnosis if d.kind == "mistake"]
        return [FollowUp(ask=q.ask, answer=q.answer,
                         because=interview.because(q, failed, diagnosed, lost_otherwise=otherwise))
                for q in interview.suggest(self.guide, failed, diagnosed, k=FOLLOW_UPS, lost_otherwise=otherwise)]
