"""A candidate's workspace: the public files of one exercise plus a marker naming it.

``grader init`` writes the workspace; ``grader submit`` run anywhere inside it finds
the marker (``grader.toml``) in the folder or a parent and knows the exercise and
the file to grade. Whatever the candidate wrote is theirs: init never overwrites
a file silently, and with ``--force`` it keeps the old one as ``NAME.bak``.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from grader.errors import UsageError
from grader.catalogs import Catalog
from grader.exercise import Exercise

MARKER = "grader.toml"


@dataclass(frozen=True)
class Workspace:
    root: Path
    exercise: str  # a name, looked up in the catalog a command uses (never a path: grader.catalogs)
    submission: Path  # the file to grade, inside root
    fingerprint: str | None = None  # the exercise's when the workspace was made: "changed since" is a note
    candidate: str | None = None  # who the panel handed it to (`grader pack --candidate`), for `grader hand-in`
    ignored_path: str | None = None  # an older marker's `path = ...`: never followed, said once

    @property
    def marker(self) -> Path:
        return self.root / MARKER

    def load(self, catalog: Catalog) -> Exercise:
        """The exercise the marker names, from ``catalog``; a ``UsageError`` naming the marker when there is none."""
        try:
            return catalog.load(self.exercise)
        except UsageError as e:
            fix = f"Fix or delete {self.marker}, or run `grader init` again."
            raise UsageError(f"{self.marker} names exercise {self.exercise!r}, which cannot be loaded: {e}",
                             hint=f"{e.hint} {fix}" if e.hint else fix) from None

    def notes(self, ex: Exercise) -> list[str]:
        """What the candidate should know before this workspace's file is graded against ``ex``."""
        notes = []
        if self.ignored_path is not None:
            notes.append(f"{self.marker} names a folder (path = {self.ignored_path!r}), which is not used: "
                         f"exercises come from the catalog by name ({self.exercise}); "
                         "to grade against another folder of exercises, add --exercise-root DIR")
        if self.fingerprint is not None and self.fingerprint != ex.fingerprint:
            notes.append(f"the exercise {ex.name} changed since this workspace was made (its checks, probes or "
                         "limits differ from those it was made from): graded against the catalog's current one")
        return notes


@dataclass
class InitResult:
    dest: Path
    written: list[Path] = field(default_factory=list)  # new or replaced files
    unchanged: list[Path] = field(default_factory=list)  # already there, byte for byte
    backups: dict[Path, Path] = field(default_factory=dict)  # replaced file -> where its old content went


def marker_text(ex: Exercise, *, candidate: str | None = None) -> str:
    """The marker for ``ex``: its name and fingerprint (never a path: a workspace can travel, and a folder it
    names could be anyone's), and the candidate it was handed to, when a panel said."""
    lines = [
        "# A grader workspace: `grader submit` run in this folder (or below) grades",
        "# `submission` against the catalog's exercise `exercise`. Written by `grader init` or `grader pack`.",
        "[workspace]",
        f"exercise = {_toml_string(ex.name)}",
        f"submission = {_toml_string(ex.config.exercise.submission)}",
        f"fingerprint = {_toml_string(ex.fingerprint)}",
    ]
    if candidate is not None:
        lines.append(f"candidate = {_toml_string(candidate)}")
    return "\n".join(lines) + "\n"


def public_contents(ex: Exercise) -> dict[str, bytes]:
    """The workspace's copy of each public file, by name: the stub byte for byte, the prose with its commands
    made to work in the workspace (:func:`for_workspace`). ``grader init`` and ``grader pack`` both write these."""
    return {p.name: p.read_bytes() if p == ex.stub else for_workspace(ex, p.read_text(encoding="utf-8")).encode()
            for p in ex.public_files}


def for_workspace(ex: Exercise, text: str) -> str:
    """``text`` (the README, an example's docstring) with its commands rewritten for the workspace.

    Authors write them to run from the repository root (``pytest exercises/NAME/test_x.py``,
    ``grader submit exercises/NAME``). In a workspace the exercise's files sit at its root and
    the marker names the exercise, so ``exercises/NAME/FILE`` is ``FILE``, a bare
    ``grader submit exercises/NAME`` is ``grader submit``, and ``exercises/NAME`` before another
    argument is the name, ``NAME`` (``grader submit NAME path/to/copy.py`` works from anywhere).
    """
    folder = re.escape(f"exercises/{ex.name}")
    text = re.sub(rf"(?<![\w/.-]){folder}/(?=[\w.-])", "", text)
    text = re.sub(rf"(grader submit) {folder}(?=[ \t]*(#|`|$))", r"\1", text, flags=re.MULTILINE)
    return re.sub(rf"(?<![\w/.-]){folder}(?![\w/.-])", ex.name, text)


