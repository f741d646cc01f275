"""Which exercise and which file ``grader submit`` means, from zero, one or two arguments.

- ``grader submit`` inside a workspace: its exercise, its file.
- ``grader submit FILE`` (or a workspace folder): the workspace holding it says the exercise.
- ``grader submit NAME``: that exercise; inside a workspace of the same exercise, the
  workspace's file, otherwise the stub in the exercise folder (an author editing in place).
- ``grader submit NAME FILE``: exactly that.

A path that is a workspace wins over an exercise of the same name, because
``grader init attention`` makes a folder called ``attention``: the candidate who
then types ``grader submit attention`` means their work, not our stub.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from grader.errors import UsageError
from grader.exercise import Exercise, load_exercise
from grader.practice.workspace import MARKER, Workspace, find_workspace
from grader.reports.model import Report
from grader.untrusted import shown


@dataclass(frozen=True)
class Target:
    exercise: Exercise
    submission: Path | None  # None: the exercise's own stub
    workspace: Workspace | None = None


def resolve_target(first: str | None, second: str | None, *, cwd: Path) -> Target:
    if second is not None:
        return Target(load_exercise(first), Path(second))
    if first is None:
        ws = find_workspace(cwd)
        if ws is None:
            raise UsageError(
                f"No exercise given, and {str(cwd)!r} is not inside a workspace (no {MARKER} here or above).",
                hint="Name one: `grader submit NAME [FILE]` (`grader list` shows the names), "
                     "or make a workspace with `grader init NAME`.")
        return Target(ws.load(), ws.submission, ws)
    path = Path(first)
    if not path.is_absolute():
        path = cwd / path
    if path.exists():
        ws = find_workspace(path)
        if ws is not None:
            return Target(ws.load(), path if path.is_file() else ws.submission, ws)
    if path.is_file():
        raise UsageError(f"{first!r} is not inside a workspace, so which exercise it answers is unknown.",
                         hint=f"Name the exercise: `grader submit NAME {first}`.")
    exercise = load_exercise(first)  # a name or an exercise folder; the error lists the known names
    ws = find_workspace(cwd)
    if ws is not None and ws.load().name == exercise.name:
        return Target(exercise, ws.submission, ws)
    return Target(exercise, None)


def untouched_stub_note(target: Target, report: Report, *, cwd: Path) -> str | None:
    """What to tell a candidate whose graded file is the exercise's stub byte for byte; ``None`` otherwise.

    Its 0 is not a score of theirs, so ``grader submit`` keeps it out of the history. The usual cause is
    ``grader submit NAME`` run outside the workspace, which grades the stub that ships with the grader:
    the note names that file and the folder the candidate is in, so the mistake is plain.
    """
    stub = target.exercise.stub
    try:
        if hashlib.sha256(stub.read_bytes()).hexdigest() != report.environment.submission_sha256:
            return None
    except OSError:
        return None
    name = target.exercise.name
    if target.submission is None:
        return (f"graded the stub that ships with the grader ({shown(str(stub), newlines=False)}), unchanged, "
                f"not your work: {shown(str(cwd), newlines=False)} is not inside a workspace for {name}. "
                f"Not stored in history. Run `grader submit` inside the folder `grader init {name}` made, "
                f"or name your file: `grader submit {name} FILE`.")
    # The scorecard already says the file is the untouched stub: add only what it cannot say.
    return "not stored in history: an untouched stub's 0 is not an attempt of yours."
