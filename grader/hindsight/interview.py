"""An exercise's interview guide: spoken follow-up questions for the panel, and which to ask.

``interview.toml`` (judge side; ``Exercise.public_files`` is an allowlist, so never in a candidate's
pack) lists ``[[question]]`` tables: what to ask, a strong answer, the checks and mutants it is tied
to, and ``when``: ``"failed"`` (asked when a tied check failed or a tied mutant was diagnosed) or
``"passed"`` (deeper, asked when everything it is tied to passed). :func:`suggest` picks the few a
scorecard shows deterministically, so two panel members reading a report ask the same things. That
the tied names exist is ``tests/test_interview.py``'s (``solutions/`` is not installed).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from grader.errors import ExerciseError
from grader.exercise import Exercise
from grader.hindsight.records import Loss, Lost
from grader.reports.model import check_function

#: The guide's file name inside an exercise folder.
GUIDE_FILE = "interview.toml"

When = Literal["failed", "passed"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Question(_Strict):
    """One spoken question, the answer a strong candidate gives, and what it is tied to."""

    ask: str = Field(description="the question, as the interviewer says it")
    answer: str = Field(description="what a strong candidate says, 1-4 sentences; read aloud by the panel")
    checks: list[str] = Field(default_factory=list, description="check function names in checks/test_*.py")
    mutants: list[str] = Field(default_factory=list, description="stems of files in solutions/<ex>/mutants "
                                                                 "or more_mutants")
    when: When = Field(description='"failed": about what went wrong; "passed": deeper, when all it is tied to passed')

    @field_validator("ask", "answer")
    @classmethod
    def _not_blank(cls, text: str) -> str:
        if not text.strip():
            raise ValueError("must not be empty")
        return text.strip()

    @field_validator("checks", "mutants")
    @classmethod
    def _names(cls, names: list[str]) -> list[str]:
        bad = [n for n in names if not n or n != n.strip() or "/" in n or "." in n]
        if bad:
            raise ValueError(f"names only (a check function or a mutant file's stem, no path or suffix): {bad!r}")
        if len(set(names)) != len(names):
            raise ValueError(f"a name is listed twice: {names!r}")
        return names

    @model_validator(mode="after")
    def _tied(self) -> "Question":
        if not self.checks and not self.mutants:
            raise ValueError("a question must be tied to at least one check or mutant (checks = [...] or "
                             "mutants = [...])")
        return self


class Guide(_Strict):
    """An exercise's questions, in the order the author wrote them (the order ties are broken in)."""

    exercise: str
    questions: list[Question] = Field(default_factory=list)


class _GuideFile(_Strict):
    """The file's own shape: ``[[question]]`` tables and nothing else."""

    question: list[Question] = Field(default_factory=list)

    @model_validator(mode="after")
    def _distinct(self) -> "_GuideFile":
        seen: set[str] = set()
        for q in self.question:
            if q.ask in seen:
                raise ValueError(f"the question {q.ask!r} is asked twice")
            seen.add(q.ask)
        return self


def guide_path(exercise: Exercise) -> Path:
    return exercise.root / GUIDE_FILE


def load_guide(exercise: Exercise) -> Guide:
    """The exercise's guide; an empty one when it has no ``interview.toml``.

    A malformed file is an :class:`~grader.errors.ExerciseError` naming the file, the
    question (counted from 1, with the start of its ``ask``) and the field.
    """
    path = guide_path(exercise)
    if not path.is_file():
        return Guide(exercise=exercise.name)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise ExerciseError(f"{path} is not valid TOML: {e}") from None
    except UnicodeDecodeError as e:
        raise ExerciseError(f"{path} is not UTF-8 text: {e}") from None
    try:
        parsed = _GuideFile.model_validate(raw)
    except ValidationError as e:
        raise ExerciseError(_describe(path, raw, e),
                            hint="Each [[question]] has ask, answer, when (\"failed\" or \"passed\") and "
                                 "checks and/or mutants; see AUTHORING.md, \"The interview guide\".") from None
    return Guide(exercise=exercise.name, questions=parsed.question)


def _describe(path: Path, raw: dict, err: ValidationError) -> str:
    """One line per problem: which question (from 1, with the start of its ``ask``) and which field."""
    lines = [f"{path} is not a valid interview guide:"]
    questions = raw.get("question") if isinstance(raw.get("question"), list) else []
    for e in err.errors():
        loc = list(e["loc"])
        where = ".".join(str(p) for p in loc) or "(document)"
        if len(loc) >= 2 and loc[0] == "question" and isinstance(loc[1], int):
            n = loc[1]
            ask = questions[n].get("ask") if n < len(questions) and isinstance(questions[n], dict) else None
            said = f" ({str(ask)[:50]!r})" if isinstance(ask, str) else ""
            field = ".".join(str(p) for p in loc[2:]) or "(the question)"
            where = f"question {n + 1}{said}, field {field}"
        got = f" (got {e['input']!r:.80})" if e["type"] not in ("missing", "value_error") else ""
        lines.append(f"  [{where}] {e['msg']}{got}")
    return "\n".join(lines)


