"""Which sandbox a grading uses: what was asked for, or for ``auto`` what this machine can offer.

Without Docker, ``auto`` grades with the local sandbox and says so in one line (it is not isolated).
An explicit kind never falls back: ``docker`` without an engine is "not graded, rerun", as batch
grading needs. A grading that asks for GPUs never falls back, not even with ``auto``: it runs in
Docker's CUDA image, or it is "not graded" saying what is missing (the GPU, then the engine, then
``grader sandbox build --cuda``) and that ``--sandbox local`` grades on this machine's own torch and
GPU, not isolated. Isolation changes only when the user says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from grader.errors import InfraError, UsageError
from grader.build.naming import SPECS
from grader.wire.grant import Flavor
from grader.wire.grant import GpuRequest

REQUESTS = ("auto", "docker", "local")

_FALLBACK = "grading with the local sandbox, which is NOT isolated."


@dataclass(frozen=True)
class SandboxChoice:
    kind: str  # docker | local
    note: str | None = None  # one line for the report when ``auto`` fell back


def choose_sandbox(requested: str, *, image: str | None = None, flavor: Flavor = Flavor.CPU,
                   gpu: GpuRequest | None = None) -> SandboxChoice:
    """Resolve ``requested`` once per grading; only ``auto`` looks at the machine.

    ``flavor``: the runtime image the grading would use (CUDA when it asks for GPUs); ``gpu``:
    the request itself. ``auto`` never raises for a CPU grading; for a GPU grading it is Docker
    or an ``InfraError`` (module docstring)."""
    if requested not in REQUESTS:
        raise UsageError(f"Unknown sandbox {requested!r}: choose one of {', '.join(REQUESTS)}.")
    if requested != "auto":
        return SandboxChoice(requested)
    if gpu is not None or flavor is Flavor.CUDA:
        return _docker_with_gpus(gpu or GpuRequest(count=-1), image)
    from grader.backends import engine

    if not engine.engine_available():
        return _local(f"No Docker engine answered ({engine.where()}): {_FALLBACK} "
                      "`--sandbox docker` insists on Docker.")
    try:
        missing = _missing_image(engine, image, flavor)
    except InfraError as e:
        return _local(f"Docker is not usable ({e}): {_FALLBACK} `--sandbox docker` insists on Docker.")
    if missing is not None:
        return _local(f"The sandbox image {missing} is not built: {_FALLBACK} "
                      f"Run `grader sandbox build{SPECS[flavor].build_flag}` to grade in Docker.")
    return SandboxChoice("docker")


def _docker_with_gpus(gpu: GpuRequest, image: str | None) -> SandboxChoice:
    """``auto`` for a GPU grading: Docker when it can give one, else the refusal (never the local sandbox)."""
    from grader.backends.gpu import refuse_docker
    from grader.backends.gpu_probe import measure_docker

    refuse_docker(gpu, measure_docker(image), auto=True)
    return SandboxChoice("docker")


def _local(note: str) -> SandboxChoice:
    return SandboxChoice("local", " ".join(note.split()))  # one line, whatever the error text held


def _missing_image(engine, image: str | None, flavor: Flavor = Flavor.CPU) -> str | None:
    """The name of the image grading would need when it is absent, else None."""
    from docker.errors import DockerException, ImageNotFound

    from grader.build import naming

    client = engine.connect(timeout=10)
    try:
        if image is None:
            found = naming.find_runtime_image(client, flavor=flavor)
            return None if found is not None else naming.runtime_image_name(flavor=flavor)
        try:
            client.images.get(image)
        except ImageNotFound:
            return image
        except (DockerException, OSError) as e:
            raise InfraError(f"Could not ask the Docker engine for image {image}: {e}") from e
        return None
    finally:
        client.close()
