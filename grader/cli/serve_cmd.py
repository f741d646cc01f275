"""``grader serve``: the self-hosted take-home service (candidates in a browser, the panel watching results arrive)."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import click

from grader.cli.options import exercise_root_option
from grader.errors import UsageError


def _default_data() -> Path:
    from grader.datadir import data_dir

    return data_dir() / "serve"


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; anything but this machine belongs behind a TLS reverse proxy (docs/serve.md).")
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True)
@click.option("--data", "data", type=click.Path(path_type=Path, file_okay=False),
              help="The service's folder: its SQLite database and each assessment's results (default: serve/ in the "
                   "grader data folder).")
@click.option("--database", metavar="URL",
              help="sqlite:///PATH or postgresql://USER:PASSWORD@HOST/NAME (default: SQLite in the data folder).")
@click.option("--engine", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="local: worker processes on this machine; ray: gradings as Ray tasks (as grader batch).")
@click.option("--ray-address", help="Ray cluster to join (default with --engine ray: start one here).")
@click.option("--workers", type=click.IntRange(min=0),
              help="Gradings at once: local worker processes, or Ray tasks (default: the number of cores).")
@click.option("--local-sandbox", "local_sandbox", is_flag=True,
              help="Let assessments grade in the local sandbox: NOT isolated (candidates' code runs as this user). "
                   "For trials only.")
@click.option("--secure-cookies", is_flag=True, help="Mark cookies Secure: the service is reached over HTTPS.")
@exercise_root_option("the installed exercises")
@click.option("--add-user", "add_user", metavar="NAME",
              help="Make a panel account (asks for its password) and exit.")
def serve_cmd(host, port, data, database, engine, ray_address, workers, local_sandbox, secure_cookies, exercise_root,
              add_user):
    """Run the take-home service: panels make assessments and invite candidates by link; candidates edit, run
    the visible checks and hand in from a browser; the panel sees each result as it is graded.

    `grader serve` (at a terminal it asks for the first panel account when there is none), then open the
    address it prints; on a fresh machine, `bash scripts/serve.sh` sets everything up first. Scaling out:
    --database postgresql://... and --engine ray (docs/serve.md).
    """
    from grader.serve.settings import ServeSettings

    try:
        from grader.serve.server import serve
    except ImportError as e:
        raise UsageError(f"grader serve needs the serve extra ({e.name} is not installed).",
                         hint="pip install -c constraints.txt 'grader[serve]'") from None
    data = (data or _default_data()).expanduser().resolve()
    if workers is None:
        from grader.batch.engines import default_jobs

        workers = default_jobs()
    settings = ServeSettings(database=database or f"sqlite:///{data / 'serve.sqlite'}", data=data,
                             exercise_root=exercise_root, engine=engine, ray_address=ray_address, workers=workers,
                             allow_local_sandbox=local_sandbox, secure_cookies=secure_cookies)
    if add_user is not None:
        _add_user(settings, add_user)
        return
    _first_account(settings)
    if not _loopback(host) and not secure_cookies:
        click.echo(f"note: listening on {host}: put the service behind a reverse proxy with TLS and pass "
                   "--secure-cookies (docs/serve.md)", err=True)
    serve(settings, host=host, port=port, say=lambda line: click.echo(line, err=True))


def _first_account(settings) -> None:
    """No panel account yet: at a terminal, make the first one now; otherwise say how (the pages need one)."""
    import sys

    from sqlalchemy import func, select

    from grader.serve.models import User
    from grader.serve.server import open_service

    service = open_service(settings)
    with service.db.read() as s:
        none = not s.scalar(select(func.count()).select_from(User))
    service.db.dispose()
    if not none:
        return
    if not sys.stdin.isatty():
        click.echo("note: no panel account yet; make one with `grader serve --add-user NAME` (same --data/--database)",
                   err=True)
        return
    _add_user(settings, click.prompt("No panel account yet. Your name for signing in", err=True))


def _add_user(settings, name: str) -> None:
    from sqlalchemy import func, select

    from grader.serve.auth import MIN_PASSWORD, add_user
    from grader.serve.errors import Refusal
    from grader.serve.models import User
    from grader.serve.server import open_service

    service = open_service(settings)
    password = click.prompt(f"Password for {name} (at least {MIN_PASSWORD} characters)", hide_input=True,
                            confirmation_prompt=True, err=True)
    try:
        with service.db.write() as s:
            user = add_user(s, name, password)
            count = s.scalar(select(func.count()).select_from(User))
    except Refusal as e:
        raise UsageError(e.message, hint=e.fix) from None
    click.echo(f"Added the panel account {user.name!r} ({count} in all, database {service.db.shown}).", err=True)


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"
