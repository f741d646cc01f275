"""The candidate's side: the link, the assessment's page, each exercise's editor, runs and the hand-in.

The link (``/c/TOKEN``) puts the token in an HttpOnly cookie and sends the browser on to
``/take``, so it is not left in the address bar or a referrer. Every route here reaches the
cookie's own attempt and nothing else: a grading is looked up by id *and* its attempt. A run's
scorecard is the candidate audience of the report (``grader.reports.redact``), rendered as
``grader submit`` renders one: hidden checks are never run by "Run checks", and a hand-in's
report is the panel's alone.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, File, Request, UploadFile
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse
from pydantic import BaseModel, Field
from sqlalchemy import func, select

from grader.reports.render import render_html
from grader.serve import auth, queue, takehome
from grader.serve.errors import Refusal
from grader.serve.inputs import source_text
from grader.serve.models import AssessmentExercise, Draft, Grading, Invite
from grader.serve.sealed import stored_report
from grader.serve.settings import MAX_SOURCE_BYTES
from grader.serve.web import Attempt, candidate, candidate_csrf, render, service, set_cookie

router = APIRouter()
#: A scorecard has inline styles and no script; it is shown in a frame of the candidate's page.
SCORECARD_CSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'self'; base-uri 'none'"


class Answer(BaseModel):
    """The editor's text as the page sends it, with the page's save counter."""

    text: str = Field(max_length=MAX_SOURCE_BYTES)
    seq: int = Field(ge=0, le=2**31 - 1)


@router.get("/c/{token}")
def open_link(request: Request, token: str):
    with service(request).db.read() as s:
        invite = auth.invite_for(s, token)
    if invite is None:
        raise Refusal(404, "This assessment link is not valid: it was mistyped, replaced or revoked.",
                      fix="Ask the hiring panel for your link again.")
    response = RedirectResponse("/take", status_code=303)
    set_cookie(request, response, auth.CANDIDATE_COOKIE, token, max_age=60 * 24 * 3600)
    return response


def _exercise(s, attempt: Attempt, name: str) -> AssessmentExercise:
    found = s.scalar(select(AssessmentExercise).where(AssessmentExercise.assessment_id == attempt.assessment.id,
                                                      AssessmentExercise.name == name[:100]))
    if found is None:
        raise Refusal(404, "This assessment has no such exercise.")
    return found


@router.get("/take")
def overview(request: Request, attempt: Attempt = Depends(candidate)):
    with service(request).db.read() as s:
        exercises = takehome.exercises_of(s, attempt.assessment.id)
    return render(request, "take.html.j2", attempt=attempt, exercises=exercises,
                  seconds_left=takehome.seconds_left(attempt.invite, attempt.assessment))


@router.post("/take/start")
def start(request: Request, attempt: Attempt = Depends(candidate_csrf)):
    with service(request).db.write() as s:
        takehome.start(s.get(Invite, attempt.invite.id), attempt.assessment)
    return RedirectResponse("/take", status_code=303)


@router.get("/take/x/{name}")
def editor(request: Request, name: str, attempt: Attempt = Depends(candidate)):
    svc = service(request)
    if attempt.invite.started_at is None:
        return RedirectResponse("/take", status_code=303)
    with svc.db.read() as s:
        ex = _exercise(s, attempt, name)
        draft = s.get(Draft, (attempt.invite.id, ex.name))
        text = draft.text if draft is not None else svc.exercises.public(ex.name).stub
        last = s.scalar(select(Grading.id).where(Grading.invite_id == attempt.invite.id, Grading.exercise == ex.name,
                                                 Grading.kind == queue.RUN).order_by(Grading.id.desc()).limit(1))
    return render(request, "editor.html.j2", attempt=attempt, ex=ex, public=svc.exercises.public(ex.name), text=text,
                  seq=draft.seq if draft is not None else 0, last_run=last,
                  seconds_left=takehome.seconds_left(attempt.invite, attempt.assessment))


@router.post("/take/x/{name}/draft")
def save(request: Request, name: str, body: Answer, attempt: Attempt = Depends(candidate_csrf)):
    with service(request).db.write() as s:
        d = takehome.save_draft(s, attempt.invite, _exercise(s, attempt, name), body.text, body.seq)
        return {"seq": d.seq, "saved_at": d.saved_at.isoformat(timespec="seconds")}


@router.post("/take/x/{name}/upload")
async def upload(request: Request, name: str, file: Annotated[UploadFile, File()],
                 attempt: Attempt = Depends(candidate_csrf)):
    text = source_text(await file.read(MAX_SOURCE_BYTES + 1), "The uploaded file")
    with service(request).db.write() as s:
        ex = _exercise(s, attempt, name)
        current = s.get(Draft, (attempt.invite.id, ex.name))
        takehome.save_draft(s, attempt.invite, ex, text, (current.seq if current is not None else 0) + 1)
    return RedirectResponse(f"/take/x/{ex.name}", status_code=303)


@router.post("/take/x/{name}/run")
def run(request: Request, name: str, body: Answer, attempt: Attempt = Depends(candidate_csrf)):
    """Save the editor's text, then queue a practice run of it (visible checks only)."""
    svc = service(request)
    with svc.db.write() as s:
        ex = _exercise(s, attempt, name)
        takehome.save_draft(s, attempt.invite, ex, body.text, body.seq)
        g = takehome.run(s, svc.exercises, s.get(Invite, attempt.invite.id), attempt.assessment, ex)
        return {"run": g.id, "status": g.status}


