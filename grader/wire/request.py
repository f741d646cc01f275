"""One grading as the host asks its judge for it: the one value the judge's pytest reads (``--grader-request``).

The host (``grader.host.runner``) writes it to a file once; the judge's plugin reads and validates it once,
and every part of the judge that needs a fact of the grading (which sandbox, image, runtime, GPUs, which
checks) takes it from this value. A new sandbox option is a field here and its one reader.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from grader.wire.grant import GpuRequest


class Prestarted(BaseModel):
    """A Docker sandbox started for this grading ahead of its judge (``grader.backends.prestart``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    container: str  # its id: the judge attaches to it for its first worker
    stage: str  # the staged folder it mounts, where the judge stages the submission


class GradingRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    exercise: str  # the exercise's folder
    fingerprint: str | None = None  # as the host loaded it: the judge refuses a folder that changed since
    submission: str  # the file to grade (the host's copy of the bytes it hashed)
    sandbox: str = "local"  # a kind of grader.backends.factory.KINDS (checked where the sandbox is opened)
    seed: int | None = None  # hypothesis's seed (None: the exercise's own)
    grading_id: str | None = None  # labels its containers (None: one is made up)
    events: str | None = None  # where the judge writes its events, one JSON line each
    image: str | None = None  # the Docker runtime image (None: the one built for this grader)
    runtime: str | None = None  # the OCI runtime: runc (None) or runsc
    gpus: GpuRequest | None = None  # as ``grader submit --gpus`` asked, once the plan kept it
    local_gpu_env: dict[str, str] | None = None  # the local sandbox's GPU environment, as the host planned it
    prestarted: Prestarted | None = None
    only: list[str] | None = None  # run only these check ids; the others are collected, not run

    def write(self, path: Path) -> Path:
        path.write_text(self.model_dump_json(), encoding="utf-8")
        return path

    @classmethod
    def read(cls, path: str | Path) -> "GradingRequest":
        return cls.model_validate_json(Path(path).read_text(encoding="utf-8"))
