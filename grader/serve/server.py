"""Start the service: the database brought up to date, the workers, and the web server, stopped in that order.

Everything lives in one folder (``--data``, default ``serve/`` in the grader data folder):
the SQLite database unless ``--database`` names another, and each assessment's results.
The panel's signing key is the user's (``grader.evidence.signing``), never inside that folder.
"""

from __future__ import annotations

import sys

from grader.evidence.signing import signing_key_for
from grader.serve.db import Database
from grader.serve.exercises import Exercises
from grader.serve.settings import ServeSettings
from grader.serve.web import Service


def open_service(settings: ServeSettings) -> Service:
    """The service's parts, with the database migrated (the app and the CLI's ``--add-user`` share this)."""
    settings.data.mkdir(parents=True, exist_ok=True)
    db = Database(settings.database)
    db.migrate()
    return Service(settings, db, Exercises(settings.exercise_root), signing_key_for(settings.data, "service folder"))


def docker_problem() -> str | None:
    """Why this machine cannot grade in the Docker sandbox now (no engine, no image), or None."""
    from grader.backends import engine
    from grader.build import naming
    from grader.errors import InfraError

    try:
        client = engine.connect(timeout=10)
    except InfraError as e:
        return f"no Docker engine ({str(e).splitlines()[0]})"
    if naming.find_runtime_image(client) is None:
        return f"the sandbox image {naming.runtime_image_name()} is not built"
    return None


def serve(settings: ServeSettings, *, host: str, port: int, say=print) -> None:
    import uvicorn

    from grader.serve.app import create_app
    from grader.serve.supervisor import Supervisor

    service = open_service(settings)
    supervisor = Supervisor(settings, service.db, service.exercises, service.key)
    supervisor.start()
    where = ("one worker sending gradings to Ray" if settings.engine == "ray"
             else f"{settings.workers} local worker process(es)")
    say(f"grader serve: http://{host}:{port}/ (database {service.db.shown}; {where}; data in {settings.data})")
    if settings.engine == "local" and (problem := docker_problem()):
        say(f"note: {problem}: gradings in the Docker sandbox come back \"not graded\" until it is fixed "
            "(bash scripts/setup.sh sets Docker and the image up)")
    try:
        # An idle connection is kept 75 s (nginx's default), not uvicorn's 5: a browser or proxy that reuses one a
        # moment after the server dropped it gets a reset instead of an answer.
        config = uvicorn.Config(create_app(service), host=host, port=port, log_level="warning",
                                timeout_graceful_shutdown=3, timeout_keep_alive=75, proxy_headers=True,
                                forwarded_allow_ips="127.0.0.1")
        uvicorn.Server(config).run()
    finally:
        print("grader serve: stopping the workers (their gradings go back in the queue)", file=sys.stderr, flush=True)
        supervisor.stop()
        service.db.dispose()
