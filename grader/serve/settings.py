"""How one ``grader serve`` runs: one typed value, made by the command line, handed to the app and to each worker.

A worker process is told its work as this value's JSON on its standard input (parsed once,
``WorkerSettings``), never in a dozen command-line options to keep in step.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

#: A candidate's file: what ``grader.host.grading`` grades at most (a larger one is refused with a message).
MAX_SOURCE_BYTES = 1024 * 1024
#: Any request body: the largest file plus the form around it.
MAX_BODY_BYTES = MAX_SOURCE_BYTES + 64 * 1024
#: A signed-in panel member's session lasts this long (then they sign in again).
SESSION_HOURS = 12
#: A grading row whose worker has not been heard from for this long is put back in the queue (seconds).
LEASE_S = 60.0
#: Tries of one grading before the infrastructure's failure is final ("not graded": the panel can queue it again).
MAX_ATTEMPTS = 3


class ServeSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    database: str  # a URL: sqlite:///... or postgresql://...
    data: Path  # the service's folder: SQLite by default, the panel pages of each assessment
    exercise_root: Path | None = None  # None: the installed catalog
    engine: str = "local"  # local worker processes, or one worker sending gradings to Ray
    ray_address: str | None = None
    workers: int = Field(default=2, ge=0)  # local worker processes (Ray: gradings at once)
    #: Whether assessments may grade in the local sandbox (NOT isolated): for trials and tests only.
    allow_local_sandbox: bool = False
    #: Cookies marked Secure (the service is reached over HTTPS, through a reverse proxy).
    secure_cookies: bool = False
    lease_s: float = LEASE_S
    poll_s: float = 0.5  # how often an idle worker looks at the queue


class WorkerSettings(BaseModel):
    """What one worker process is told: where the queue is, how to grade, who it is."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    worker_id: str
    database: str
    exercise_root: Path | None = None
    engine: str = "local"
    ray_address: str | None = None
    slots: int = Field(default=1, ge=1)  # gradings at once in this worker
    lease_s: float = LEASE_S
    poll_s: float = 0.5
