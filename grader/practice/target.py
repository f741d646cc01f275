"""Which exercise and which file ``grader submit`` means, from zero, one or two arguments.

No argument: the workspace's exercise and file. ``FILE`` (or a workspace folder): the workspace holding
it says the exercise. ``NAME``: that exercise, with the workspace's file inside one of it, else its
stub. ``NAME FILE``: exactly that. The exercise always comes from the catalog the command grades
against (``grader.catalogs``): a folder holding an ``exercise.toml`` is never loaded. A path that is a
workspace wins over an exercise of the same name (``grader init attention`` makes ``attention/``).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from grader.catalogs import Catalog
from grader.errors import UsageError
from grader.exercise import EXERCISE_NAME, Exercise
from grader.practice.workspace import MARKER, Workspace, find_workspace
from grader.untrusted import shown


@dataclass(frozen=True)
class Target:
    exercise: Exercise
    submission: Path | None  # None: the exercise's own stub
    workspace: Workspace | None = None
    notes: list[str] = field(default_factory=list)  # said before grading (a workspace made from an older exercise)
    given: str | None = None  # the file as the user named it, for messages about it


def resolve_target(first: str | None, second: str | None, *, cwd: Path, catalog: Catalog) -> Target:
    if second is not None:
        return Target(catalog.resolve(first), Path(second), given=second)
    if first is None:
        ws = find_workspace(cwd)
        if ws is None:
            raise UsageError(
                f"No exercise given, and {str(cwd)!r} is not inside a workspace (no {MARKER} here or above).",
                hint="Name one: `grader submit NAME [FILE]` (`grader list` shows the names), "
                     "or make a workspace with `grader init NAME`.")
        return _in_workspace(ws, ws.submission, catalog)
    path = Path(first)
    if not path.is_absolute():
        path = cwd / path
    if path.exists():
        ws = find_workspace(path)
        if ws is not None:
            return _in_workspace(ws, path if path.is_file() else ws.submission, catalog, given=first)
        if path.is_file():
            raise UsageError(f"{first!r} is not inside a workspace, so which exercise it answers is unknown.",
                             hint=f"Name the exercise: `grader submit NAME {first}`.")
    elif not re.fullmatch(EXERCISE_NAME, first):  # not a name, so a file or folder that is not there
        raise UsageError(f"Submission {shown(first, newlines=False)!r} does not exist"
                         + (f" (in {shown(str(cwd), newlines=False)})." if not Path(first).is_absolute() else "."),
                         hint="Check the file's name; inside a workspace, `grader submit` alone grades its file.")
    exercise = catalog.resolve(first)  # a name, or the catalog's own folder; the error lists the known names
    ws = find_workspace(cwd)
    if ws is not None and ws.exercise == exercise.name:
        return Target(exercise, ws.submission, ws, ws.notes(exercise))
    return Target(exercise, None)


def _in_workspace(ws: Workspace, submission: Path, catalog: Catalog, *, given: str | None = None) -> Target:
    exercise = ws.load(catalog)
    return Target(exercise, submission, ws, ws.notes(exercise), given=given)


def untouched_stub_note(target: Target, sha256: str, *, cwd: Path, given_as: str) -> str | None:
    """The one line to say first when the file to grade is the exercise's stub byte for byte; ``None`` otherwise.

    Its 0 is not a score of theirs, so ``grader submit`` keeps it out of the history. The usual cause is
    ``grader submit NAME`` run outside the workspace, which grades the stub that ships with the grader:
    the line names that file and the folder the candidate is in, so the mistake is plain.
    """
    stub = target.exercise.stub
    try:
        if hashlib.sha256(stub.read_bytes()).hexdigest() != sha256:
            return None
    except OSError:
        return None
    name = target.exercise.name
    if target.submission is None:
        return (f"this is the stub that ships with the grader ({shown(str(stub), newlines=False)}), unchanged, "
                f"not your work: {shown(str(cwd), newlines=False)} is not inside a workspace for {name}. "
                f"Nothing is graded or stored. Run `grader submit` inside the folder `grader init {name}` made, "
                f"or name your file: `grader submit {name} FILE`.")
    return (f"{shown(given_as, newlines=False)} is the exercise's stub, unchanged: "
            "nothing of yours to grade yet, so no check runs and nothing is stored in history.")
