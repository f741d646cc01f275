"""What a grading's sandbox is granted, in the words every process reads it in.

- :class:`GpuRequest`: ``--gpus SPEC`` parsed once, by :func:`parse_gpus` (``all``, a count, or
  ``device=0,1``: the spellings ``docker run --gpus`` takes), and spelled back by ``str()``;
- :class:`Flavor`: which of the two runtime images and torch builds a sandbox runs (CPU, or
  CUDA exactly when it is given GPUs: :func:`flavor_for`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from grader.errors import UsageError


@dataclass(frozen=True)
class GpuRequest:
    count: int = 0  # -1 = all
    device_ids: tuple[str, ...] = ()

    def __str__(self) -> str:
        """The ``--gpus`` spelling of this request."""
        if self.device_ids:
            return "device=" + ",".join(self.device_ids)
        return "all" if self.count == -1 else str(self.count)

    def to_docker(self):
        from docker.types import DeviceRequest

        if self.device_ids:
            return DeviceRequest(device_ids=list(self.device_ids), capabilities=[["gpu"]])
        return DeviceRequest(count=self.count, capabilities=[["gpu"]])


#: What ``--gpus`` takes, in the words a bad value is refused with (here, and by the command line's option).
GPUS_EXPECTED = "expected 'all', a count like '1', or 'device=0,1'"


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
        f"Invalid --gpus {spec!r}: {GPUS_EXPECTED}.",
        hint="These are the spellings `docker run --gpus` accepts.",
    )


class Flavor(str, Enum):
    """The runtime a sandbox runs: the CPU build of torch, or the CUDA one (``grader.build.naming``: its image)."""

    CPU = "cpu"
    CUDA = "cuda"


def flavor_for(gpu: GpuRequest | None) -> Flavor:
    """The runtime a grading needs: CUDA exactly when the sandbox is given GPUs."""
    return Flavor.CUDA if gpu is not None else Flavor.CPU
