"""Read a file someone else handed us: only a regular file, never through a link, never past a size cap.

A submissions folder comes from outside, so a "file" may be a link to the reference solution, a FIFO
that blocks forever or ``/dev/zero``. :func:`read_user_file` is the one way the host reads one: no
symbolic link is followed (``O_NOFOLLOW``, and with ``under`` each folder opened relative to the one
before); kind and size come from ``fstat`` on the descriptor then read (nothing swapped between check
and read; opened ``O_NONBLOCK``; no open of what ``lstat`` shows is no regular file); at most
``limit + 1`` bytes are read. Every refusal is an :class:`Unreadable` whose ``reason`` completes a
sentence about the file ("is a symbolic link; ...").
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

# Flags a platform lacks (Windows has no O_NOFOLLOW) are 0 there: the lstat check still stands.
_NOFOLLOW = os.O_RDONLY | sum(getattr(os, f, 0) for f in ("O_NOFOLLOW", "O_CLOEXEC", "O_NOCTTY", "O_BINARY"))
_NONBLOCK, _DIRECTORY = getattr(os, "O_NONBLOCK", 0), getattr(os, "O_DIRECTORY", 0)
_KINDS = [(stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")]


class Unreadable(Exception):
    """The file is not read; ``reason`` says why, as the rest of a sentence about the file."""

    def __init__(self, reason: str, *, size: int | None = None):
        super().__init__(reason)
        self.reason = reason
        self.size = size  # set when the file is over the limit


def kind_of(mode: int) -> str | None:
    """What a non-regular file is, in words (``None`` for a regular file)."""
    for test, words in _KINDS:
        if test(mode):
            return words
    return None if stat.S_ISREG(mode) else "not a regular file"


def not_regular(mode: int) -> str:
    """The reason for refusing a file of this mode."""
    kind = kind_of(mode)
    if kind == "a symbolic link":
        return "is a symbolic link; only regular files are read, never what a link points to"
    return f"is {kind}, not a regular file"


def read_user_file(path: Path, *, limit: int, under: Path | None = None) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them, or :class:`Unreadable`.

    ``under`` (a folder ``path`` lies in) is trusted as the caller named it; no
    component of ``path`` below it may be a link. Without it only ``path`` itself
    may not be one (its parent folders are the caller's own machine).
    """
    path = Path(path)
    try:
        mode = os.lstat(path).st_mode
    except OSError as e:
        raise Unreadable(f"cannot be read ({e.strerror or e})") from None
    if not stat.S_ISREG(mode):
        raise Unreadable(not_regular(mode))
    walk = under is not None and os.open in os.supports_dir_fd
    parts = path.relative_to(under).parts if walk else (str(path),)
    fd = _open_below(Path(under) if walk else None, parts)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):  # swapped since the lstat
            raise Unreadable(not_regular(info.st_mode))
        if info.st_size > limit:
            raise Unreadable(f"is {info.st_size} bytes; the limit is {limit}", size=info.st_size)
        chunks, left = [], limit + 1
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as e:
        raise Unreadable(f"cannot be read ({e.strerror or e})") from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise Unreadable(f"is over {limit} bytes (it grew while being read); the limit is {limit}", size=len(data))
    return data


def _open_below(under: Path | None, parts: tuple[str, ...]) -> int:
    """A read-only descriptor for ``under/parts...``, refusing a link at every step below ``under``."""
    fd = None
    try:
        if under is not None:
            fd = os.open(under, _NOFOLLOW & ~getattr(os, "O_NOFOLLOW", 0) | _DIRECTORY)
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            flags = _NOFOLLOW | (_NONBLOCK if last else _DIRECTORY)
            try:
                nxt = os.open(part, flags, dir_fd=fd)
            except OSError as e:
                if e.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(part, fd):
                    raise Unreadable(not_regular(stat.S_IFLNK) if last else
                                     f"is reached through a symbolic link ({part}/); only regular files are read, "
                                     "never what a link points to") from None
                raise Unreadable(f"cannot be read ({e.strerror or e})") from None
            if fd is not None:
                os.close(fd)
            fd = nxt
        return fd
    except BaseException:
        if fd is not None:
            os.close(fd)
        raise


def _is_link(name: str, dir_fd: int | None) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(name, dir_fd=dir_fd).st_mode)
    except OSError:
        return False
