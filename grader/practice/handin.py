"""``grader hand-in``: a candidate's answer, packed exactly as ``grader batch`` reads it.

The zip holds ``<candidate>/<exercise>/<file>.py`` (the workspace's file, byte for byte)
and, beside it, ``HANDIN.toml``: the file's sha256, the exercise's fingerprint from the
workspace's marker, and the last grading of the exercise in this machine's history (score,
when, and whether it graded these very bytes). A panel collects every hand-in into one folder
(``grader collect``, each zip into its own candidate's folder only) and runs ``grader batch`` on it:
the batch grades the ``.py`` file again, so nothing in ``HANDIN.toml`` is believed; its sha256 is
checked against the graded file, and the rest is the candidate's own summary, for the panel to compare.

Like ``grader pack``, the bytes are reproducible (fixed timestamps, modes and order): the same
file and the same last grading give the same zip, so its sha256 identifies what was sent.
"""

from __future__ import annotations

import getpass
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from grader.batch.names import name_problem
from grader.errors import UsageError
from grader.exercise import EXERCISE_NAME
from grader.practice import history
from grader.practice.pack import reproducible_zip, write_atomically
from grader.practice.workspace import Workspace
from grader.untrusted import shown
from grader.userfile import Unreadable, read_user_file

SUMMARY = "HANDIN.toml"
#: The largest answer a hand-in packs: what ``grader batch`` grades (``grader.host.grading.MAX_SUBMISSION_BYTES``).
MAX_BYTES = 1024 * 1024


@dataclass(frozen=True)
class HandIn:
    out: Path
    candidate: str
    candidate_from: str  # where the name came from, said to the candidate
    names: list[str]  # what the zip holds, in order
    sha256: str  # the answer file's
    zip_sha256: str
    last: history.Attempt | None  # the last grading of this exercise in the history, if any


def check_candidate_name(name: str) -> str:
    """``name`` if ``grader batch`` can use it as a candidate folder; a ``UsageError`` saying why otherwise."""
    why = name_problem(name)
    if why is not None:
        raise UsageError(f"The candidate name {shown(name, newlines=False)!r} {why}.",
                         hint="A candidate name is a folder name in the panel's batch: letters, digits, '-', '_', '.'.")
    return name


def candidate_name(ws: Workspace, given: str | None) -> tuple[str, str]:
    """The name to file the answer under, and where it came from: ``--candidate``, the pack's marker, or the
    login name (said, so a candidate who was given another name notices)."""
    if given is not None:
        return check_candidate_name(given), "--candidate"
    if ws.candidate is not None:
        return check_candidate_name(ws.candidate), f"{ws.marker.name}, as the panel packed it"
    try:
        login = getpass.getuser()
    except (OSError, KeyError):  # no login name to be found (a container's anonymous user)
        raise UsageError("No candidate name: the workspace does not name one and there is no login name.",
                         hint="Pass --candidate NAME (the name the panel gave you).") from None
    return check_candidate_name(login), "your login name; pass --candidate NAME to use another"


def hand_in(ws: Workspace, *, candidate: str | None = None, out: Path | None = None,
            force: bool = False) -> HandIn:
    """Write the hand-in zip of workspace ``ws`` (default ``<workspace>/<candidate>-<exercise>.zip``)."""
    name, source_of_name = candidate_name(ws, candidate)
    if not re.fullmatch(EXERCISE_NAME, ws.exercise):  # the marker is the candidate's file: never a path in the zip
        raise UsageError(f"{ws.marker} names the exercise {shown(ws.exercise, newlines=False)!r}, which is not an "
                         "exercise name.", hint="Fix or delete it, or run `grader init NAME` again.")
    try:
        answer = read_user_file(ws.submission, limit=MAX_BYTES)
    except Unreadable as e:
        raise UsageError(f"{shown(str(ws.submission), newlines=False)} {e.reason}: nothing to hand in.",
                         hint="The workspace's file is what is handed in; `grader init` writes it.") from None
    out = Path(out) if out is not None else ws.root / f"{name}-{ws.exercise}.zip"
    if out.is_dir():
        raise UsageError(f"{out} is a folder; give the zip file's path.")
    if (out.exists() or out.is_symlink()) and not force:
        raise UsageError(f"{out} already exists.", hint="Pass --force to replace it.")
    digest = hashlib.sha256(answer).hexdigest()
    attempts = history.attempts(ws.exercise)
    last = attempts[-1] if attempts else None
    folder = f"{name}/{ws.exercise}/"
    files = {folder + ws.submission.name: answer, folder + SUMMARY: summary(ws, name, digest, last).encode()}
    data, names = reproducible_zip([f"{name}/", folder], files)
    write_atomically(out, data)
    return HandIn(out, name, source_of_name, names, digest, hashlib.sha256(data).hexdigest(), last)


def summary(ws: Workspace, candidate: str, sha256: str, last: history.Attempt | None) -> str:
    """``HANDIN.toml``: what is handed in and the last grading the candidate saw (their word, not evidence)."""
    lines = [
        "# Written by `grader hand-in`. The panel grades the .py file again; this is the candidate's summary.",
        "[hand_in]",
        f"candidate = {_toml(candidate)}",
        f"exercise = {_toml(ws.exercise)}",
        f"file = {_toml(ws.submission.name)}",
        f"sha256 = {_toml(sha256)}",
    ]
    if ws.fingerprint is not None:
        lines.append(f"exercise_fingerprint = {_toml(ws.fingerprint)}")
    if last is not None:
        lines += [
            "",
            "[last_grading]",
            f"at = {_toml(last.at)}",
            f"score = {last.score!r}",
            f"max_score = {last.max_score!r}",
            f"sandbox = {_toml(last.sandbox)}",
            f"same_file = {'true' if last.sha256 == sha256 else 'false'}",
        ]
    return "\n".join(lines) + "\n"


def _toml(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string
