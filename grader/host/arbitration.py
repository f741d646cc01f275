"""A check error is the grader's only if the exercise's reference errors on that check too.

A check whose own code raises (a ``KeyError``, a ``TypeError`` in a helper) after the reply it read
was checked against its shape is either the grader's bug or an answer the check did not foresee. The
judge decides which, once, by grading the exercise's reference on exactly those checks, in the same
kind of sandbox and under the same hypothesis seed: a check that errors there too is the grader's
bug (the grading is not graded, as before); one that does not is this submission's failure on that
check, counted as a failure, with what the check raised kept for the panel (``CheckResult.check_error``).
Without a reference to run, or when its run does not say, nothing is counted: not graded.
"""

from __future__ import annotations

import hashlib
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path

from grader.exercise import Exercise
from grader.reports.model import CheckResult, Report, Status, total
from grader.wire.request import GradingRequest

#: What a check whose own code raised on this submission, but not on the reference, says on the scorecard.
COUNTED = ("the check could not go on with this submission's answer (its own code raised {what}, which it does "
           "not on the exercise's reference): counted as this submission's failure on this check")

#: (exercise fingerprint, reference sha256, sandbox kind, seed, check id) -> whether the reference errored there.
_SEEN: dict[tuple, bool] = {}


def reference_file(ex: Exercise, solutions_dir: Path | None = None) -> Path | None:
    """The exercise's reference solution, ``<solutions>/<name>/<submission>``: under ``solutions_dir`` when given,
    else the catalog's solutions, else the ``solutions/`` beside the exercise's folder (``grader new``'s layout);
    None where there is none."""
    from grader.corpus import SOLUTIONS_DIR

    roots = [solutions_dir] if solutions_dir is not None else [SOLUTIONS_DIR, ex.root.parent.parent / "solutions"]
    for root in roots:
        path = Path(root) / ex.name / ex.config.exercise.submission
        if path.is_file():
            return path
    return None


def reference_errors(ex: Exercise, reference: Path | None, ids: list[str], asked: GradingRequest,
                     run: Callable | None = None) -> dict[str, bool] | None:
    """For each check id, whether ``reference``'s own grading errors on it, graded as ``asked`` graded the
    submission (one judge run for all, remembered per exercise, reference, sandbox kind and seed); None when there
    is no reference or its run does not say."""
    if reference is None:
        return None
    key = (ex.fingerprint, hashlib.sha256(reference.read_bytes()).hexdigest(), asked.sandbox, asked.seed)
    wanted = [i for i in ids if (*key, i) not in _SEEN]
    if wanted:
        from grader.host.runner import run_checks

        with tempfile.TemporaryDirectory(prefix="grader-reference-") as tmp:
            graded = Path(tmp) / ex.config.exercise.submission
            graded.write_bytes(reference.read_bytes())
            # Its own sandbox: never the submission's container, which its judge took over and removed.
            again = asked.model_copy(update={"submission": str(graded), "only": wanted, "prestarted": None,
                                             "grading_id": uuid.uuid4().hex[:12]})
            result = (run or run_checks)(ex, again)
        if result.infra is not None or any(i not in result.results for i in wanted):
            return None
        for i in wanted:
            _SEEN[(*key, i)] = result.results[i].status is Status.CHECK_ERROR
    return {i: _SEEN[(*key, i)] for i in ids}


#: The first line of a grading's "not graded" reason when a check's own code raised on the reference too (a
#: candidate reads this line).
CHECK_ERROR_REASON = ("a check of this exercise raised an error of its own, a bug in the grader's checks, not in the "
                      "submission: nothing was scored (report it; rerunning gives the same until the check is fixed)")
#: ... and when the reference could not be graded to tell whose error it is.
UNSETTLED = ("a check of this exercise raised an error of its own, and the exercise's reference could not be graded "
             "on it to tell whether the check or the submission is at fault: nothing was scored (rerun)")


def settle(report: Report, ex: Exercise, reference: Path | None, asked: GradingRequest,
           run: Callable | None = None) -> Report:
    """``report`` with each check error the reference does not share counted as this submission's failure, and
    its score; while an error the reference shares remains (or any, when the reference could not say), not
    graded: no score, the checks kept, so the panel and the author see which one broke and how."""
    errors = report.check_errors
    if not errors:
        return report
    shared = reference_errors(ex, reference, [c.id for c in errors], asked, run=run)
    if shared is not None:
        checks = [_counted(c) if c.status is Status.CHECK_ERROR and not shared[c.id] else c for c in report.checks]
        report = report.model_copy(update={"checks": checks})
        if not report.check_errors:
            score, max_score = total(report.checks)
            return report.model_copy(update={"score": score, "max_score": max_score})
    detail = "\n".join(f"{c.id}: {c.message}" for c in report.check_errors)  # the panel's: ids and what they raised
    return report.model_copy(update={"graded": False, "not_graded_reason": CHECK_ERROR_REASON if shared is not None
                                     else UNSETTLED, "not_graded_detail": detail, "score": 0.0, "max_score": 0.0})


def _counted(check: CheckResult) -> CheckResult:
    what = check.message.removeprefix("the check's own code raised ").strip() or "an error"
    return check.model_copy(update={"status": Status.FAILED, "score": 0.0, "check_error": check.message,
                                    "message": COUNTED.format(what=what)})
