"""An assessment's results as a batch's (``grader.serve.panel_rows``), and each hand-in's evidence bundle.

Files are served from the assessment's results folder only: a path is resolved and must
stay inside it, name a regular file, and be one of the kinds a batch writes. The panel
page's inline script is allowed by its hash in the page's Content-Security-Policy, nothing
else inline. A hand-in's bundle is the one ``grader bundle`` writes (submission bytes, full
report, output, environment, ``SHA256SUMS``, ``SIGNATURE``), zipped.
"""

from __future__ import annotations

import base64
import hashlib
import re
import tempfile
from pathlib import Path

from fastapi import APIRouter, Depends, Request
from fastapi.responses import RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from grader.practice.pack import reproducible_zip
from grader.serve import auth, panel_rows
from grader.serve.errors import Refusal
from grader.serve.models import Assessment, Invite
from grader.serve.sealed import stored_report
from grader.serve.web import get_or_404, handin_of, panel_member, service

router = APIRouter()
TYPES = {".html": "text/html; charset=utf-8", ".csv": "text/csv; charset=utf-8", ".json": "application/json",
         ".jsonl": "application/x-ndjson"}
_SCRIPT = re.compile(rb"<script>(.*?)</script>", re.S)


def _build(request: Request, assessment_id: int) -> Path:
    svc = service(request)
    with svc.db.read() as s:
        a = get_or_404(s, Assessment, assessment_id, "assessment")
        return panel_rows.build(s, a, svc.key, svc.exercises, svc.settings.data)


@router.get("/a/{assessment_id}/results/")
def results_index(assessment_id: int, who: auth.Signed = Depends(panel_member)):
    return RedirectResponse(f"/a/{assessment_id}/results/index.html", status_code=303)


@router.get("/a/{assessment_id}/results/{path:path}")
async def result_file(request: Request, assessment_id: int, path: str, who: auth.Signed = Depends(panel_member)):
    folder = (await run_in_threadpool(_build, request, assessment_id)).resolve()
    target = (folder / path).resolve()
    if (not target.is_relative_to(folder) or target.suffix not in TYPES or target.is_symlink()
            or not target.is_file() or any(part.startswith(".") for part in target.relative_to(folder).parts)):
        raise Refusal(404, "No such file in this assessment's results.")
    data = target.read_bytes()
    headers = {}
    if target.suffix == ".html":
        hashes = " ".join(f"'sha256-{base64.b64encode(hashlib.sha256(m).digest()).decode()}'"
                          for m in _SCRIPT.findall(data))
        headers["Content-Security-Policy"] = (f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
                                              f"script-src {hashes or chr(39) + 'none' + chr(39)}; "
                                              "frame-ancestors 'self'; base-uri 'none'; form-action 'none'")
    else:
        headers["Content-Disposition"] = f'attachment; filename="{target.name}"'
    return Response(data, media_type=TYPES[target.suffix], headers=headers)


@router.get("/a/{assessment_id}/handins/{grading_id}/bundle.zip")
def bundle(request: Request, assessment_id: int, grading_id: int, who: auth.Signed = Depends(panel_member)):
    from grader.evidence.bundle import write_bundle

    svc = service(request)
    with svc.db.read() as s:
        g = handin_of(s, assessment_id, grading_id)
        candidate = s.get(Invite, g.invite_id).name
    report, problem = stored_report(g, svc.key)
    if report is None:
        raise Refusal(409, f"This hand-in has no result to bundle{': ' + problem if problem else ' yet'}.")
    report = report.model_copy(update={"candidate": candidate})
    with tempfile.TemporaryDirectory(prefix="grader-serve-bundle-") as tmp:
        submission = Path(tmp) / "submission" / g.filename
        submission.parent.mkdir()
        submission.write_bytes(g.source)
        dest = write_bundle(report, submission, Path(tmp) / "bundle" / f"handin-{g.id}")
        files = {f"{dest.name}/{p.relative_to(dest).as_posix()}": p.read_bytes()
                 for p in sorted(dest.rglob("*")) if p.is_file()}
        folders = sorted({f"{dest.name}/{p.relative_to(dest).as_posix()}/" for p in dest.rglob("*") if p.is_dir()})
    data, _ = reproducible_zip([f"{dest.name}/", *folders], files)
    return Response(data, media_type="application/zip",
                    headers={"Content-Disposition": f'attachment; filename="handin-{g.id}-{g.exercise}.zip"'})
