"""The first schema: accounts, sessions, assessments, invites, drafts, the grading queue and its workers.

Revision ID: 0001
Revises:
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from grader.serve.models import UTC

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.String(64), nullable=False, unique=True),
        sa.Column("password_hash", sa.String(255), nullable=False),
        sa.Column("created_at", UTC(), nullable=False),
    )
    op.create_table(
        "panel_sessions",
        sa.Column("token_hash", sa.String(64), primary_key=True),
        sa.Column("user_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("csrf", sa.String(64), nullable=False),
        sa.Column("created_at", UTC(), nullable=False),
        sa.Column("expires_at", UTC(), nullable=False),
    )
    op.create_table(
        "assessments",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("title", sa.String(200), nullable=False),
        sa.Column("time_limit_s", sa.Integer(), nullable=False),
        sa.Column("opens_at", UTC(), nullable=False),
        sa.Column("closes_at", UTC(), nullable=False),
        sa.Column("sandbox", sa.String(16), nullable=False),
        sa.Column("gpus", sa.String(64), nullable=True),
        sa.Column("runs_per_minute", sa.Integer(), nullable=False),
        sa.Column("max_concurrent", sa.Integer(), nullable=False),
        sa.Column("created_by", sa.Integer(), sa.ForeignKey("users.id"), nullable=False),
        sa.Column("created_at", UTC(), nullable=False),
    )
    op.create_table(
        "assessment_exercises",
        sa.Column("assessment_id", sa.Integer(), sa.ForeignKey("assessments.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("position", sa.Integer(), primary_key=True),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("title", sa.String(200), nullable=False),
        sa.Column("submission", sa.String(100), nullable=False),
        sa.Column("fingerprint", sa.String(64), nullable=False),
    )
    op.create_table(
        "invites",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("assessment_id", sa.Integer(), sa.ForeignKey("assessments.id", ondelete="CASCADE"), nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("csrf", sa.String(64), nullable=False),
        sa.Column("created_at", UTC(), nullable=False),
        sa.Column("revoked_at", UTC(), nullable=True),
        sa.Column("started_at", UTC(), nullable=True),
        sa.Column("deadline_at", UTC(), nullable=True),
        sa.Column("handed_in_at", UTC(), nullable=True),
        sa.Column("handed_in_by", sa.String(16), nullable=True),
        sa.UniqueConstraint("assessment_id", "name"),
    )
    op.create_index("ix_invites_assessment_id", "invites", ["assessment_id"])
    op.create_table(
        "drafts",
        sa.Column("invite_id", sa.Integer(), sa.ForeignKey("invites.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("exercise", sa.String(100), primary_key=True),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("saved_at", UTC(), nullable=False),
    )
    op.create_table(
        "gradings",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("assessment_id", sa.Integer(), sa.ForeignKey("assessments.id", ondelete="CASCADE"), nullable=False),
        sa.Column("invite_id", sa.Integer(), sa.ForeignKey("invites.id", ondelete="CASCADE"), nullable=False),
        sa.Column("exercise", sa.String(100), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("filename", sa.String(100), nullable=False),
        sa.Column("source", sa.LargeBinary(), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("created_at", UTC(), nullable=False),
        sa.Column("worker_id", sa.String(32), nullable=True),
        sa.Column("lease_until", UTC(), nullable=True),
        sa.Column("not_before", UTC(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("max_attempts", sa.Integer(), nullable=False),
        sa.Column("report", sa.Text(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("finished_at", UTC(), nullable=True),
        sa.Column("signature", sa.String(120), nullable=True),
    )
    op.create_index("ix_gradings_status_id", "gradings", ["status", "id"])
    op.create_index("ix_gradings_assessment_id", "gradings", ["assessment_id"])
    op.create_index("ix_gradings_invite_id", "gradings", ["invite_id"])
    op.create_table(
        "grading_attempts",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("grading_id", sa.Integer(), sa.ForeignKey("gradings.id", ondelete="CASCADE"), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("worker_id", sa.String(32), nullable=False),
        sa.Column("started_at", UTC(), nullable=False),
        sa.Column("ended_at", UTC(), nullable=True),
        sa.Column("outcome", sa.String(16), nullable=True),
        sa.Column("reason", sa.Text(), nullable=False),
    )
    op.create_index("ix_grading_attempts_grading_id", "grading_attempts", ["grading_id"])
    op.create_table(
        "workers",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("engine", sa.String(16), nullable=False),
        sa.Column("started_at", UTC(), nullable=False),
        sa.Column("heartbeat_at", UTC(), nullable=False),
        sa.Column("stopped_at", UTC(), nullable=True),
    )


def downgrade() -> None:
    for table in ("workers", "grading_attempts", "gradings", "drafts", "invites", "assessment_exercises",
                  "assessments", "panel_sessions", "users"):
        op.drop_table(table)
