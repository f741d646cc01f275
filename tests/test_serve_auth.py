"""The panel's accounts and sessions, CSRF on every change, and every input bounded: SQLite and PostgreSQL."""

from __future__ import annotations

import datetime as _dt

import pytest

pytest.importorskip("fastapi")

from click.testing import CliRunner  # noqa: E402
from sqlalchemy import select, update  # noqa: E402

from grader.serve import takehome  # noqa: E402
from grader.serve.errors import Refusal  # noqa: E402
from grader.serve.inputs import AssessmentForm  # noqa: E402
from grader.serve.models import Draft, Grading, Invite, PanelSession, User  # noqa: E402
from grader.serve.settings import MAX_BODY_BYTES, MAX_SOURCE_BYTES  # noqa: E402
from tests.serve_fixtures import PASSWORD, Candidate, csrf_of, invite, new_assessment, sign_in  # noqa: E402


def test_passwords_are_argon2_hashes_and_a_wrong_one_signs_in_no_one(client, service):
    sign_in(client, service)
    with service.db.read() as s:
        assert s.scalar(select(User.password_hash)).startswith("$argon2id$")
    client.cookies.clear()
    page = client.get("/login")
    r = client.post("/login", data={"name": "pat", "password": PASSWORD + "!", "csrf": csrf_of(page.text)})
    assert r.status_code == 401 and "wrong" in r.text
    assert client.get("/", follow_redirects=False).headers["location"] == "/login"


def test_session_cookies_are_httponly_samesite_and_a_forged_or_expired_session_is_refused(client, service):
    sign_in(client, service)
    assert client.get("/").status_code == 200
    login = client.post("/login", data={"name": "pat", "password": PASSWORD, "csrf": "x"})
    assert login.status_code == 403  # a sign-in form without its own CSRF cookie's token
    jar = client.cookies.jar
    panel = next(c for c in jar if c.name == "grader_panel")
    assert panel.has_nonstandard_attr("HttpOnly") and panel.get_nonstandard_attr("SameSite").lower() == "lax"

    real = panel.value
    client.cookies.set("grader_panel", real[:-2] + "xx", domain=panel.domain, path="/")  # forged
    assert client.get("/", follow_redirects=False).headers["location"] == "/login"
    assert client.get("/a/1/state", headers={"Accept": "application/json"}).status_code == 401
    client.cookies.set("grader_panel", real, domain=panel.domain, path="/")
    assert client.get("/").status_code == 200
    with service.db.write() as s:
        s.execute(update(PanelSession).values(expires_at=_dt.datetime.now(_dt.timezone.utc) - _dt.timedelta(seconds=1)))
    assert client.get("/", follow_redirects=False).headers["location"] == "/login"  # expired


def test_every_change_needs_its_csrf_token(client, service):
    csrf = sign_in(client, service)
    aid = new_assessment(client, csrf)
    form = {"title": "X", "exercises": ["toy"], "time_limit_min": "60", "opens_at": "2020-01-01T00:00",
            "closes_at": "2100-01-01T00:00", "sandbox": "local"}
    assert client.post("/assessments", data=form).status_code == 403
    assert client.post("/assessments", data={**form, "csrf": "forged"}).status_code == 403
    assert client.post(f"/a/{aid}/invites", data={"names": "eve"}).status_code == 403
    assert client.post("/logout", data={}).status_code == 403
    links = invite(client, csrf, aid, "ann", "ben")
    ann, ben = Candidate(service, links["ann"]), Candidate(service, links["ben"])
    assert ann.client.post("/take/start", data={}).status_code == 403
    ann.start()
    for token in (None, ben.csrf, csrf):  # none, another candidate's, the panel's
        headers = {"X-CSRF-Token": token} if token else {}
        r = ann.client.post("/take/x/toy/draft", json={"text": "x = 1\n", "seq": 1}, headers=headers)
        assert r.status_code == 403 and "CSRF" in r.json()["error"]
    assert ann.save("x = 1\n", 1).status_code == 200


def test_add_user_makes_an_account_with_a_long_enough_password(service, tmp_path):
    from grader.cli import main

    args = ["serve", "--database", service.db.url, "--data", str(tmp_path / "d"), "--add-user", "José"]
    short = CliRunner().invoke(main, args, input="short\nshort\n")
    assert short.exit_code == 2 and "at least 12" in short.output
    made = CliRunner().invoke(main, args, input=f"{PASSWORD}\n{PASSWORD}\n")
    assert made.exit_code == 0, made.output
    again = CliRunner().invoke(main, [*args[:-1], "Jose\u0301"], input=f"{PASSWORD}\n{PASSWORD}\n")
    assert again.exit_code == 2 and "already a panel account" in again.output  # the same name, once normalised


