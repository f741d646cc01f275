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


def version_from_hello(value: object) -> str | None:
    """A version the sandbox's hello reports (``torch.version.cuda``, ``torch.__version__``), as short
    printable text or None: the hello comes from inside the sandbox, so its shape is not trusted."""
    if not isinstance(value, str):
        return None
    text = "".join(c for c in value[:40] if c.isprintable())
    return text or None


def gpu_skip_reason(policy: GpuPolicy, sandbox_gpus: int, *, cuda_version: str | None = None,
                    torch_version: str | None = None) -> str | None:
    """Why a ``gpu``-marked check cannot run in a sandbox seeing ``sandbox_gpus`` GPUs (None: it runs).

    ``cuda_version`` (the sandbox's ``torch.version.cuda``, from its hello) tells the two
    ways of seeing none apart: a CPU build of torch, which no GPU can help, and a CUDA
    build that was given no device.
    """
    if sandbox_gpus > 0:
        return None
    detail = _why_none(cuda_version, torch_version)
    if policy is GpuPolicy.REQUIRED:
        raise InfraError(f"A GPU was requested but the sandbox sees none{detail}.",
                         hint="Grade on a host where `nvidia-smi` lists a GPU, with the NVIDIA Container Toolkit "
                              "and the CUDA image (`grader sandbox build --cuda`).")
    return "no GPU in the sandbox" + detail


def _why_none(cuda_version: str | None, torch_version: str | None) -> str:
    if torch_version is None:
        return ""
    if cuda_version is None:
        return f" (its torch {torch_version} is a CPU build: GPU gradings use the CUDA image)"
    return f" (its torch {torch_version} is built for CUDA {cuda_version}, but no device reached it)"


#: What Docker answers when it has no way to hand a GPU to a container, and what that means.
_START_ERRORS = (
    ("could not select device driver",
     "Docker cannot give the sandbox a GPU: the NVIDIA Container Toolkit is not installed or not "
     "registered with this Docker engine",
     "Install nvidia-container-toolkit, run `nvidia-ctk runtime configure --runtime=docker`, restart "
     "dockerd, and check with `docker run --rm --gpus all IMAGE nvidia-smi`."),
    ("nvidia-container-cli",
     "The NVIDIA container runtime could not give the sandbox a GPU (is there an NVIDIA GPU and driver "
     "on this host?)",
     "Check that `nvidia-smi` lists a GPU on this host; without one, grade without --gpus (GPU checks of an "
     "optional exercise then skip)."),
)


def gpu_start_error(error: Exception) -> InfraError | None:
    """The Docker error of a GPU container's start, as the infrastructure failure it is (None: not a GPU one)."""
    text = str(error)
    for needle, message, hint in _START_ERRORS:
        if needle in text:
            said = next((line.strip() for line in text.splitlines() if needle in line), text.strip())
            return InfraError(f"{message}. Docker said: {said[:400]}", hint=hint)
    return None
