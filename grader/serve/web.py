"""What every page handler shares: the service's parts, who is asking, pages, forms and cookies.

Pages are Jinja2 templates rendered through the grader's one template set-up
(``grader.reports.templating``: autoescaped, control and bidi characters shown, never
obeyed). A handler names who may call it with a dependency: :func:`panel_member` (a signed-in
panel member: a page without one redirects to the sign-in page) or :func:`candidate` (the
attempt a candidate's cookie opens); state changes also pass :func:`panel_csrf` or
:func:`candidate_csrf`.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Depends, Request
from fastapi.responses import HTMLResponse
from sqlalchemy.orm import Session

from grader.evidence.signing import Key
from grader.reports import templating
from grader.serve import auth
from grader.serve.db import Database
from grader.serve.errors import Refusal
from grader.serve.exercises import Exercises
from grader.serve.models import Assessment, Invite
from grader.serve.settings import ServeSettings


@dataclass
class Service:
    settings: ServeSettings
    db: Database
    exercises: Exercises
    key: Key


class SignInFirst(Exception):
    """A panel page was asked for without a valid session: answered with the sign-in page (or 401 for a script)."""


def service(request: Request) -> Service:
    return request.app.state.service


def panel_member(request: Request) -> auth.Signed:
    with service(request).db.read() as s:
        who = auth.signed_in(s, request.cookies.get(auth.PANEL_COOKIE))
    if who is None:
        raise SignInFirst()
    return who


async def panel_csrf(request: Request, who: auth.Signed = Depends(panel_member)) -> auth.Signed:
    auth.require_csrf(await csrf_given(request), who.csrf)
    return who


@dataclass(frozen=True)
class Attempt:
    """The attempt a candidate's cookie opens, and its assessment (plain values, read once per request)."""

    invite: Invite
    assessment: Assessment


def candidate(request: Request) -> Attempt:
    with service(request).db.read() as s:
        invite = auth.invite_for(s, request.cookies.get(auth.CANDIDATE_COOKIE))
        if invite is None:
            raise Refusal(403, "This page needs your assessment link, and it is missing, unknown or revoked.",
                          fix="Open the link the hiring panel sent you again; if it no longer works, ask them.")
        return Attempt(invite, s.get(Assessment, invite.assessment_id))


async def candidate_csrf(request: Request, attempt: Attempt = Depends(candidate)) -> Attempt:
    auth.require_csrf(await csrf_given(request), attempt.invite.csrf)
    return attempt


async def csrf_given(request: Request) -> str | None:
    """The CSRF token a request carries: its header (a script's fetch), else its form's ``csrf`` field."""
    header = request.headers.get(auth.CSRF_HEADER)
    if header is not None:
        return header
    if request.headers.get("content-type", "").startswith(("application/x-www-form-urlencoded", "multipart/form-data")):
        form = await request.form()
        value = form.get("csrf")
        return value if isinstance(value, str) else None
    return None


def render(request: Request, template: str, status: int = 200, **context) -> HTMLResponse:
    return HTMLResponse(_env.get_template(template).render(request=request, **context), status_code=status)


def fragment(template: str, **context) -> str:
    """A piece of a page (the live table's rows), rendered as the page renders it."""
    return _env.get_template(template).render(**context)


def set_cookie(request: Request, response, name: str, value: str, *, max_age: int | None = None) -> None:
    response.set_cookie(name, value, max_age=max_age, httponly=True, samesite="lax", path="/",
                        secure=service(request).settings.secure_cookies)


def wants_json(request: Request) -> bool:
    """A script's request (it asks for JSON, sends JSON, or carries the CSRF header): refusals answer in JSON."""
    return ("application/json" in request.headers.get("accept", "")
            or request.headers.get("content-type", "").startswith("application/json")
            or request.headers.get(auth.CSRF_HEADER) is not None)


def get_or_404(s: Session, model, key, what: str):
    row = s.get(model, key)
    if row is None:
        raise Refusal(404, f"No such {what}.")
    return row


def handin_of(s: Session, assessment_id: int, grading_id: int):
    """The hand-in grading ``grading_id`` of the assessment (a 404 for any other id, a practice run included)."""
    from grader.serve.models import Grading
    from grader.serve.queue import HANDIN

    g = s.get(Grading, grading_id)
    if g is None or g.assessment_id != assessment_id or g.kind != HANDIN:
        raise Refusal(404, "No such hand-in in this assessment.")
    return g


_env = templating.environment("grader.serve")
