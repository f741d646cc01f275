"""A report's warnings: each a code that code decides by, and the words people read (issue 28).

Before, a warning was its text, and ``grader validate`` found an undocumented check by matching
"has no docstring" in it: rewording a warning changed what validate decided. Now the words are for
people only; what a warning is about is its :class:`WarningCode`.
"""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict


class WarningCode(str, Enum):
    """Why a report carries a warning: what code decides by (``grader validate`` fails an exercise on
    ``UNDOCUMENTED_CHECK``), never the words, which are for people and may change."""

    EMPTY_FILE = "empty_file"  # the submission file is empty
    UNTOUCHED_STUB = "untouched_stub"  # the file is the exercise's stub, byte for byte
    SANDBOX_FALLBACK = "sandbox_fallback"  # `--sandbox auto` found no usable Docker and graded locally
    GPUS_IGNORED = "gpus_ignored"  # --gpus given for an exercise that does not use a GPU
    NO_GPUS = "no_gpus"  # no --gpus for an exercise that can use one: its GPU checks are skipped
    NOT_ISOLATED = "not_isolated"  # graded in the local sandbox
    LOCAL_GPU = "local_gpu"  # the local sandbox's GPU set-up, and what it does not bound
    LOCAL_LIMIT = "local_limit"  # a resource limit the local sandbox could not set
    WALL_CLOCK_DEADLINE = "wall_clock_deadline"  # call deadlines measured by the wall clock, and why
    FORBIDDEN_API_ABSENT = "forbidden_api_absent"  # a forbidden API this torch lacks: only the source audit covers it
    UNDOCUMENTED_CHECK = "undocumented_check"  # a check without a docstring: its scorecard name is made up
    PROGRAMS_NOT_SEALED = "programs_not_sealed"  # the sandbox could not refuse new programs (no seccomp filter)
    BENCH_UNGUARDED = "bench_unguarded"  # a benchmark's grading: the module ran as written, not rewritten
    VISIBLE_ONLY = "visible_only"  # a practice run: the visible checks only (grader.host.check_scope)
    UNCLASSIFIED = "unclassified"  # read from a report written before warnings had codes


class ReportWarning(BaseModel):
    """One warning on a report: its code for code to decide by, its message for people (shown as written)."""

    model_config = ConfigDict(extra="forbid")

    code: WarningCode
    message: str


def warnings_read(value):
    """Warnings as reports before codes wrote them (plain strings) are read as ``UNCLASSIFIED``."""
    if isinstance(value, list):
        return [{"code": WarningCode.UNCLASSIFIED, "message": w} if isinstance(w, str) else w for w in value]
    return value
