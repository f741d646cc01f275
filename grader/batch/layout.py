"""Read a SUBMISSIONS folder laid out as ``<candidate>/<exercise>/<file>.py``.

Discovery never stops at a bad entry: every candidate gets a row for every
exercise in the batch, and a row that cannot be graded says why (missing, empty,
unreadable, not Python, unknown exercise, several files). Problems that belong to
no row (a stray file at the top, a folder name the batch cannot use) are listed
separately. Nothing here runs candidate code: a file is read, hashed and parsed,
never imported.

The folder is not trusted: no symbolic link is followed (a candidate or exercise
folder that is a link gets unreadable rows; a file is read by
:func:`grader.userfile.read_user_file`, which refuses links, FIFOs, devices and
oversize files before reading them), and names go through
:func:`grader.batch.names.name_problem`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from pathlib import Path

from grader.batch.model import RowStatus
from grader.batch.names import lookalike_problem, lookalikes, name_problem
from grader.batch.provenance import Provenance, provenance
from grader.host.grading import MAX_SUBMISSION_BYTES
from grader.untrusted import shown
from grader.userfile import Unreadable, read_user_file

LINKED = "is a symbolic link; only real folders are read, never what a link points to"


@dataclass(frozen=True)
class Found:
    """One (candidate, exercise): a file to grade, or the reason there is none."""

    candidate: str
    exercise: str
    path: Path | None = None
    source: bytes | None = None
    sha256: str | None = None
    problem: RowStatus | None = None  # None: a plain submission; EMPTY/INVALID with a source: graded anyway
    reason: str = ""
    provenance: Provenance | None = None  # the hand-in record beside the file, checked (None: there is none)


@dataclass
class Layout:
    found: list[Found] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # not tied to one row
    exercises: list[str] = field(default_factory=list)  # the batch's exercises, in column order
    #: Files that are not submissions and are not read (a README or notes beside the exercise folders): named
    #: on the page, apart from the problems, since nothing is wrong with them.
    ignored: list[str] = field(default_factory=list)

    @property
    def gradable(self) -> list[Found]:
        """Rows with a file to grade. Empty and unparsable files are graded too: their
        scorecard shows every check failing at import, as ``grader submit`` would."""
        return [f for f in self.found if f.source is not None]


def discover(root: Path, *, known: dict[str, str], only: list[str] | None = None) -> Layout:
    """Walk ``root``. ``known`` maps exercise name -> its submission file name (e.g. attention.py).

    ``only`` restricts the batch to those exercises (other folders are ignored);
    without it, the batch covers every known exercise any candidate submitted.
    """
    layout = Layout()
    candidates: dict[str, dict[str, Path]] = {}
    unreadable: dict[str, str] = {}  # candidate -> why none of its folders is read
    entries = _listing(root)
    layout.problems += [lookalike_problem(group, "candidate folders")
                        for group in lookalikes(e.name for e in entries if e.is_dir() or e.is_symlink())]
    for entry in entries:
        if (why := name_problem(entry.name)) is not None:
            layout.problems.append(f"{shown(entry.name, newlines=False)}: the name {why}; rename it to grade it")
        elif entry.is_symlink():
            candidates[entry.name], unreadable[entry.name] = {}, f"{entry.name}/ {LINKED}"
        elif not entry.is_dir():
            _stray(layout, entry.name, "", known)
        else:
            candidates[entry.name] = {}
            try:
                subs = _listing(entry)
            except OSError as e:
                subs, unreadable[entry.name] = [], f"{entry.name}/ cannot be listed ({e.strerror or e})"
            for sub in subs:
                if (why := name_problem(sub.name)) is not None:
                    layout.problems.append(f"{entry.name}/{shown(sub.name, newlines=False)}: the name {why}; "
                                           "rename it to grade it")
                elif sub.is_dir() or sub.is_symlink():  # a linked exercise folder gets its row, unreadable
                    candidates[entry.name][sub.name] = sub
                else:
                    _stray(layout, sub.name, f"{entry.name}/", known)
    seen = {name for folders in candidates.values() for name in folders}
    layout.exercises = list(only) if only else sorted(seen & known.keys())
    for candidate, folders in sorted(candidates.items()):
        for exercise in layout.exercises:
            if candidate in unreadable:
                layout.found.append(Found(candidate, exercise, problem=RowStatus.UNREADABLE,
                                          reason=unreadable[candidate]))
            elif exercise not in folders:
                layout.found.append(Found(candidate, exercise, problem=RowStatus.MISSING,
                                          reason=f"no folder {candidate}/{exercise}/"))
            else:
                found = _read(root, candidate, exercise, folders[exercise], known[exercise])
                layout.found.append(found)
                if found.provenance is not None and found.provenance.disagreement:
                    layout.problems.append(f"{candidate}/{exercise}/{found.path.name}: graded, but "
                                           f"{found.provenance.disagreement}: the file is not what was handed in")
        if not only:
            for name in sorted(set(folders) - known.keys()):
                layout.found.append(Found(candidate, name, problem=RowStatus.UNKNOWN_EXERCISE,
                                          reason=f"{candidate}/{name}/ names no known exercise "
                                                 f"(known: {', '.join(sorted(known))})"))
    return layout


def _stray(layout: Layout, name: str, where: str, known: dict[str, str]) -> None:
    """A file where only folders belong (the top level, a candidate's folder). A Python file there is a
    submission in the wrong place: a layout problem saying where it goes. Anything else (a README, the
    candidate's notes) is not a submission at all: ignored, and named so the panel knows it was seen."""
    if name.endswith(".py"):
        exercise = next((ex for ex, file in sorted(known.items()) if file == name), "<exercise>")
        candidate = where or "<candidate>/"
        layout.problems.append(f"{where}{name}: a Python file outside any exercise folder is not graded; "
                               f"to grade it, move it to {candidate}{exercise}/{name}")
    else:
        layout.ignored.append(f"{where}{name}: not a submission (only <candidate>/<exercise>/<file>.py is read)")


def _listing(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if not p.name.startswith((".", "__")))


def _read(root: Path, candidate: str, exercise: str, folder: Path, expected: str) -> Found:
    where = f"{candidate}/{exercise}/"
    if folder.is_symlink():
        return Found(candidate, exercise, problem=RowStatus.UNREADABLE, reason=f"{where} {LINKED}")
    try:
        files = [p for p in _listing(folder) if p.suffix == ".py"]
    except OSError as e:
        return Found(candidate, exercise, problem=RowStatus.UNREADABLE, reason=f"{where} cannot be listed "
                                                                                f"({e.strerror or e})")
    chosen = [p for p in files if p.name == expected] or files
    if not chosen:
        return Found(candidate, exercise, problem=RowStatus.MISSING, reason=f"no .py file in {where}")
    if len(chosen) > 1:
        names = ", ".join(shown(p.name, newlines=False) for p in chosen)
        return Found(candidate, exercise, problem=RowStatus.AMBIGUOUS,
                     reason=f"{len(chosen)} .py files in {where} and none is named {expected}: {names}")
    path = chosen[0]
    if (why := name_problem(path.name)) is not None:
        return Found(candidate, exercise, problem=RowStatus.UNREADABLE,
                     reason=f"{where}{shown(path.name, newlines=False)}: the file name {why}; rename it to grade it")
    try:
        source = read_user_file(path, limit=MAX_SUBMISSION_BYTES, under=root)
    except Unreadable as e:
        return Found(candidate, exercise, path, problem=RowStatus.UNREADABLE, reason=f"{where}{path.name} {e.reason}")
    digest = hashlib.sha256(source).hexdigest()
    came = provenance(folder, root=root, candidate=candidate, exercise=exercise, file=path.name, sha256=digest)
    return found_file(candidate, exercise, path, source, came)


def found_file(candidate: str, exercise: str, path: Path, source: bytes,
               came: Provenance | None = None) -> Found:
    """A submission read as ``source``: a plain one, or one graded anyway that cannot count (empty, not Python).
    Parsed only: nothing runs. ``grader serve`` makes its hand-ins' rows with it too (they have no hand-in
    record beside them: ``came`` is None)."""
    where = f"{candidate}/{exercise}/"
    digest = hashlib.sha256(source).hexdigest()
    if came is not None:
        return replace(_parsed(candidate, exercise, path, source, digest, where), provenance=came)
    return _parsed(candidate, exercise, path, source, digest, where)


def _parsed(candidate: str, exercise: str, path: Path, source: bytes, digest: str, where: str) -> Found:
    """The file as the batch grades it: empty, not Python, or a plain submission."""
    if not source.strip():
        return Found(candidate, exercise, path, source, digest, RowStatus.EMPTY, f"{where}{path.name} is empty")
    try:
        compile(source, path.name, "exec", dont_inherit=True)  # parse only: nothing runs
    except SyntaxError as e:
        return Found(candidate, exercise, path, source, digest, RowStatus.INVALID,
                     f"{where}{path.name} is not valid Python: {e.msg} (line {e.lineno})")
    except ValueError as e:
        return Found(candidate, exercise, path, source, digest, RowStatus.INVALID,
                     f"{where}{path.name} cannot be read as Python source: {e}")
    return Found(candidate, exercise, path, source, digest)
