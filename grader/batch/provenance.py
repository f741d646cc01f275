"""Where a graded file came from: the hand-in record beside it, checked against the file.

``grader collect`` leaves ``HANDIN.toml`` (the candidate's hand-in record: candidate, exercise, file,
sha256) beside the file it grades, and keeps every hand-in under ``handins/``. The batch reads that
record again, never believing it: the graded file's own sha256 is compared with the record's, and its
folder with the names the record gives. A file without a record was not collected from a hand-in
(said, not a problem); one whose record disagrees is a layout problem naming both values, and its row
says so on the panel page and in ``summary.csv``.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from grader.batch.collect import HANDINS, MAX_SUMMARY_BYTES, SUMMARY
from grader.untrusted import shown
from grader.userfile import Unreadable, read_user_file


@dataclass(frozen=True)
class Provenance:
    handin_sha256: str | None  # what the record says the file's sha256 is (None: no readable record)
    checked: bool  # the record names this candidate, exercise and file, and its sha256 is the file's
    handins: int  # hand-ins collected for this (candidate, exercise), the graded one included
    disagreement: str = ""  # why not checked, in words (empty when checked or when there is no record)

    @property
    def state(self) -> str:
        """``checked``, ``differs`` or ``none``: what summary.csv's ``handin`` column says."""
        return "checked" if self.checked else "none" if self.handin_sha256 is None and not self.disagreement \
            else "differs"


def provenance(folder: Path, *, root: Path, candidate: str, exercise: str, file: str, sha256: str) -> Provenance | None:
    """The graded file's provenance, from ``folder``'s hand-in record; None when the folder holds no record."""
    record = folder / SUMMARY
    if not record.exists() and not record.is_symlink():
        return None
    handins = folder / HANDINS
    count = sum(1 for p in handins.iterdir() if p.is_dir() and not p.is_symlink()) \
        if handins.is_dir() and not handins.is_symlink() else 0
    try:
        fields = tomllib.loads(read_user_file(record, limit=MAX_SUMMARY_BYTES, under=root).decode("utf-8"))
        fields = fields.get("hand_in", {})
    except (Unreadable, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return Provenance(None, False, count, f"its {SUMMARY} cannot be read")
    claimed = fields.get("sha256") if isinstance(fields.get("sha256"), str) else None
    said = {key: fields.get(key) for key in ("candidate", "exercise", "file")}
    wanted = {"candidate": candidate, "exercise": exercise, "file": file}
    wrong = [f"{key} {_quoted(said[key])} (the folder holds {wanted[key]!r})" for key in wanted
             if said[key] != wanted[key]]
    if claimed != sha256:
        wrong.append(f"sha256 {_quoted(claimed)} (the graded file's is {sha256})")
    return Provenance(claimed, not wrong, count, f"its {SUMMARY} says " + "; ".join(wrong) if wrong else "")


def _quoted(value) -> str:
    """A value from the record, as the panel may read it: escaped, capped, quoted."""
    return repr(shown(str(value), newlines=False)[:80]) if value is not None else "none"
