"""The runtime image's name: what every Docker grading looks up, and what a build produces.

The image is ``grader-runtime:<tag>`` (CUDA: ``grader-runtime-cuda:<tag>``), the tag a short hash of
``sandbox/Dockerfile`` and the flavour's requirements: change either and the old image is out of date.
This module is on every Docker grading's path; building is the rest of ``grader.build``, which a
grading never imports. Both flavours share the Dockerfile and pinned torch and differ in the wheels:
the CPU image the ``+cpu`` build (about 200 MB), the CUDA image the default wheel with its ``nvidia-*``
wheels (several GB). Only a grading that asks for GPUs uses the CUDA one
(``grader.wire.grant.flavor_for``), so a CPU machine never downloads it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import docker

from grader.errors import InfraError
from grader.wire.grant import Flavor

REPO_ROOT = Path(__file__).resolve().parents[2]
SANDBOX_DIR = REPO_ROOT / "sandbox"

LABEL_HASH = "grader.runtime.hash"
TAG_LENGTH = 12


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


def _runtime_files(sandbox_dir: Path | None, flavor: Flavor = Flavor.CPU) -> tuple[Path, Path]:
    d = Path(sandbox_dir) if sandbox_dir is not None else SANDBOX_DIR
    files = (d / "Dockerfile", d / SPECS[flavor].requirements)
    for f in files:
        if not f.is_file():
            raise InfraError(
                f"The runtime image definition is incomplete: {f} is missing.",
                hint="Run the grader from its source checkout (the sandbox/ folder "
                "ships next to the grader/ package), or restore the file.",
            )
    return files


def runtime_hash(sandbox_dir: Path | None = None, flavor: Flavor = Flavor.CPU) -> str:
    """Full sha256 over the Dockerfile and the flavor's requirements file (contents and name only)."""
    h = hashlib.sha256()
    for f in _runtime_files(sandbox_dir, flavor):
        data = f.read_bytes()
        h.update(f.name.encode() + b"\0" + str(len(data)).encode() + b"\0" + data)
    return h.hexdigest()


def runtime_tag(sandbox_dir: Path | None = None, flavor: Flavor = Flavor.CPU) -> str:
    """The image tag: the first 12 hex digits of :func:`runtime_hash`."""
    return runtime_hash(sandbox_dir, flavor)[:TAG_LENGTH]


def runtime_image_name(sandbox_dir: Path | None = None, flavor: Flavor = Flavor.CPU) -> str:
    """``grader-runtime:<tag>`` (CUDA: ``grader-runtime-cuda:<tag>``), the image that counts as up to date."""
    return f"{SPECS[flavor].repo}:{runtime_tag(sandbox_dir, flavor)}"


def find_runtime_image(client: docker.DockerClient, sandbox_dir: Path | None = None,
                       flavor: Flavor = Flavor.CPU):
    """The up-to-date runtime image (exact tag present), or None when it has not been built."""
    name = runtime_image_name(sandbox_dir, flavor)
    try:
        return client.images.get(name)
    except docker.errors.ImageNotFound:
        return None
    except (docker.errors.DockerException, OSError) as exc:
        raise InfraError(f"Could not ask the Docker engine for image {name}: {exc}") from exc


def image_info(image) -> dict:
    """What a report records about the image: its id and tags."""
    return {"id": image.id, "tags": list(image.tags)}
