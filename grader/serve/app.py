"""The ASGI app (FastAPI): its routers, its limits on every request, and how a refusal is answered.

Every response says what a browser may do with it (a Content-Security-Policy that allows
nothing from elsewhere, no framing by other sites, no referrer leaving with a candidate's
link); every request body is capped before it is read; a ``Refusal`` becomes the page (or,
for a script, the JSON) that names the problem and the fix, and a panel page asked for without
a session becomes the sign-in page.
"""

from __future__ import annotations

import time
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles

from grader.serve.errors import Refusal
from grader.serve.settings import MAX_BODY_BYTES
from grader.serve.web import Service, SignInFirst, render, wants_json

STATIC = Path(__file__).resolve().parent / "static"
#: Pages of the service itself: scripts and styles from the server only, nothing inline but styles.
CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
       "connect-src 'self'; frame-src 'self'; frame-ancestors 'self'; base-uri 'none'; form-action 'self'; "
       "object-src 'none'")


def create_app(service: Service) -> FastAPI:
    from grader.serve.routes import candidate, events, panel, results, signin

    app = FastAPI(title="grader serve", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.service = service
    app.add_middleware(BodyLimit)
    app.middleware("http")(_headers)
    for router in (signin.router, panel.router, events.router, results.router, candidate.router):
        app.include_router(router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.exception_handler(Refusal)
    async def refused(request: Request, e: Refusal):
        if wants_json(request):
            return JSONResponse(e.as_json(), status_code=e.status)
        return render(request, "refused.html.j2", status=e.status, message=e.message, fix=e.fix)

    @app.exception_handler(SignInFirst)
    async def sign_in_first(request: Request, e: SignInFirst):
        if wants_json(request):
            return JSONResponse({"error": "Sign in first."}, status_code=401)
        return RedirectResponse("/login", status_code=303)

    @app.exception_handler(RequestValidationError)
    async def malformed(request: Request, e: RequestValidationError):
        first = e.errors()[0] if e.errors() else {"loc": (), "msg": "malformed"}
        where = ".".join(str(p) for p in first["loc"][1:]) or "the request"
        return await refused(request, Refusal(400, f"{where}: {first['msg']}.", fix="Correct it and send it again."))

    return app


async def _headers(request: Request, call_next):
    started = time.perf_counter()
    response = await call_next(request)
    # How long the server itself took (W3C Server-Timing): what a load test tells apart from waiting for a CPU.
    response.headers["Server-Timing"] = f"app;dur={(time.perf_counter() - started) * 1000:.1f}"
    response.headers.setdefault("Content-Security-Policy", CSP)
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers.setdefault("Cache-Control", "no-store")
    return response


class BodyLimit:
    """Refuses (413) a request whose body is larger than ``MAX_BODY_BYTES``, declared or streamed."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope.get("headers", [])).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY_BYTES):
            return await _too_large(send)
        seen = 0

        async def counted():
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > MAX_BODY_BYTES:
                    raise _TooLarge()
            return message

        try:
            await self.app(scope, counted, send)
        except _TooLarge:
            await _too_large(send)


class _TooLarge(Exception):
    pass


async def _too_large(send) -> None:
    import json

    body = json.dumps({"error": f"The request is larger than {MAX_BODY_BYTES:,} bytes.",
                       "fix": "Send the one Python file the exercise asks for (at most 1 MiB)."}).encode()
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
