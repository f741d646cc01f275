"""The service's database: SQLite in the data folder by default, PostgreSQL when a URL names one.

SQLite is opened in WAL mode (readers never wait for the writer) and every transaction that
writes begins ``IMMEDIATE``, taking the write lock at its start: two workers claiming at once
queue for it rather than both reading the same queued row, and no write fails half-way on a
stale snapshot. PostgreSQL needs neither (claims lock rows, ``grader.serve.queue``). The schema
is made and moved forward by the Alembic migrations in ``grader.serve.migrations``, on start.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.orm import Session, sessionmaker

from grader.errors import InfraError, UsageError

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
#: How long a SQLite connection waits for the write lock before it gives up (seconds).
SQLITE_WAIT_S = 30


def normalise_url(url: str) -> str:
    """``url`` with the driver this package uses (psycopg 3 for PostgreSQL); a ``UsageError`` for any other kind."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise UsageError(f"--database {url!r} is not a database URL.",
                         hint="Give sqlite:///PATH or postgresql://USER:PASSWORD@HOST/NAME.") from None
    backend = parsed.get_backend_name()
    if backend == "postgresql":
        return parsed.set(drivername="postgresql+psycopg").render_as_string(hide_password=False)
    if backend == "sqlite" and parsed.database and parsed.database != ":memory:":
        return parsed.set(drivername="sqlite").render_as_string(hide_password=False)
    raise UsageError(f"--database names a {backend} database; the service runs on SQLite (a file) or PostgreSQL.",
                     hint="Give sqlite:///PATH or postgresql://USER:PASSWORD@HOST/NAME.")


class Database:
    """Two session factories on one database: ``read()`` and ``write()`` (SQLite's ``BEGIN IMMEDIATE``)."""

    def __init__(self, url: str, *, pool_size: int = 10):
        self.url = normalise_url(url)
        self.kind = make_url(self.url).get_backend_name()
        if self.kind == "sqlite":
            Path(make_url(self.url).database).parent.mkdir(parents=True, exist_ok=True)
            self.engine = _sqlite_engine(self.url, "BEGIN")
            self.writer = _sqlite_engine(self.url, "BEGIN IMMEDIATE")
        else:
            self.engine = self.writer = create_engine(self.url, pool_size=pool_size, max_overflow=pool_size,
                                                      pool_pre_ping=True)
        self._read = sessionmaker(self.engine, expire_on_commit=False)
        self._write = sessionmaker(self.writer, expire_on_commit=False)

    @contextlib.contextmanager
    def read(self) -> Iterator[Session]:
        with self._read() as session:
            yield session

    @contextlib.contextmanager
    def write(self) -> Iterator[Session]:
        """A session whose work is committed when the block ends without an exception (rolled back if it raises)."""
        with self._write() as session, session.begin():
            yield session

    def migrate(self) -> None:
        """Bring the schema to the newest migration (creates it in an empty database)."""
        from alembic import command
        from alembic.config import Config

        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS))
        try:
            with self.writer.begin() as connection:
                config.attributes["connection"] = connection
                command.upgrade(config, "head")
        except Exception as e:
            if isinstance(e, (UsageError, InfraError)):
                raise
            raise InfraError(f"Could not prepare the database {self.shown}: {type(e).__name__}: "
                             f"{str(e).splitlines()[0] if str(e) else ''}",
                             hint="Check that the database is reachable and that the user may create tables.") from e

    @property
    def shown(self) -> str:
        """The URL without its password, for messages and logs."""
        return make_url(self.url).render_as_string(hide_password=True)

    def dispose(self) -> None:
        self.engine.dispose()
        if self.writer is not self.engine:
            self.writer.dispose()


def _sqlite_engine(url: str, begin: str) -> Engine:
    engine = create_engine(url, connect_args={"timeout": SQLITE_WAIT_S, "check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection, _record):
        dbapi_connection.isolation_level = None  # the driver begins nothing itself: ``_begin`` does
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=FULL")  # a grading stored survives a power cut
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection):
        connection.exec_driver_sql(begin)

    return engine
