"""The service's database: the migrations make exactly the models' schema, on SQLite and on PostgreSQL."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("sqlalchemy")

from alembic.autogenerate import compare_metadata  # noqa: E402
from alembic.migration import MigrationContext  # noqa: E402

from grader.errors import UsageError  # noqa: E402
from grader.serve.db import Database, normalise_url  # noqa: E402
from grader.serve.models import Base  # noqa: E402


def test_the_migrations_make_the_models_schema_and_run_again_harmlessly(database_url):
    db = Database(database_url)
    try:
        db.migrate()
        db.migrate()  # a restarted server migrates again: nothing to do, nothing lost
        with db.engine.connect() as connection:
            diff = compare_metadata(MigrationContext.configure(connection, opts={"compare_type": True}), Base.metadata)
        assert diff == [], f"models.py and migrations/versions/ differ: {diff}"
        with db.engine.connect() as connection:
            assert connection.exec_driver_sql("SELECT version_num FROM alembic_version").scalar() == "0001"
    finally:
        db.dispose()


@pytest.mark.parametrize("url, words", [
    ("mysql://u:p@h/db", "runs on SQLite (a file) or PostgreSQL"),
    ("sqlite://", "runs on SQLite (a file) or PostgreSQL"),
    ("not a url", "is not a database URL"),
])
def test_a_database_the_service_cannot_use_is_refused_naming_what_it_takes(url, words):
    with pytest.raises(UsageError, match=re.escape(words)):
        normalise_url(url)


def test_postgresql_urls_get_the_psycopg_driver_and_keep_their_password():
    assert normalise_url("postgresql://u:p%40ss@h:5433/db") == "postgresql+psycopg://u:p%40ss@h:5433/db"
