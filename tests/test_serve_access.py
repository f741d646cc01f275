"""Who reaches what: a candidate's link opens that candidate's attempt and nothing else, on SQLite and PostgreSQL.

A candidate cannot read another attempt, any panel route, or a hidden check's text (hidden
checks are never run by "Run checks", and a hand-in's report is the panel's alone); a revoked
or replaced link opens nothing. Gradings run in the local sandbox on the toy exercise.
"""

from __future__ import annotations

import re

import pytest

pytest.importorskip("fastapi")

from fastapi.routing import APIRoute  # noqa: E402

from grader.serve.web import panel_csrf, panel_member  # noqa: E402
from tests.serve_fixtures import Candidate, drain, invite, new_assessment, sign_in  # noqa: E402

#: Passes the visible checks (float32) and fails the hidden one (float64 in, float32 out): its message is hidden text.
VISIBLE_ONLY = '''import math


def scale(x, factor):
    if not math.isfinite(factor):
        raise ValueError(f"factor must be finite, got {factor}")
    return (x * factor).float()
'''
#: What a hidden check of the toy says of itself: its id, its name, and what it found.
HIDDEN = ("test_scale_property", "Scales any vector by any factor", "hidden-", "float64")


def _panel_routes() -> list[APIRoute]:
    """Every route of the service that a panel member's session opens (found by its dependencies)."""
    from grader.serve.routes import candidate, events, panel, results, signin

    def needs_panel(dependant) -> bool:
        return any(d.call in (panel_member, panel_csrf) or needs_panel(d) for d in dependant.dependencies)

    return [r for m in (candidate, events, panel, results, signin) for r in m.router.routes
            if isinstance(r, APIRoute) and needs_panel(r.dependant)]


def test_a_candidates_link_reaches_their_attempt_and_no_other_nor_any_panel_route_nor_hidden_text(client, service):
    csrf = sign_in(client, service)
    aid = new_assessment(client, csrf)
    links = invite(client, csrf, aid, "ann", "ben")
    ann, ben = Candidate(service, links["ann"]), Candidate(service, links["ben"])
    for c in (ann, ben):
        c.start()
    assert ann.save("# the answer of ann\n", 1).status_code == 200
    run = ben.run(VISIBLE_ONLY, 1).json()["run"]
    drain(service)
    assert ben.hand_in().status_code == 200
    drain(service)
    handin = client.get(f"/a/{aid}/state").json()["candidates"][1]["cells"][0]
    assert handin["status"] == "graded" and handin["score"] == "3/6"  # the panel sees the hidden check's loss

    # Another attempt: none of ben's runs, hand-ins or drafts through ann's link.
    for path in (f"/take/runs/{run}", f"/take/runs/{run}/scorecard", f"/take/runs/{handin['grading_id']}",
                 f"/take/runs/{handin['grading_id']}/scorecard"):
        r = ann.client.get(path, headers={"Accept": "application/json"})
        assert r.status_code == 404, (path, r.status_code)
    assert "the answer of ann" in ann.client.get("/take/x/toy").text
    assert VISIBLE_ONLY.splitlines()[-1].strip() not in ann.client.get("/take/x/toy").text

    # Any panel route, with a candidate's cookie: the sign-in page, never the panel's data.
    grading = handin["grading_id"]
    for route in _panel_routes():
        path = route.path.replace("{path:path}", "index.html").format(assessment_id=aid, invite_id=1, grading_id=grading)
        for method in route.methods & {"GET", "POST"}:
            r = ben.client.request(method, path, follow_redirects=False, data={"csrf": ben.csrf})
            assert r.status_code in (303, 401), (method, path, r.status_code)
            assert r.status_code == 401 or r.headers["location"] == "/login"
    assert len(_panel_routes()) >= 10

    # Hidden checks' text: in no page, JSON or scorecard the candidate can reach.
    seen = [ben.client.get(p).text for p in ("/take", "/take/x/toy", f"/take/runs/{run}", f"/take/runs/{run}/scorecard",
                                             "/take/clock")]
    assert "Scales a small tensor" in seen[3]  # the visible check is on the run's scorecard
    for text in seen:
        for word in HIDDEN:
            assert word not in text
    panel_card = client.get(f"/a/{aid}/results/candidates/ben/toy.html").text
    assert "Scales any vector by any factor" in panel_card  # the panel's scorecard has it: the words are real


def test_a_revoked_or_replaced_link_opens_nothing(client, service):
    csrf = sign_in(client, service)
    aid = new_assessment(client, csrf)
    first = invite(client, csrf, aid, "ann")["ann"]
    ann = Candidate(service, first)
    assert client.post(f"/a/{aid}/invites/1/revoke", data={"csrf": csrf}).status_code == 200
    assert ann.client.get("/take").status_code == 403
    assert ann.client.get(first.removeprefix("http://127.0.0.1")).status_code == 404
    page = client.post(f"/a/{aid}/invites/1/link", data={"csrf": csrf}).text
    second = re.search(r'value="(http://127\.0\.0\.1/c/[^"]+)"', page).group(1)
    assert second != first
    assert ann.client.get(first.removeprefix("http://127.0.0.1")).status_code == 404
    assert Candidate(service, second).client.get("/take").status_code == 200


def test_the_token_is_unguessable_and_stored_only_as_its_hash(client, service):
    from grader.serve.models import Invite

    csrf = sign_in(client, service)
    aid = new_assessment(client, csrf)
    link = invite(client, csrf, aid, "ann")["ann"]
    token = link.rsplit("/", 1)[1]
    assert len(token) >= 43 and re.fullmatch(r"[A-Za-z0-9_-]+", token)  # 32 random bytes
    with service.db.read() as s:
        stored = s.get(Invite, 1).token_hash
    assert token not in stored and len(stored) == 64
    assert client.get(f"/c/{token[:-1]}x", follow_redirects=False).status_code == 404


def test_the_prompt_page_shows_the_public_files_only(client, service):
    csrf = sign_in(client, service)
    aid = new_assessment(client, csrf)
    ann = Candidate(service, invite(client, csrf, aid, "ann")["ann"])
    ann.start()
    page = ann.client.get("/take/x/toy").text
    assert "Write <code>scale(x, factor)</code>" in page  # the README, rendered
    for private in ("candidate_raises", "expect_tensor", "def test_", "torch.mul"):  # checks/, exercise.toml
        assert private not in page
