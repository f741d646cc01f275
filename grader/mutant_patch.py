"""A mutant written as a patch: the few lines that make the reference wrong, and what the mistake is.

``solutions/<name>/mutants/<mutant>.diff`` is a description (every line before the first ``--- `` or
``diff --git``), then a unified diff of the reference as ``diff -u`` or ``git diff`` writes it. It is
applied strictly, as ``git apply`` does: context and removed lines byte for byte, no fuzz, a hunk at
the nearest exact match to its header's line. Anything else is a :class:`MutantPatchError` naming the
patch, the hunk and the line, never a mutant graded on a half-applied file. Parsing is unidiff's;
applying is ours. Why patches, and the format: docs/decisions/mutant-patches.md.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

from grader.errors import ExerciseError

#: A mutant whose file name ends so is a patch against the reference; any other is a whole file (``.py``).
PATCH_SUFFIX = ".diff"

#: A line that starts the diff: everything above it is the description.
_DIFF_START = re.compile(r"^(--- |diff --git )")


class MutantPatchError(ExerciseError):
    """A mutant's patch that is not one file's unified diff, or does not apply to the reference as written."""

    hint = ("Make the patch again against the current reference: copy the reference, make the mistake, "
            "then `diff -u REFERENCE COPY` below the description.")


@dataclass(frozen=True)
class Hunk:
    """One hunk: where it says it applies (1-based, in the reference) and the lines before and after."""

    header: str
    start: int  # the reference line its header names (for an insertion with no context: the line it follows)
    old: tuple[str, ...]  # context and removed lines, as the reference must have them
    new: tuple[str, ...]  # context and added lines, what takes their place
    diff_line: int  # where the header sits in the patch file, for messages


@dataclass(frozen=True)
class MutantPatch:
    """A parsed mutant patch: its description, the file it applies to, and its hunks in order."""

    path: Path
    description: str
    names: tuple[str, ...]  # the file names (basenames) on the diff's '---' and '+++' lines
    hunks: tuple[Hunk, ...]

    def apply_to(self, reference: Path) -> str:
        """The reference's text with every hunk applied; :class:`MutantPatchError` when one does not fit."""
        if reference.name not in self.names:
            raise MutantPatchError(f"{_where(self.path)}: the diff is against {' / '.join(dict.fromkeys(self.names))!r}, "
                                   f"not the reference {reference.name!r}.")
        return apply_hunks(self, reference.read_text(encoding="utf-8"), reference.name)


def read_patch(path: Path) -> MutantPatch:
    """Parse ``path`` (a ``.diff`` mutant); :class:`MutantPatchError` naming the line when it is malformed."""
    return parse_patch(path.read_text(encoding="utf-8"), path)


def parse_patch(text: str, path: Path) -> MutantPatch:
    lines = text.splitlines(keepends=True)
    first = next((i for i, line in enumerate(lines) if _DIFF_START.match(line)), None)
    if first is None:
        raise MutantPatchError(f"{_where(path)}: no diff in it (no line starts with '--- ').")
    description = "".join(lines[:first]).strip()
    if not description:
        raise MutantPatchError(f"{_where(path)}: no description: say the mistake in words above the '---' line.")
    try:
        files = PatchSet("".join(lines[first:]))
    except UnidiffParseError as e:
        raise MutantPatchError(f"{_where(path)}: not a unified diff: {e}.") from None
    if len(files) != 1 or files[0].is_binary_file or not len(files[0]):
        raise MutantPatchError(f"{_where(path)}: the diff must change one text file, the reference, "
                               f"with at least one hunk (found {len(files)} file(s)).")
    hunks = tuple(_hunk(h, first) for h in files[0])
    last = max(line.diff_line_no for line in files[0][-1] if line.diff_line_no)
    trailing = [n for n, line in enumerate(lines[first + last:], first + last + 1)
                if line.strip() and not line.startswith("\\ ")]  # a "No newline" marker has no number in unidiff
    if trailing:
        raise MutantPatchError(f"{_where(path)}: line {trailing[0]}: text after the last hunk "
                               "(the description goes above the '---' line).")
    names = tuple(Path(name).name for name in (files[0].source_file, files[0].target_file))
    return MutantPatch(path, description, names, hunks)


