"""Signing in and out of the panel's side (accounts are made with ``grader serve --add-user``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import RedirectResponse

from grader.serve import auth
from grader.serve.settings import SESSION_HOURS
from grader.serve.web import panel_csrf, render, service, set_cookie

router = APIRouter()


@router.get("/login")
def login_page(request: Request):
    with service(request).db.read() as s:
        if auth.signed_in(s, request.cookies.get(auth.PANEL_COOKIE)) is not None:
            return RedirectResponse("/", status_code=303)
    return _form(request)


def _form(request: Request, problem: str | None = None, status: int = 200):
    token = auth.new_token()  # the sign-in form's CSRF token, the same in its cookie and its field
    response = render(request, "login.html.j2", status=status, csrf=token, problem=problem)
    set_cookie(request, response, auth.LOGIN_COOKIE, token, max_age=3600)
    return response


@router.post("/login")
def login(request: Request, name: Annotated[str, Form(max_length=200)], password: Annotated[str, Form(max_length=1024)],
          csrf: Annotated[str, Form(max_length=100)] = ""):
    if not auth.same(csrf, request.cookies.get(auth.LOGIN_COOKIE) or "\0"):
        return _form(request, "The sign-in form was out of date; try again.", status=403)
    with service(request).db.write() as s:
        user = auth.check_password(s, name, password)
        token = auth.open_session(s, user) if user is not None else None
    if token is None:
        return _form(request, "The name or the password is wrong.", status=401)
    response = RedirectResponse("/", status_code=303)
    set_cookie(request, response, auth.PANEL_COOKIE, token, max_age=SESSION_HOURS * 3600)
    response.delete_cookie(auth.LOGIN_COOKIE, path="/")
    return response


@router.post("/logout")
def logout(request: Request, who: auth.Signed = Depends(panel_csrf)):
    with service(request).db.write() as s:
        auth.close_session(s, request.cookies.get(auth.PANEL_COOKIE))
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(auth.PANEL_COOKIE, path="/")
    return response
