"""``grader collect ZIP... --into DIR``: hand-in zips into a submissions folder, each into its own candidate's only.

A hand-in zip (``grader hand-in``) holds ``<candidate>/<exercise>/<file>.py`` and ``HANDIN.toml``, which
names the candidate, the exercise, the file and its sha256. The zip is the sender's: an entry may claim
another candidate's folder, a path may climb out, a name may only look like someone else's. So:

- the zip's own candidate is the one its ``HANDIN.toml`` names, and the zip's file name must start with
  ``<candidate>-<exercise>`` (as ``grader hand-in`` names it); otherwise nothing of it is collected;
- only ``<candidate>/<exercise>/<file>.py`` and ``HANDIN.toml`` are taken: every other entry (another
  candidate's folder, a path out, a link, a second file) is refused and reported, never written;
- the file's sha256 is checked against ``HANDIN.toml``'s, and the result recorded either way;
- nothing is overwritten silently: each hand-in is kept under ``<candidate>/<exercise>/handins/<n>-<zip
  sha256>/`` with a ``collected.toml`` saying where it came from, and the newest (the last collected) is
  copied beside, where ``grader batch`` grades it; the same zip twice is collected once;
- a candidate name that reads like another folder's (normalisation, case, confusables) is refused, naming both.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import io
import json
import os
import re
import stat
import tomllib
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from grader.batch.names import lookalike_problem, lookalikes, name_problem
from grader.exercise import EXERCISE_NAME
from grader.untrusted import shown

SUMMARY = "HANDIN.toml"  # grader.practice.handin.SUMMARY: what grader hand-in writes beside the answer
HANDINS = "handins"
RECORD = "collected.toml"
#: The largest answer (grader.host.grading.MAX_SUBMISSION_BYTES) and HANDIN.toml a zip may carry.
MAX_FILE_BYTES, MAX_SUMMARY_BYTES = 1024 * 1024, 64 * 1024
#: A hand-in holds two small files; a zip with more entries than this is not read at all.
MAX_ENTRIES = 64


@dataclass
class Collected:
    """What happened to one zip: collected (where, and whether its sha256 checked) or refused (why)."""

    zip: Path
    candidate: str | None = None
    exercise: str | None = None
    folder: Path | None = None
    sha256_checked: bool | None = None
    already: bool = False  # the same zip was collected before: nothing written
    earlier: int = 0  # hand-ins of this candidate for this exercise collected before this one
    refused: str | None = None  # why nothing of the zip was collected
    refused_entries: list[str] = field(default_factory=list)  # entries left out, each with why


class Refused(Exception):
    pass


def collect(zips: list[Path], into: Path) -> list[Collected]:
    """Collect each of ``zips`` into ``into`` (created if absent), in the order given; one result per zip."""
    into.mkdir(parents=True, exist_ok=True)
    return [_collect_one(Path(z), into) for z in zips]


def _collect_one(path: Path, into: Path) -> Collected:
    out = Collected(path)
    try:
        data = _read_zip_file(path)
        zip_sha = hashlib.sha256(data).hexdigest()
        with zipfile.ZipFile(io.BytesIO(data)) as archive:  # read once: what is checked is what is stored
            infos = archive.infolist()
            if len(infos) > MAX_ENTRIES:
                raise Refused(f"it holds {len(infos)} entries; a hand-in holds two files")
            summary, where = _summary(archive, infos)
            out.candidate, out.exercise = summary["candidate"], summary["exercise"]
            _check_zip_name(path, out.candidate, out.exercise)
            _check_lookalikes(into, out.candidate)
            answer, out.refused_entries = _answer(archive, infos, where, summary["file"])
            summary_bytes = archive.read(where + SUMMARY)
    except Refused as e:
        out.refused = str(e)
        return out
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError) as e:
        out.refused = f"it cannot be read as a zip ({type(e).__name__})"
        return out
    out.sha256_checked = hashlib.sha256(answer).hexdigest() == summary["sha256"]
    out.folder = into / out.candidate / out.exercise
    _store(out, zip_sha, summary["file"], answer, summary_bytes)
    return out


def _read_zip_file(path: Path) -> bytes:
    if path.is_symlink() or not path.is_file():
        raise Refused("it is not a regular file")
    if path.stat().st_size > MAX_FILE_BYTES * 4:
        raise Refused(f"it is {path.stat().st_size} bytes; a hand-in is a few kilobytes")
    return path.read_bytes()


def _parts(name: str) -> list[str] | None:
    """An entry's path as folder names, or None when it is not a plain relative path of usable names."""
    if name.startswith("/") or "\\" in name:
        return None
    parts = name.rstrip("/").split("/")
    return parts if all(name_problem(p) is None for p in parts) else None


