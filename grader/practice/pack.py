"""``grader pack``: the zip a hiring panel hands a candidate.

It holds ``<name>/`` with the exercise's public files (the prompt, the stub, the
example tests: ``Exercise.public_files``, an allowlist) and the workspace marker,
so ``grader submit`` inside the unzipped folder knows the exercise. Never checks,
probes, solutions or mutants. The bytes are deterministic (fixed timestamps,
permissions and order), so a panel can publish the sha256 and a candidate, or a
second panel member, can verify they hold the same pack.
"""

from __future__ import annotations

import contextlib
import io
import os
import zipfile
from pathlib import Path

from grader.errors import UsageError
from grader.exercise import Exercise
from grader.practice.workspace import MARKER, marker_text, public_contents

#: The earliest time a zip can record: no build time leaks into the bytes.
FIXED_TIME = (1980, 1, 1, 0, 0, 0)
FILE_MODE = 0o100644
DIR_MODE = 0o040755
MSDOS_DIRECTORY = 0x10


def pack_exercise(ex: Exercise, out: Path, *, force: bool = False, candidate: str | None = None) -> list[str]:
    """Write the pack for ``ex`` to ``out`` (atomically); returns the names it holds, in order. ``candidate``
    (who it is for) goes into the marker, so that ``grader hand-in`` files the answer under that name."""
    out = Path(out)
    _check_destination(ex, out, force=force)
    files = {f"{ex.name}/{name}": data for name, data in public_contents(ex).items()}
    files[f"{ex.name}/{MARKER}"] = marker_text(ex, candidate=candidate).encode()
    data, names = reproducible_zip([f"{ex.name}/"], files)
    write_atomically(out, data)
    return names


def reproducible_zip(folders: list[str], files: dict[str, bytes]) -> tuple[bytes, list[str]]:
    """A zip of ``folders`` (names ending in "/") then ``files`` (sorted), whose bytes depend on nothing but
    these: fixed timestamps, modes and order. Returns the bytes and the names in order."""
    names = [*folders, *sorted(files)]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name in folders:
            zf.writestr(_entry(name, DIR_MODE, directory=True), b"")
        for name in sorted(files):
            zf.writestr(_entry(name, FILE_MODE), files[name])
    return buffer.getvalue(), names


def _entry(name: str, mode: int, *, directory: bool = False) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=FIXED_TIME)
    info.create_system = 3  # Unix, whatever platform packs it: the permissions below are read as Unix modes
    info.external_attr = (mode << 16) | (MSDOS_DIRECTORY if directory else 0)
    info.compress_type = zipfile.ZIP_STORED if directory else zipfile.ZIP_DEFLATED
    return info


def _check_destination(ex: Exercise, out: Path, *, force: bool) -> None:
    where = out.resolve()
    if where == ex.root or ex.root in where.parents:
        raise UsageError(f"Refusing to write the pack inside the exercise folder: {out}.",
                         hint="Write it outside: that folder is the exercise's source, not a place for outputs.")
    if out.is_dir():
        raise UsageError(f"{out} is a folder; give the zip file's path, e.g. -o {ex.name}.zip.")
    if out.exists() and not force:
        raise UsageError(f"{out} already exists.", hint="Pass --force to replace it.")


def write_atomically(path: Path, data: bytes) -> None:
    # grader.atomic writes text; a zip is bytes. Same idea: a hidden temporary beside it, then rename.
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