def _run(s, attempt: Attempt, grading_id: int) -> Grading:
    g = s.get(Grading, grading_id)
    if g is None or g.invite_id != attempt.invite.id or g.kind != queue.RUN:
        raise Refusal(404, "No such run of yours.")
    return g


@router.get("/take/runs/{grading_id}")
def run_state(request: Request, grading_id: int, attempt: Attempt = Depends(candidate)):
    svc = service(request)
    with svc.db.read() as s:
        g = _run(s, attempt, grading_id)
        out = {"run": g.id, "exercise": g.exercise, "status": g.status}
        if g.status == queue.QUEUED:
            out["ahead"] = s.scalar(select(func.count()).select_from(Grading).where(
                Grading.status == queue.QUEUED, Grading.kind == queue.RUN, Grading.id < g.id))
        elif g.status != queue.RUNNING:
            report, problem = stored_report(g, svc.key)
            out["scorecard"] = f"/take/runs/{g.id}/scorecard" if report is not None else None
            out["reason"] = "" if report is not None else "not graded: the grader's infrastructure failed; run again"
    return JSONResponse(out)


@router.get("/take/runs/{grading_id}/scorecard")
def run_scorecard(request: Request, grading_id: int, attempt: Attempt = Depends(candidate)):
    svc = service(request)
    with svc.db.read() as s:
        g = _run(s, attempt, grading_id)
        report, _ = stored_report(g, svc.key)
    if report is None:
        raise Refusal(404, "This run has no scorecard (yet).")
    return HTMLResponse(render_html(report, audience="candidate"), headers={"Content-Security-Policy": SCORECARD_CSP})


@router.post("/take/handin")
def hand_in(request: Request, attempt: Attempt = Depends(candidate_csrf)):
    svc = service(request)
    if attempt.invite.started_at is None:
        raise Refusal(409, "The clock has not started: there is nothing to hand in yet.")
    with svc.db.write() as s:
        takehome.hand_in(s, svc.exercises, s.get(Invite, attempt.invite.id), "candidate")
    return RedirectResponse("/take", status_code=303)


@router.get("/take/clock")
def clock(attempt: Attempt = Depends(candidate)):
    return {"seconds_left": takehome.seconds_left(attempt.invite, attempt.assessment),
            "handed_in": attempt.invite.handed_in_at is not None}
