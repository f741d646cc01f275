"""The panel's live table: every candidate's state, as JSON and as a server-sent event stream.

The stream reads the database (so any server of a PostgreSQL deployment sees every worker's
results) once a second, and sends the table whenever it changed, and a comment line now and
then so a proxy keeps the connection open. The page updates its table from it, no reload.
"""

from __future__ import annotations

import asyncio
import json

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, StreamingResponse
from starlette.concurrency import run_in_threadpool

from grader.serve import auth, progress
from grader.serve.models import Assessment
from grader.serve.takehome import exercises_of
from grader.serve.web import fragment, get_or_404, panel_member, service

router = APIRouter()
POLL_S = 1.0
KEEPALIVE_S = 15.0


def _table(request: Request, assessment_id: int, who: auth.Signed) -> dict:
    """The table as data and as the page's rows (time left in whole minutes, so a clock alone sends nothing)."""
    svc = service(request)
    with svc.db.read() as s:
        a = get_or_404(s, Assessment, assessment_id, "assessment")
        found = progress.states(s, a, svc.key)
        rows = fragment("assessment_rows.html.j2", candidates=found, a=a, who=who, exercises=exercises_of(s, a.id))
    table = progress.as_json(found)
    for row in table:
        row["seconds_left"] = None if row["seconds_left"] is None else int(row["seconds_left"] // 60 * 60)
    return {"candidates": table, "rows_html": rows}


@router.get("/a/{assessment_id}/state")
def state(request: Request, assessment_id: int, who: auth.Signed = Depends(panel_member)):
    return JSONResponse(_table(request, assessment_id, who))


@router.get("/a/{assessment_id}/events")
async def events(request: Request, assessment_id: int, who: auth.Signed = Depends(panel_member)):
    await run_in_threadpool(_table, request, assessment_id, who)  # a 404 now, before the stream starts

    async def stream():
        last, quiet = None, 0.0
        while not await request.is_disconnected():
            table = await run_in_threadpool(_table, request, assessment_id, who)
            text = json.dumps(table, separators=(",", ":"))
            if text != last:
                last, quiet = text, 0.0
                yield f"event: state\ndata: {text}\n\n"
            elif quiet >= KEEPALIVE_S:
                quiet = 0.0
                yield ": still here\n\n"
            await asyncio.sleep(POLL_S)
            quiet += POLL_S

    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})
