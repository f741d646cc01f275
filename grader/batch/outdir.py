"""Choose the output folder safely, and say where each thing goes in it.

The folder must be new, empty, or one a previous batch made (it holds the store); it may not sit
inside the submissions, nor they inside it. Inside it, the grader's own files are at the top and
everything named after a candidate under ``candidates/<name>/``, so no candidate name can land on a
grader file. See docs/decisions/batch-output-folder.md.
"""

from __future__ import annotations

from pathlib import Path

from grader.batch.store import FILENAME
from grader.errors import UsageError

#: The one top-level folder that holds per-candidate files; nothing of the grader's own is named so.
CANDIDATES = "candidates"


def candidate_dir(out: Path, candidate: str) -> Path:
    """Where ``candidate``'s scorecards and Gradescope files go: ``<out>/candidates/<candidate>/``."""
    return out / CANDIDATES / candidate


def prepare_output(submissions: Path, out: Path) -> Path:
    if not submissions.is_dir():
        raise UsageError(f"SUBMISSIONS {str(submissions)!r} is not a folder.",
                         hint="Give the folder holding <candidate>/<exercise>/<file>.py.")
    subs, dest = submissions.resolve(), out.resolve()
    if dest == subs or subs in dest.parents:
        raise UsageError(f"The output folder {str(out)!r} is inside the submissions folder {str(submissions)!r}.",
                         hint="Choose a folder outside it, e.g. --output results/.")
    if dest in subs.parents:
        raise UsageError(f"The submissions folder {str(submissions)!r} is inside the output folder {str(out)!r}.")
    if dest.exists() and not dest.is_dir():
        raise UsageError(f"The output folder {str(out)!r} is a file.")
    if dest.is_dir() and any(dest.iterdir()) and not (dest / FILENAME).is_file():
        raise UsageError(f"The output folder {str(out)!r} already holds files the grader did not write.",
                         hint="Choose a new or empty folder; a folder from an earlier batch is reused and resumed.")
    dest.mkdir(parents=True, exist_ok=True)
    return dest