@pytest.mark.parametrize("names, words", [
    ("a/b", "holds a path separator"),
    ("evil\u202egnp.exe", "control or invisible characters"),
    ("x" * 101, "is 101 characters long"),
    ("José\nJose\u0301", "is given twice"),
])
def test_candidate_names_are_normalised_and_bounded(client, service, names, words):
    csrf = sign_in(client, service)
    aid = new_assessment(client, csrf)
    r = client.post(f"/a/{aid}/invites", data={"csrf": csrf, "names": names})
    assert r.status_code == 400 and words in r.text


def test_files_and_bodies_are_bounded_and_must_be_text(client, service):
    csrf = sign_in(client, service)
    aid = new_assessment(client, csrf)
    ann = Candidate(service, invite(client, csrf, aid, "ann")["ann"])
    ann.start()
    big = ann.client.post("/take/x/toy/upload", data={"csrf": ann.csrf},
                          files={"file": ("toy.py", b"#" * (MAX_SOURCE_BYTES + 1))})
    assert big.status_code == 413 and "the limit is 1,048,576" in big.text
    binary = ann.client.post("/take/x/toy/upload", data={"csrf": ann.csrf}, files={"file": ("toy.py", b"\xff\xfe x")})
    assert binary.status_code == 400 and "not UTF-8" in binary.text
    huge = ann.client.post("/take/x/toy/draft", content=b"{" + b" " * MAX_BODY_BYTES + b"}",
                           headers={"X-CSRF-Token": ann.csrf, "Content-Type": "application/json"})
    assert huge.status_code == 413
    ok = ann.client.post("/take/x/toy/upload", data={"csrf": ann.csrf}, files={"file": ("mine.py", b"x = 2\n")})
    assert ok.status_code == 200 and "x = 2" in ok.text
    with pytest.raises(Refusal, match="not allow the local sandbox"):
        with service.db.write() as s:
            form = AssessmentForm(title="T", exercises=["toy"], time_limit_min=60, opens_at=_now(),
                                  closes_at=_now() + _dt.timedelta(days=1), sandbox="local")
            takehome.create_assessment(s, service.exercises, 1, form, allow_local=False)


def _now():
    return _dt.datetime.now(_dt.timezone.utc)


def test_the_servers_clock_decides_and_hands_in_when_the_time_is_up(client, service):
    csrf = sign_in(client, service)
    aid = new_assessment(client, csrf, runs_per_minute="2")
    ann = Candidate(service, invite(client, csrf, aid, "ann")["ann"])
    assert ann.save("x = 1\n", 1).status_code == 409  # not started: nothing to save yet
    ann.start()
    assert ann.save("x = 3\n", 3).status_code == 200
    assert ann.save("x = 2\n", 2).json()["seq"] == 3  # a save that arrives late is not kept over a newer one
    assert ann.run("x = 4\n", 4).status_code == 200
    again = ann.run("x = 5\n", 5)
    assert again.status_code == 409 and "already running" in again.json()["error"]
    for text, seq in (("x = 6\n", 6), ("x = 7\n", 7)):
        with service.db.write() as s:
            s.execute(update(Grading).values(status="graded"))  # as if graded: one at a time is not the limit here
        answer = ann.run(text, seq)
    assert answer.status_code == 429 and "2 times a minute" in answer.json()["error"]  # a refused run saves nothing

    with service.db.write() as s:
        s.execute(update(Invite).values(deadline_at=_now() - _dt.timedelta(seconds=60)))
    late = ann.save("x = 8\n", 8)
    assert late.status_code == 409 and "Time is up" in late.json()["error"]
    assert takehome.hand_in_expired(service.db, service.exercises) == 1
    assert takehome.hand_in_expired(service.db, service.exercises) == 0  # once
    with service.db.read() as s:
        i = s.get(Invite, 1)
        handed = s.scalars(select(Grading).where(Grading.kind == "handin")).all()
        draft = s.get(Draft, (1, "toy"))
    assert i.handed_in_by == "clock" and [g.source for g in handed] == [draft.text.encode()] == [b"x = 6\n"]
    assert "Handed in" in ann.client.get("/take").text


def test_every_response_says_how_long_the_server_itself_took(client, service):
    """A load test tells the server's own time (Server-Timing) from a page's wait for a CPU or a connection."""
    for r in (client.get("/login"), client.get("/", follow_redirects=False), client.get("/c/not-a-token")):
        name, _, duration = r.headers["Server-Timing"].partition(";dur=")
        assert name == "app" and float(duration) >= 0.0, r.headers["Server-Timing"]