def _hunk(hunk, offset: int) -> Hunk:
    """unidiff's hunk as two tuples of lines; a "No newline at end of file" marker takes its line's newline."""
    old: list[str] = []
    new: list[str] = []
    last_sides: tuple[list[str], ...] = ()
    for line in hunk:
        kind = line.line_type
        if kind == "\\":
            for side in last_sides:
                side[-1] = side[-1].removesuffix("\n")
            continue
        if kind == "":  # a blank line after the hunk (unidiff keeps it), not part of it
            continue
        last_sides = {" ": (old, new), "-": (old,), "+": (new,)}[kind]
        for side in last_sides:
            side.append(line.value)
    header = f"@@ -{hunk.source_start},{hunk.source_length} +{hunk.target_start},{hunk.target_length} @@"
    first_line = min((line.diff_line_no for line in hunk if line.diff_line_no), default=1)
    return Hunk(header, hunk.source_start, tuple(old), tuple(new), offset + first_line - 1)


def apply_hunks(patch: MutantPatch, text: str, name: str) -> str:
    """``text`` with ``patch``'s hunks applied in order, each at the exact match nearest its stated line."""
    lines = _lines(text)
    out: list[str] = []
    done = 0  # reference lines consumed: a hunk never reaches back before the previous one's end
    for number, hunk in enumerate(patch.hunks, 1):
        want = hunk.start if not hunk.old else hunk.start - 1  # "-5,0" inserts after line 5
        at = _nearest(lines, hunk.old, want, done)
        if at is None:
            raise MutantPatchError(f"{_where(patch.path)}: hunk {number} ({hunk.header}, line {hunk.diff_line} of "
                                   f"the patch) does not apply to {name}: {_mismatch(lines, hunk, want)}.")
        out += lines[done:at] + list(hunk.new)
        done = at + len(hunk.old)
    return "".join(out + lines[done:])


def make_patch(reference: str, mutant: str, *, name: str, description: str) -> str:
    """The patch that turns ``reference`` into ``mutant`` (3 lines of context), under ``description``."""
    lines = [line.rstrip() for line in description.strip().splitlines()]
    if not lines or any(_DIFF_START.match(line + " ") for line in lines):
        raise ValueError("a description is needed, and none of its lines may start with '--- ' or 'diff --git'")
    diff = []
    for line in difflib.unified_diff(_lines(reference), _lines(mutant), name, name, n=3):
        diff.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    if not diff:
        raise ValueError("the mutant is the reference: there is no mistake to write down")
    return "\n".join(lines) + "\n\n" + "".join(diff)


def _lines(text: str) -> list[str]:
    """Lines with their ``\\n`` (only ``\\n`` ends a line, as in a diff; ``str.splitlines`` would split on more)."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _nearest(lines: list[str], old: tuple[str, ...], want: int, lo: int) -> int | None:
    """The start at or after ``lo`` nearest ``want`` where ``lines`` hold ``old`` exactly, or None."""
    fits = [i for i in range(lo, len(lines) - len(old) + 1) if tuple(lines[i:i + len(old)]) == old]
    return min(fits, key=lambda i: (abs(i - want), i), default=None)


def _mismatch(lines: list[str], hunk: Hunk, at: int) -> str:
    """Why the hunk does not fit where its header says: the first line that differs."""
    for i, expected in enumerate(hunk.old):
        if at + i >= len(lines):
            return f"the reference ends at line {len(lines)}; the hunk expects {expected.rstrip(chr(10))!r} at line {at + i + 1}"
        if lines[at + i] != expected:
            return (f"line {at + i + 1} is {lines[at + i].rstrip(chr(10))!r}, the patch expects "
                    f"{expected.rstrip(chr(10))!r} (and those lines are nowhere else in order)")
    return "it overlaps the hunk before it"


def _where(path: Path) -> str:
    """The patch as an author finds it: ``<exercise>/mutants/<name>.diff``."""
    return "/".join(path.parts[-3:])