def _summary(archive: zipfile.ZipFile, infos: list[zipfile.ZipInfo]) -> tuple[dict, str]:
    """HANDIN.toml's fields, checked, and the folder it stands in (``<candidate>/<exercise>/``)."""
    found = [i for i in infos if i.filename.endswith("/" + SUMMARY) or i.filename == SUMMARY]
    if len(found) != 1:
        raise Refused(f"it holds {len(found)} {SUMMARY} files; a hand-in made by `grader hand-in` holds one")
    info = found[0]
    parts = _parts(info.filename)
    if parts is None or len(parts) != 3 or info.file_size > MAX_SUMMARY_BYTES:
        raw = info.filename.split("/")
        why = next((name_problem(p) for p in raw[:2] if name_problem(p) is not None), None) if len(raw) == 3 else None
        where = f": the folder name {shown(raw[0] if name_problem(raw[0]) else raw[1], newlines=False)!r} {why}" \
            if why else ""
        raise Refused(f"its {SUMMARY} is not at <candidate>/<exercise>/{SUMMARY} of usable names{where}")
    try:
        fields = tomllib.loads(archive.read(info).decode("utf-8")).get("hand_in", {})
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        raise Refused(f"its {SUMMARY} is not valid TOML") from None
    for key in ("candidate", "exercise", "file", "sha256"):
        if not isinstance(fields.get(key), str):
            raise Refused(f"its {SUMMARY} has no [hand_in] {key}")
    if (why := name_problem(fields["candidate"])) is not None:
        raise Refused(f"the candidate name in its {SUMMARY}, {shown(fields['candidate'], newlines=False)!r}, {why}")
    if not re.fullmatch(EXERCISE_NAME, fields["exercise"]) or name_problem(fields["file"]) is not None \
            or not fields["file"].endswith(".py") or not re.fullmatch(r"[0-9a-f]{64}", fields["sha256"]):
        raise Refused(f"its {SUMMARY} does not name an exercise, a .py file and a sha256")
    if parts[:2] != [fields["candidate"], fields["exercise"]]:
        raise Refused(f"its {SUMMARY} names {fields['candidate']}/{fields['exercise']} but stands in "
                      f"{'/'.join(parts[:2])}/")
    return fields, f"{parts[0]}/{parts[1]}/"


def _check_zip_name(path: Path, candidate: str, exercise: str) -> None:
    if not path.name.startswith(f"{candidate}-{exercise}"):
        raise Refused(f"its {SUMMARY} names candidate {candidate!r} and exercise {exercise!r}, but the zip is "
                      f"called {shown(path.name, newlines=False)!r}, not {candidate}-{exercise}.zip as "
                      "`grader hand-in` names it: if it is that candidate's, rename it and collect it again")


def _check_lookalikes(into: Path, candidate: str) -> None:
    existing = [p.name for p in into.iterdir() if not p.name.startswith(".")]
    for group in lookalikes([*existing, candidate]):
        if candidate in group:
            others = [n for n in group if n != candidate]
            raise Refused("its candidate name and the folder " + ", ".join(repr(o) for o in others) + " in "
                          f"{into} read alike: " + lookalike_problem(group, "candidate names"))


def _answer(archive: zipfile.ZipFile, infos: list[zipfile.ZipInfo], where: str, file: str) -> tuple[bytes, list[str]]:
    """The answer file's bytes, and every entry left out with why."""
    left_out, answer = [], None
    for info in infos:
        name, parts = info.filename, _parts(info.filename)
        shown_name = shown(name, newlines=False)
        if stat.S_ISLNK(info.external_attr >> 16):
            left_out.append(f"{shown_name}: a link; only plain files are collected")
        elif parts is None:
            left_out.append(f"{shown_name}: not a plain relative path of usable names")
        elif info.is_dir():
            if not where.startswith(name.rstrip("/") + "/"):
                left_out.append(f"{shown_name}: outside this hand-in's folder {where}")
        elif name == where + file:
            if info.file_size > MAX_FILE_BYTES:
                raise Refused(f"{file} is {info.file_size} bytes; an answer is at most {MAX_FILE_BYTES}")
            answer = archive.read(info)
        elif name != where + SUMMARY:
            why = "outside this hand-in's folder" if not name.startswith(where) else "not the answer file"
            left_out.append(f"{shown_name}: {why} {where}{file}")
    if answer is None:
        raise Refused(f"it holds no {where}{file}, the file its {SUMMARY} names")
    return answer, left_out


def _store(out: Collected, zip_sha: str, file: str, answer: bytes, summary: bytes) -> None:
    folder = out.folder
    for level in (folder.parent, folder, folder / HANDINS):
        if level.is_symlink():
            out.refused, out.folder = f"{level} is a symbolic link: nothing is written through one", None
            return
    handins = folder / HANDINS
    handins.mkdir(parents=True, exist_ok=True)
    kept = sorted(p.name for p in handins.iterdir() if p.is_dir() and not p.is_symlink())
    if any(name.endswith("-" + zip_sha[:16]) for name in kept):
        out.already = True
        return
    out.earlier = len(kept)
    here = handins / f"{len(kept) + 1:03d}-{zip_sha[:16]}"
    here.mkdir()
    record = "\n".join([
        "# Written by `grader collect`: where this hand-in came from.",
        f"zip = {_toml(out.zip.name)}",
        f"zip_sha256 = {_toml(zip_sha)}",
        f"collected_at = {_toml(_dt.datetime.now(_dt.timezone.utc).isoformat(timespec='seconds'))}",
        f"file_sha256 = {_toml(hashlib.sha256(answer).hexdigest())}",
        f"sha256_checked = {'true' if out.sha256_checked else 'false'}",
        f"entries_left_out = {len(out.refused_entries)}",
    ]) + "\n"
    for name, data in ((file, answer), (SUMMARY, summary), (RECORD, record.encode())):
        _write_new(here / name, data)
    for name, data in ((file, answer), (SUMMARY, summary)):  # the newest, where grader batch reads it
        _replace(folder / name, data)


def _write_new(path: Path, data: bytes) -> None:
    with open(path, "xb") as f:  # "x": never through a link, never over a file
        f.write(data)


def _replace(path: Path, data: bytes) -> None:
    if path.is_symlink():
        path.unlink()
    tmp = path.with_name(path.name + ".collecting")
    if tmp.exists() or tmp.is_symlink():
        tmp.unlink()
    _write_new(tmp, data)
    os.replace(tmp, path)


def _toml(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string
