"""Fixtures of the service's tests: its database on SQLite and on PostgreSQL, a catalog, the app, a running server.

Every service test that takes ``database_url`` runs twice: on a SQLite file and on a PostgreSQL
database of its own, made on the server ``scripts/postgres.sh`` starts (``GRADER_TEST_POSTGRES``)
and dropped afterwards. Without a PostgreSQL server those runs skip, except under
``GRADER_REQUIRE_POSTGRES=1`` (CI), where they fail. Never a mock: the real database, the real app.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.conftest import TOY

POSTGRES = os.environ.get("GRADER_TEST_POSTGRES", "postgresql://grader_test:grader_test@127.0.0.1:5432/grader_test")
REQUIRE_POSTGRES = os.environ.get("GRADER_REQUIRE_POSTGRES") == "1"
PASSWORD = "correct horse battery staple"
PROMPT = "# Toy: scale a tensor\n\nWrite `scale(x, factor)`: return `x * factor` with x's dtype.\n"


def _postgres_admin():
    from sqlalchemy import create_engine, text
    from sqlalchemy.exc import OperationalError

    import importlib.util

    if importlib.util.find_spec("psycopg") is None:
        return None, "psycopg is not installed (the serve extra)"
    engine = create_engine(POSTGRES.replace("postgresql://", "postgresql+psycopg://", 1), isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as c:
            c.execute(text("SELECT 1"))
    except OperationalError as e:
        return None, f"no PostgreSQL at {POSTGRES.split('@')[-1]} ({str(e.orig).splitlines()[0]}): run scripts/postgres.sh"
    return engine, None


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request, tmp_path):
    """A fresh, empty database: a SQLite file, or a PostgreSQL database made for this test and dropped after it."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'serve.sqlite'}"
        return
    from sqlalchemy import text

    admin, why = _postgres_admin()
    if admin is None:
        if REQUIRE_POSTGRES:
            pytest.fail(f"GRADER_REQUIRE_POSTGRES=1 but {why}", pytrace=False)
        pytest.skip(why)
    name = f"grader_t_{uuid.uuid4().hex[:12]}"
    with admin.connect() as c:
        c.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield re.sub(r"/[^/]*$", f"/{name}", POSTGRES)
    finally:
        with admin.connect() as c:
            c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(scope="session")
def toy_catalog(tmp_path_factory) -> Path:
    """A catalog holding the toy exercise (one visible check of 2 points and one of 1, a hidden one of 3), with a
    README as its prompt."""
    root = tmp_path_factory.mktemp("serve-catalog") / "exercises"
    shutil.copytree(TOY, root / "toy", ignore=shutil.ignore_patterns("__pycache__", "solution.py"))
    (root / "toy" / "README.md").write_text(PROMPT, encoding="utf-8")
    return root


def settings_for(database_url: str, data: Path, catalog: Path, **kwargs):
    from grader.serve.settings import ServeSettings

    return ServeSettings(database=database_url, data=data, exercise_root=catalog, allow_local_sandbox=True,
                         **{"workers": 0, **kwargs})


@pytest.fixture
def service(database_url, tmp_path, toy_catalog):
    from grader.serve.server import open_service

    svc = open_service(settings_for(database_url, tmp_path / "data", toy_catalog))
    yield svc
    svc.db.dispose()


@pytest.fixture
def client(service):
    from fastapi.testclient import TestClient

    from grader.serve.app import create_app

    with TestClient(create_app(service), base_url="http://127.0.0.1") as c:
        yield c


def add_user(service, name: str = "pat") -> None:
    from grader.serve.auth import add_user as add

    with service.db.write() as s:
        add(s, name, PASSWORD)


def sign_in(client, service, name: str = "pat") -> str:
    """Sign ``client`` in as a new panel member; returns the session's CSRF token."""
    add_user(service, name)
    page = client.get("/login")
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
    r = client.post("/login", data={"name": name, "password": PASSWORD, "csrf": csrf}, follow_redirects=False)
    assert r.status_code == 303, r.text
    return csrf_of(client.get("/").text)


