"""Who is asking: panel members (a password, then a session cookie) and candidates (their link's token).

Passwords are kept as argon2 hashes. Every token a browser holds (a panel session, a
candidate's link) is ``secrets.token_urlsafe(32)`` and only its sha256 is stored, so the
database opens nothing by itself. Cookies are HttpOnly and SameSite=Lax (Secure behind
TLS). Every change of state also needs the CSRF token the page was given: the panel
session's own, or the candidate attempt's, compared in constant time.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import hmac
import secrets
from dataclasses import dataclass

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from grader.serve.errors import Refusal
from grader.serve.inputs import user_name
from grader.serve.models import Invite, PanelSession, User, now
from grader.serve.settings import SESSION_HOURS

PANEL_COOKIE = "grader_panel"
CANDIDATE_COOKIE = "grader_take"
LOGIN_COOKIE = "grader_login"  # the CSRF token of the sign-in form, before there is a session
CSRF_HEADER = "x-csrf-token"
#: A shorter password is refused when an account is made.
MIN_PASSWORD = 12

_hasher = PasswordHasher()


def new_token() -> str:
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).hexdigest()


def same(given: str | None, expected: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode("utf-8", "replace"), expected.encode("utf-8"))


def add_user(session: Session, name: str, password: str) -> User:
    """A new panel account; a ``Refusal`` naming the problem for a taken name or a short password."""
    name = user_name(name)
    if len(password) < MIN_PASSWORD:
        raise Refusal(400, f"The password is {len(password)} characters long; at least {MIN_PASSWORD} are needed.")
    if session.scalar(select(User).where(User.name == name)) is not None:
        raise Refusal(409, f"There is already a panel account named {name!r}.",
                      fix="Choose another name, or sign in with that one.")
    user = User(name=name, password_hash=_hasher.hash(password))
    session.add(user)
    session.flush()
    return user


def check_password(session: Session, name: str, password: str) -> User | None:
    """The account, when ``password`` is its password; None otherwise (the same time is spent either way)."""
    user = session.scalar(select(User).where(User.name == name[:64]))
    try:
        if user is None:
            _hasher.verify(_DUMMY, password)
            return None
        _hasher.verify(user.password_hash, password)
        return user
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return None


_DUMMY = _hasher.hash("not a password of anyone's")


@dataclass(frozen=True)
class Signed:
    """A signed-in panel member, as a request sees them."""

    user_id: int
    name: str
    csrf: str


def open_session(session: Session, user: User) -> str:
    """A new session for ``user``: its token (for the cookie; only its hash is kept)."""
    token = new_token()
    session.execute(delete(PanelSession).where(PanelSession.expires_at < now()))  # old sessions, gone
    session.add(PanelSession(token_hash=token_hash(token), user_id=user.id, csrf=new_token(),
                             expires_at=now() + _dt.timedelta(hours=SESSION_HOURS)))
    return token


def signed_in(session: Session, token: str | None) -> Signed | None:
    """Who holds ``token`` (the panel cookie): None when it is absent, unknown (forged) or expired."""
    if not token or len(token) > 100:
        return None
    row = session.get(PanelSession, token_hash(token))
    if row is None or row.expires_at <= now():
        return None
    user = session.get(User, row.user_id)
    return None if user is None else Signed(user.id, user.name, row.csrf)


def close_session(session: Session, token: str | None) -> None:
    if token and len(token) <= 100:
        session.execute(delete(PanelSession).where(PanelSession.token_hash == token_hash(token)))


def invite_for(session: Session, token: str | None) -> Invite | None:
    """The attempt ``token`` (a candidate's link) opens: None when unknown or revoked."""
    if not token or len(token) > 100:
        return None
    invite = session.scalar(select(Invite).where(Invite.token_hash == token_hash(token)))
    return None if invite is None or invite.revoked_at is not None else invite


def require_csrf(given: str | None, expected: str) -> None:
    if not same(given, expected):
        raise Refusal(403, "This form or request is missing its security token (CSRF), or it is out of date.",
                      fix="Reload the page and try again.")
