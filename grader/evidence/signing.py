"""The panel's signing key, and the HMACs made with it: evidence that a bundle or a stored row is ours.

``SHA256SUMS`` and a report's own consistency prove nothing against a careful forgery; an HMAC-SHA256
made with a key the panel keeps does. It proves "made by someone holding this key", nothing more
(docs/evidence.md). The key lives in the user's grader data folder (``grader.datadir``)
or the file ``$GRADER_KEY_FILE`` names, never in a bundle or batch folder: 32 random bytes, hex, made
on first use with mode 0600. Its id (a hash, safe to show) is written beside each signature, so another
panel's signature reads as "not signed by this key" rather than as edited.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
import tempfile
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from grader.errors import UsageError

ENV_VAR = "GRADER_KEY_FILE"
FILENAME = "signing.key"
ALGORITHM = "hmac-sha256"
_KEY_BYTES = 32


class Seal(str, Enum):
    """What a signature says about the thing it was made for, checked with this machine's key."""

    SIGNED = "signed"  # signed with this key, and intact
    EDITED = "edited"  # signed with this key, and changed since
    UNSIGNED = "unsigned"  # no signature: made before signing existed, or by someone without a key
    OTHER_KEY = "other_key"  # signed with another key (another panel's, or forged): cannot be checked here
    NO_KEY = "no_key"  # signed, but this machine has no key to check it with

    @property
    def trusted(self) -> bool:
        return self is Seal.SIGNED


@dataclass(frozen=True)
class Key:
    secret: bytes
    path: Path

    @property
    def id(self) -> str:
        """16 hex digits naming the key without revealing it: what two panel members compare."""
        return hashlib.sha256(b"grader signing key id\0" + self.secret).hexdigest()[:16]

    def mac(self, domain: str, *parts: str | bytes | None) -> str:
        """The HMAC of ``parts`` under ``domain`` (each length-prefixed, so no two lists encode alike)."""
        msg = bytearray(_field(domain))
        for part in parts:
            msg += b"-" if part is None else _field(part)
        return hmac.new(self.secret, bytes(msg), hashlib.sha256).hexdigest()

    def verifies(self, mac: str, domain: str, *parts: str | bytes | None) -> bool:
        return hmac.compare_digest(mac.encode("ascii", "replace"), self.mac(domain, *parts).encode("ascii"))


def _field(part: str | bytes) -> bytes:
    data = part.encode("utf-8", "surrogateescape") if isinstance(part, str) else bytes(part)
    return str(len(data)).encode() + b":" + data


def key_path() -> Path:
    """Where this user's signing key is (or will be made): ``$GRADER_KEY_FILE``, else the data folder's."""
    given = os.environ.get(ENV_VAR)
    if given:
        return Path(given).expanduser()
    from grader.datadir import data_dir

    return data_dir() / FILENAME


def load_key(*, create: bool) -> Key | None:
    """This user's key; made first when ``create`` (signing), else None when there is none (checking).

    A key others can read or write is refused, as ssh refuses such a private key: whoever
    can read it can sign anything as the panel.
    """
    path = key_path()
    if not path.exists():
        if not create:
            return None
        _make(path)
    try:
        st = path.stat()
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"Cannot read the signing key {str(path)!r}: {getattr(e, 'strerror', None) or e}.") from None
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"The signing key {str(path)!r} is not a regular file.")
    if os.name == "posix" and st.st_mode & 0o077:
        raise UsageError(f"The signing key {str(path)!r} can be read or written by others (mode "
                         f"{stat.S_IMODE(st.st_mode):04o}): anyone who reads it can sign as the panel.",
                         hint=f"Run `chmod 600 {path}`.")
    try:
        secret = bytes.fromhex(text)
    except ValueError:
        secret = b""
    if len(secret) != _KEY_BYTES:
        raise UsageError(f"{str(path)!r} is not a grader signing key ({_KEY_BYTES * 2} hex digits on one line).")
    return Key(secret, path)


def _make(path: Path) -> None:
    """Write a new key at ``path``, 0600 from the start; if another process made one first, keep theirs."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".signing-", dir=path.parent)  # mkstemp opens with mode 0600
    try:
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(secrets.token_hex(_KEY_BYTES) + "\n")
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)  # atomic, and never replaces a key that exists
        except FileExistsError:
            pass
    finally:
        os.unlink(tmp)


def signing_key_for(folder: Path, what: str) -> Key:
    """This user's key (made on first use) to sign ``folder`` with; refused, before any key is made, when it
    is kept inside ``folder``: the key would travel with the evidence, and whoever has that could sign anything."""
    path = key_path()
    try:
        inside = path.resolve().is_relative_to(Path(folder).resolve())
    except OSError:
        inside = False
    if inside:
        raise UsageError(f"The signing key {str(path)!r} is inside the {what} {str(folder)!r}: whoever gets "
                         f"the {what} could sign anything with it.",
                         hint=f"Keep the key in the grader data folder, or point ${ENV_VAR} elsewhere.")
    return load_key(create=True)


def seal_of(key: Key | None, key_id: str | None, check) -> Seal:
    """How a signature made with key ``key_id`` stands: ``check(key)`` says whether it verifies."""
    if not key_id:
        return Seal.UNSIGNED
    if key is None:
        return Seal.NO_KEY
    if not hmac.compare_digest(key_id.encode("ascii", "replace"), key.id.encode("ascii")):
        return Seal.OTHER_KEY
    return Seal.SIGNED if check(key) else Seal.EDITED