def suggest(guide: Guide, failed_checks: list[str], diagnosed_mutants: list[str], k: int = 3, *,
            lost_otherwise: dict[str, Lost] | None = None) -> list[Question]:
    """At most ``k`` questions to ask after a grading, never one twice, always in the same order.

    ``failed_checks`` are the checks lost as wrong answers (an assertion about what came back failed),
    in the order they ran; ``lost_otherwise`` the checks lost some other way (timed out, raised,
    crashed, no credit for a forbidden API), check function -> how, in that order too. A ``"failed"``
    question's premise is a wrong answer ("your cache came back with the wrong shape"), so it is asked
    only about a check that was one, never about a timeout or an exception.

    First the ``"failed"`` questions tied to what went wrong: for each failed check in
    the order given, the questions tied to it, then for each diagnosed mutant, the
    questions tied to it; within one, in the guide's order. Then one question per way a check
    was lost otherwise (:func:`outcome_question`: what happened, asked as it happened). Then,
    while fewer than ``k``, the ``"passed"`` questions none of whose checks was lost
    and none of whose mutants was diagnosed, in the guide's order. A ``"failed"`` question
    about a mistake the candidate did not make is never suggested, nor a deeper one
    about a check they lost.
    """
    if k <= 0:
        return []
    failed = [check_function(c) for c in failed_checks]
    otherwise = {check_function(c): how for c, how in (lost_otherwise or {}).items()}
    lost_set, diagnosed_set = set(failed) | set(otherwise), set(diagnosed_mutants)
    chosen: list[Question] = []

    def take(q: Question) -> None:
        if len(chosen) < k and q not in chosen:
            chosen.append(q)

    about_mistakes = [q for q in guide.questions if q.when == "failed"]
    for name in failed:
        for q in about_mistakes:
            if name in q.checks:
                take(q)
    for mutant in diagnosed_mutants:
        for q in about_mistakes:
            if mutant in q.mutants:
                take(q)
    asked: set[tuple[Loss, str | None]] = set()
    for name, how in otherwise.items():
        if (how.how, how.detail) not in asked:
            asked.add((how.how, how.detail))
            take(outcome_question(name, how))
    for q in guide.questions:
        if q.when == "passed" and not (lost_set & set(q.checks)) and not (diagnosed_set & set(q.mutants)):
            take(q)
    return chosen


def outcome_question(check: str, how: Lost) -> Question:
    """The grader's own question about a check lost without a wrong answer: asked as it happened, since an
    exercise's guide writes its questions about wrong answers. Tied to ``check`` (its first such check)."""
    ask, answer = _OUTCOME_QUESTIONS[how.how]
    what = how.detail or ("a forbidden API" if how.how is Loss.FORBIDDEN else "an exception")
    if how.how is Loss.ERROR and how.detail is None:
        ask, answer = _CRASH
    return Question(ask=ask.format(check=check, what=what), answer=answer, checks=[check], when="failed")


_OUTCOME_QUESTIONS = {
    Loss.TIMEOUT: (
        "Some calls to your code never returned before the deadline ({check} among them). Where does your loop "
        "or recursion end, and what bounds the work one call does?",
        "They point at the loop whose exit condition can fail to hold (or work that grows with something it "
        "should not, such as a sequence re-processed at every step), state the bound the code should have, and "
        "say how a small input run by hand would have shown the hang."),
    Loss.ERROR: (
        "Your code raised {what} ({check} among the checks it cost). Which input makes it raise, and what should "
        "the code do with that input instead?",
        "They rebuild the input from the contract (a shape, a dtype, an edge case such as an empty batch or a "
        "zero), explain why the code raised there, and say what the contract asks for: a value, or the specific "
        "error it names."),
    Loss.FORBIDDEN: (
        "Your solution uses {what}, which this exercise rules out ({check} among the checks that got no credit). "
        "How would you compute the same thing with the operations it allows?",
        "They write out what the forbidden call computes (its formula and shapes) and build it from the allowed "
        "operations, naming the numerical care it needs (a max subtracted before an exponent, a mask applied "
        "before a softmax)."),
}
_CRASH = ("The sandbox process died during {check}. What in your code could end the process or exhaust its memory?",
          "They look for what grows without bound (a tensor kept per step, a list never cleared, an allocation "
          "sized by an input) or for a call that exits the process, and say how to bound it.")


def because(question: Question, failed_checks: list[str], diagnosed_mutants: list[str], *,
            lost_otherwise: dict[str, Lost] | None = None) -> str:
    """Why :func:`suggest` chose ``question``, for a scorecard's ``FollowUp.because``: the true outcome.

    "check X failed" (a wrong answer: the first of its checks, in the order given), else "looks like
    mutant Y", else "check X timed out" / "raised E" / "crashed the sandbox" / "got no credit for the
    forbidden A", else "everything it is tied to passed".
    """
    if question.when == "failed":
        for name in map(check_function, failed_checks):
            if name in question.checks:
                return f"check {name} failed"
        for mutant in diagnosed_mutants:
            if mutant in question.mutants:
                return f"looks like mutant {mutant}"
        for name, how in ((check_function(c), h) for c, h in (lost_otherwise or {}).items()):
            if name in question.checks:
                return f"check {name} {_OUTCOME_WORDS[how.how](how.detail)}"
    return "everything it is tied to passed"


_OUTCOME_WORDS = {
    Loss.TIMEOUT: lambda _: "timed out",
    Loss.ERROR: lambda detail: f"raised {detail}" if detail else "crashed the sandbox",
    Loss.FORBIDDEN: lambda detail: f"got no credit for the forbidden {detail or 'API'}",
    Loss.FAILED: lambda _: "failed",
}
