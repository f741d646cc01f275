"""The two runtime images: CPU (the default) and CUDA, and which one a grading uses.

Both are built from the same ``sandbox/Dockerfile`` and the same pinned torch
version; they differ only in the wheels. The CPU image installs the ``+cpu``
build that the package index's find-links supply (about 200 MB); the CUDA image
installs the default Linux wheel from the package index with its ``nvidia-*``
wheels (several GB), pinned in ``sandbox/requirements-cuda.txt``. A grading that
asks for GPUs uses the CUDA image, every other grading the CPU image, so a CPU
machine never needs (or downloads) the CUDA one.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from grader.backends.gpu import GpuRequest


class Flavor(str, Enum):
    CPU = "cpu"
    CUDA = "cuda"


@dataclass(frozen=True)
class FlavorSpec:
    repo: str  # image name without the tag
    requirements: str  # file name in sandbox/
    wheel_dir_suffix: str  # keeps the two torch builds in separate wheelhouses
    build_flag: str  # how `grader sandbox build` is asked for it
    #: Whether a pin ``==2.13.0`` may be met by a local build such as ``2.13.0+cpu``.
    #: The CUDA image must get the index's default wheel, never a ``+cpu`` one that a
    #: find-links folder happens to offer.
    local_builds_allowed: bool


SPECS: dict[Flavor, FlavorSpec] = {
    Flavor.CPU: FlavorSpec("grader-runtime", "requirements.txt", "", "", local_builds_allowed=True),
    Flavor.CUDA: FlavorSpec("grader-runtime-cuda", "requirements-cuda.txt", "-cuda", " --cuda",
                            local_builds_allowed=False),
}


def flavor_for(gpu: GpuRequest | None) -> Flavor:
    """The image a grading needs: CUDA exactly when the sandbox is given GPUs."""
    return Flavor.CUDA if gpu is not None else Flavor.CPU
