"""The panel's pages: the assessments, a new one, one assessment with its candidates, invites and links.

A candidate's link is shown once, on the page that answers the invite (only its hash is
kept); a lost link is replaced with a new one, which stops the old from working.
"""

from __future__ import annotations

import datetime as _dt
from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import RedirectResponse
from sqlalchemy import select

from grader.serve import auth, progress, queue, takehome
from grader.serve.inputs import AssessmentForm, candidate_names, utc
from grader.serve.models import Assessment, Invite, now
from grader.serve.web import get_or_404, handin_of, panel_csrf, panel_member, render, service

router = APIRouter()


@router.get("/")
def home(request: Request, who: auth.Signed = Depends(panel_member)):
    with service(request).db.read() as s:
        assessments = s.scalars(select(Assessment).order_by(Assessment.created_at.desc())).all()
    return render(request, "home.html.j2", who=who, assessments=assessments, now=now())


@router.get("/assessments/new")
def new_assessment(request: Request, who: auth.Signed = Depends(panel_member)):
    svc = service(request)
    t = now().replace(second=0, microsecond=0)
    return render(request, "new_assessment.html.j2", who=who, choices=svc.exercises.choices(),
                  allow_local=svc.settings.allow_local_sandbox, opens=t.strftime("%Y-%m-%dT%H:%M"),
                  closes=(t + _dt.timedelta(days=7)).strftime("%Y-%m-%dT%H:%M"))


@router.post("/assessments")
async def create(request: Request, who: auth.Signed = Depends(panel_csrf)):
    svc = service(request)
    form = await request.form(max_files=0, max_fields=64)
    fields = {k: v for k, v in form.items() if k not in ("csrf", "exercises", "opens_at", "closes_at")}
    fields["exercises"] = [v for v in form.getlist("exercises") if isinstance(v, str)]
    fields["opens_at"] = utc(str(form.get("opens_at", "")), "The opening time")
    fields["closes_at"] = utc(str(form.get("closes_at", "")), "The closing time")
    parsed = AssessmentForm.parse({k: v for k, v in fields.items() if v != ""})
    with svc.db.write() as s:
        a = takehome.create_assessment(s, svc.exercises, who.user_id, parsed,
                                       allow_local=svc.settings.allow_local_sandbox)
        s.flush()
        assessment_id = a.id
    return RedirectResponse(f"/a/{assessment_id}", status_code=303)


def _page(request: Request, who: auth.Signed, assessment_id: int, *, links=(), status: int = 200):
    svc = service(request)
    with svc.db.read() as s:
        a = get_or_404(s, Assessment, assessment_id, "assessment")
        found = progress.states(s, a, svc.key)
        exercises = takehome.exercises_of(s, a.id)
    base = str(request.base_url).rstrip("/")
    return render(request, "assessment.html.j2", status=status, who=who, a=a, exercises=exercises,
                  candidates=found, links=[(name, f"{base}/c/{token}") for name, token in links])


@router.get("/a/{assessment_id}")
def assessment(request: Request, assessment_id: int, who: auth.Signed = Depends(panel_member)):
    return _page(request, who, assessment_id)


@router.post("/a/{assessment_id}/invites")
def invite(request: Request, assessment_id: int, names: Annotated[str, Form(max_length=60_000)],
           who: auth.Signed = Depends(panel_csrf)):
    wanted = candidate_names(names)
    with service(request).db.write() as s:
        a = get_or_404(s, Assessment, assessment_id, "assessment")
        made = [(i.name, token) for i, token in takehome.invite(s, a, wanted)]
    return _page(request, who, assessment_id, links=made)


def _invite(s, assessment_id: int, invite_id: int) -> Invite:
    i = get_or_404(s, Invite, invite_id, "candidate")
    if i.assessment_id != assessment_id:
        raise_missing()
    return i


def raise_missing():
    from grader.serve.errors import Refusal

    raise Refusal(404, "No such candidate in this assessment.")


@router.post("/a/{assessment_id}/invites/{invite_id}/revoke")
def revoke(request: Request, assessment_id: int, invite_id: int, who: auth.Signed = Depends(panel_csrf)):
    with service(request).db.write() as s:
        takehome.revoke(_invite(s, assessment_id, invite_id))
    return RedirectResponse(f"/a/{assessment_id}", status_code=303)


@router.post("/a/{assessment_id}/invites/{invite_id}/link")
def new_link(request: Request, assessment_id: int, invite_id: int, who: auth.Signed = Depends(panel_csrf)):
    with service(request).db.write() as s:
        i = _invite(s, assessment_id, invite_id)
        made = [(i.name, takehome.new_link(s, i))]
    return _page(request, who, assessment_id, links=made)


@router.post("/a/{assessment_id}/gradings/{grading_id}/again")
def grade_again(request: Request, assessment_id: int, grading_id: int, who: auth.Signed = Depends(panel_csrf)):
    svc = service(request)
    with svc.db.write() as s:
        queue.grade_again(s, handin_of(s, assessment_id, grading_id), svc.key)
    return RedirectResponse(f"/a/{assessment_id}", status_code=303)
