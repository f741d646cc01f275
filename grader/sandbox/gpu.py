"""GPU policy: what a grading asks Docker for, and what happens without a GPU.

Pure functions, so the whole policy is unit-tested on machines with no GPU:

- ``--gpus SPEC`` is parsed into a Docker device request (``all``, a count, or
  ``device=0,1``), the same spellings ``docker run --gpus`` takes;
- the exercise's policy decides: ``none`` never requests one (a given --gpus is
  ignored, with a warning); ``optional`` requests one when asked, and checks marked
  ``gpu`` skip with a reason when the sandbox sees none; ``required`` refuses to
  grade without --gpus (a usage error), and a sandbox that then sees no GPU is an
  infrastructure failure (not graded), never a zero.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from grader.errors import InfraError, UsageError
from grader.exercise import GpuPolicy


@dataclass(frozen=True)
class GpuRequest:
    count: int = 0  # -1 = all
    device_ids: tuple[str, ...] = ()

    def to_docker(self):
        from docker.types import DeviceRequest

        if self.device_ids:
            return DeviceRequest(device_ids=list(self.device_ids), capabilities=[["gpu"]])
        return DeviceRequest(count=self.count, capabilities=[["gpu"]])


@dataclass(frozen=True)
class GpuPlan:
    request: GpuRequest | None
    warning: str | None = None


def parse_gpus(spec: str) -> GpuRequest:
    """Parse a ``--gpus`` value: ``all``, a positive count, or ``device=0,1``."""
    text = spec.strip()
    if text == "all":
        return GpuRequest(count=-1)
    if re.fullmatch(r"[1-9][0-9]*", text):
        return GpuRequest(count=int(text))
    m = re.fullmatch(r"(?:device=)?([0-9]+(?:,[0-9]+)*)", text)
    if m and text.startswith("device="):
        return GpuRequest(device_ids=tuple(m.group(1).split(",")))
    raise UsageError(
        f"Invalid --gpus {spec!r}: expected 'all', a count like '1', or 'device=0,1'.",
        hint="These are the spellings `docker run --gpus` accepts.",
    )


def plan_gpus(policy: GpuPolicy, spec: str | None) -> GpuPlan:
    """Decide the device request before anything starts."""
    if policy is GpuPolicy.NONE:
        if spec:
            return GpuPlan(None, warning=f"--gpus {spec} ignored: this exercise does not use a GPU")
        return GpuPlan(None)
    if spec is None:
        if policy is GpuPolicy.REQUIRED:
            raise UsageError("This exercise needs a GPU and none was requested.",
                             hint="Pass --gpus all (or --gpus 1) on a machine with an NVIDIA GPU.")
        return GpuPlan(None, warning="no --gpus given: checks that need a GPU are skipped")
    return GpuPlan(parse_gpus(spec))


def gpu_skip_reason(policy: GpuPolicy, sandbox_gpus: int) -> str | None:
    """Why a ``gpu``-marked check cannot run in a sandbox seeing ``sandbox_gpus`` GPUs (None: it runs)."""
    if sandbox_gpus > 0:
        return None
    if policy is GpuPolicy.REQUIRED:
        raise InfraError("A GPU was requested but the sandbox sees none (is the NVIDIA container runtime set up?).")
    return "no GPU in the sandbox"
