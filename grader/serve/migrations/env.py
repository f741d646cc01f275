"""Alembic's entry point for the service's migrations: runs on the connection ``Database.migrate`` hands it."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from grader.serve.models import Base

connection = context.config.attributes.get("connection")


def _run(conn) -> None:
    context.configure(connection=conn, target_metadata=Base.metadata, render_as_batch=conn.dialect.name == "sqlite",
                      compare_type=True)
    with context.begin_transaction():
        context.run_migrations()


if connection is not None:
    _run(connection)
else:  # an author's `alembic -x` run: the URL from alembic's own configuration
    with create_engine(context.config.get_main_option("sqlalchemy.url")).begin() as conn:
        _run(conn)