def _toml_string(value: str) -> str:
    # A JSON string is a valid TOML basic string (same quotes, escapes a subset of TOML's).
    return json.dumps(value, ensure_ascii=False)


def init_workspace(ex: Exercise, dest: Path, *, force: bool = False) -> InitResult:
    """Copy ``ex.public_files`` and the marker into ``dest``.

    Without ``force``, any differing file already there stops it before anything is written.
    """
    dest = Path(dest)
    if dest.exists() and not dest.is_dir():
        raise UsageError(f"{dest} exists and is not a folder.", hint="Choose another folder for the workspace.")
    plan = {dest / name: data for name, data in public_contents(ex).items()}
    plan[dest / MARKER] = marker_text(ex, candidate=_candidate_of(dest / MARKER, ex.name)).encode()
    conflicts = [t for t, data in plan.items() if (t.exists() or t.is_symlink()) and not _same(t, data)
                 and not (t.name == MARKER and _marks(t, ex.name))]
    if conflicts and not force:  # every target checked before anything is written
        listed = "\n".join(f"  {t}" for t in conflicts)
        raise UsageError(f"Not overwriting {len(conflicts)} file(s) already in {dest}:\n{listed}",
                         hint="Nothing was written. Pass --force to replace them (each old file is kept as NAME.bak).")
    dest.mkdir(parents=True, exist_ok=True)
    result = InitResult(dest=dest)
    for target, data in plan.items():
        if target not in conflicts and _same(target, data):
            result.unchanged.append(target)
            continue
        if target in conflicts:
            result.backups[target] = _free_backup_name(target)
            target.rename(result.backups[target])
        target.write_bytes(data)  # the user's umask, not the exercise's modes: the stub must be editable
        result.written.append(target)
    return result


def _candidate_of(marker: Path, name: str) -> str | None:
    """The candidate an existing marker for ``name`` records (a pack's), kept when the marker is rewritten."""
    return _read_marker(marker).candidate if _marks(marker, name) else None


def _marks(marker: Path, name: str) -> bool:
    """Whether ``marker`` is a workspace marker for exercise ``name``: ours to rewrite (a newer fingerprint)."""
    try:
        return marker.is_file() and not marker.is_symlink() and _read_marker(marker).exercise == name
    except UsageError:
        return False


def _same(target: Path, data: bytes) -> bool:
    return target.is_file() and not target.is_symlink() and target.read_bytes() == data


def _free_backup_name(target: Path) -> Path:
    candidate = target.with_name(target.name + ".bak")
    n = 0
    while candidate.exists() or candidate.is_symlink():
        n += 1
        candidate = target.with_name(f"{target.name}.bak.{n}")
    return candidate


def find_workspace(start: Path) -> Workspace | None:
    """The workspace holding ``start`` (a folder or a file): the nearest marker in it or a parent."""
    start = Path(start).resolve()
    folder = start if start.is_dir() else start.parent
    for d in [folder, *folder.parents]:
        marker = d / MARKER
        if marker.is_file():
            return _read_marker(marker)
    return None


def _read_marker(marker: Path) -> Workspace:
    fix = f"Fix or delete {marker}, or run `grader init` again."
    try:
        data = tomllib.loads(marker.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise UsageError(f"{marker} is not valid TOML: {e}", hint=fix) from None
    section = data.get("workspace")
    section = section if isinstance(section, dict) else {}
    fields = {key: section.get(key) for key in ("exercise", "submission", "fingerprint", "candidate", "path")}
    if not isinstance(fields["exercise"], str) or not isinstance(fields["submission"], str) or not all(
            isinstance(fields[k], (str, type(None))) for k in ("fingerprint", "candidate", "path")):
        raise UsageError(f"{marker} needs [workspace] with exercise = \"NAME\" and submission = \"FILE.py\" "
                         "(and optionally fingerprint and candidate, as text).", hint=fix)
    submission = fields["submission"]
    if Path(submission).name != submission or submission in ("", ".", ".."):
        raise UsageError(f"{marker}: submission must be a file name in the workspace, got {submission!r}.", hint=fix)
    return Workspace(root=marker.parent, exercise=fields["exercise"], submission=marker.parent / submission,
                     fingerprint=fields["fingerprint"], candidate=fields["candidate"], ignored_path=fields["path"])