def csrf_of(html: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', html).group(1)


def new_assessment(client, csrf: str, **fields) -> int:
    form = {"csrf": csrf, "title": "Take-home", "exercises": ["toy"], "time_limit_min": "60",
            "opens_at": "2020-01-01T00:00", "closes_at": "2100-01-01T00:00", "sandbox": "local",
            "runs_per_minute": "30", "max_concurrent": "4", **fields}
    r = client.post("/assessments", data=form, follow_redirects=False)
    assert r.status_code == 303, r.text
    return int(r.headers["location"].rsplit("/", 1)[1])


def invite(client, csrf: str, assessment_id: int, *names: str) -> dict[str, str]:
    """Invite ``names``; returns each one's link (as the page shows it, once)."""
    r = client.post(f"/a/{assessment_id}/invites", data={"csrf": csrf, "names": "\n".join(names)})
    assert r.status_code == 200, r.text
    links = re.findall(r'<th scope="row">([^<]+)</th><td><input class="link-url" readonly value="([^"]+)"', r.text)
    return {name: url for name, url in links}


# --- a real server, in its own process ---------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``grader serve`` running in a process of its own on loopback (started, stopped, killed, restarted)."""

    def __init__(self, database_url: str, data: Path, catalog: Path, *, workers: int = 1, log: Path):
        self.args = ["--database", database_url, "--data", str(data), "--exercise-root", str(catalog),
                     "--workers", str(workers), "--local-sandbox"]
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        self.proc: subprocess.Popen | None = None

    def start(self) -> "Server":
        import httpx

        out = open(self.log, "ab")
        self.proc = subprocess.Popen([sys.executable, "-m", "grader", "serve", "--port", str(self.port), *self.args],
                                     stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"grader serve exited {self.proc.returncode}:\n{self.log.read_text()[-3000:]}")
            try:
                httpx.get(self.url + "/login", timeout=2)
                return self
            except httpx.HTTPError:
                time.sleep(0.2)
        raise AssertionError(f"grader serve did not answer in 60 s:\n{self.log.read_text()[-3000:]}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def kill(self) -> None:
        """kill -9: the server gets no chance to clean up (its workers die with it)."""
        self.proc.kill()
        self.proc.wait()


@pytest.fixture
def served(database_url, tmp_path, toy_catalog):
    """A real ``grader serve`` (one worker, the local sandbox allowed) with the panel account "pat", and the
    service's parts in this process, to read and check its database."""
    from grader.serve.server import open_service

    data = tmp_path / "data"
    svc = open_service(settings_for(database_url, data, toy_catalog))
    add_user(svc)
    server = Server(database_url, data, toy_catalog, workers=1, log=tmp_path / "serve.log").start()
    try:
        yield server, svc
    finally:
        server.stop()
        svc.db.dispose()


# --- a candidate's browser, and the queue drained by a worker in this process ----------------------------------


class Candidate:
    """A candidate's own client (cookies apart from the panel's), opened by their link."""

    def __init__(self, service, link: str):
        from fastapi.testclient import TestClient

        from grader.serve.app import create_app

        self.client = TestClient(create_app(service), base_url="http://127.0.0.1")
        page = self.client.get(link.removeprefix("http://127.0.0.1"))
        assert page.status_code == 200, page.text
        self.csrf = csrf_of(page.text)

    def start(self) -> None:
        assert self.client.post("/take/start", data={"csrf": self.csrf}).status_code == 200

    def save(self, text: str, seq: int, exercise: str = "toy"):
        return self.client.post(f"/take/x/{exercise}/draft", json={"text": text, "seq": seq},
                                headers={"X-CSRF-Token": self.csrf})

    def run(self, text: str, seq: int, exercise: str = "toy"):
        return self.client.post(f"/take/x/{exercise}/run", json={"text": text, "seq": seq},
                                headers={"X-CSRF-Token": self.csrf})

    def hand_in(self):
        return self.client.post("/take/handin", data={"csrf": self.csrf})


def drain(service, *, timeout: float = 300) -> None:
    """Grade everything queued with a worker in this process (local engine), until nothing is queued or running."""
    from sqlalchemy import func, select

    from grader.serve import queue
    from grader.serve.models import Grading
    from grader.serve.settings import WorkerSettings
    from grader.serve.worker import GradingWorker

    worker = GradingWorker(WorkerSettings(worker_id=uuid.uuid4().hex, database=service.db.url, poll_s=0.1,
                                          exercise_root=service.settings.exercise_root))
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            worker.step()
            with service.db.read() as s:
                left = s.scalar(select(func.count()).select_from(Grading).where(
                    Grading.status.in_((queue.QUEUED, queue.RUNNING))))
            if not left and not worker.running:
                return
        raise AssertionError(f"the queue was not drained in {timeout} s")
    finally:
        worker.close()
