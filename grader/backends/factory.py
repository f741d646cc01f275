"""Open a sandbox of the requested kind for one grading: stage files, pick the transport.

The judge calls this once per grading; it is the only place that knows both
backends, so adding one is a change here and nowhere in the judge. Every kind
runs the worker in a process of its own: candidate code never runs in the
judge's process, not even for an author's bare pytest run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from grader.errors import InfraError, UsageError
from grader.exercise import Exercise
from grader.backends.client import Sandbox
from grader.wire.grant import Flavor, flavor_for
from grader.backends.gpu import LocalGpuSetup
from grader.wire.grant import GpuRequest
from grader.backends.staging import Staged, stage, stage_submission

KINDS = ("docker", "local")


@dataclass(frozen=True)
class SandboxInfo:
    """What the report says about the sandbox a grading opened (``grader.wire.selfreport.SandboxSummary`` adds what
    the sandbox reported once it ran)."""

    sandbox: str  # the kind: local or docker
    image: str | None = None  # docker: the image's name and id
    image_id: str | None = None
    limits_unavailable: dict[str, str] = field(default_factory=dict)  # local: limits this platform cannot set, and why


def open_sandbox(kind: str, *, exercise: Exercise, submission: Path, workdir: Path, grading_id: str,
                 gpu: GpuRequest | None = None, image: str | None = None, runtime: str | None = None,
                 local_gpu: LocalGpuSetup | None = None, guard: bool = True,
                 prestarted: tuple[str, Path] | None = None) -> tuple[Sandbox, SandboxInfo]:
    """Return ``(sandbox, info)``; the sandbox is not started yet. ``info`` goes into the report.

    ``local_gpu``: the local sandbox's set-up for a GPU grading (from ``plan_gpus``); a local sandbox asked
    for ``gpu`` without one is refused, never opened without the GPU.
    ``guard=False`` stages the file without the subset's runtime guard (``grader.sandbox.restricted``): the
    raw file, for the grader's own tests of the container, the wall that must hold against code that got
    past the judge. The judge's plugin never passes it.
    ``prestarted``: ``(container id, staged folder)`` of a Docker sandbox the grader started for this grading
    ahead of its judge (``grader.backends.prestart``): the submission is staged into that folder (its worker
    has not looked yet) and the sandbox's first worker is that container, taken over by attaching to it."""
    if kind not in KINDS:
        raise UsageError(f"Unknown sandbox {kind!r}: choose one of {', '.join(KINDS)}.")
    from grader.subset.guard import guard_lists

    lists = guard_lists(exercise) if guard else None
    if prestarted is not None and kind == "docker":
        staged = stage_submission(Staged(Path(prestarted[1])), submission=submission,
                                  module_name=exercise.module_name, guard=lists)
    else:
        prestarted = None
        staged = stage(probes=exercise.probes, submission=submission, module_name=exercise.module_name,
                       dest=workdir / "stage", shared=exercise.shared, guard=lists)
    forbidden, kernels = exercise.config.forbidden.apis, exercise.config.forbidden.kernels
    limits = exercise.limits
    if kind == "local":
        from grader.backends.local_backend import local_starter, plan_rlimits

        if gpu is not None and local_gpu is None:
            raise InfraError(f"--gpus {gpu} asked for a GPU, and the local sandbox was given no plan for one.")
        plan = plan_rlimits(limits, gpu=local_gpu is not None)
        start = local_starter(staged, forbidden, limits, plan, kernels, gpu=local_gpu)
        info = SandboxInfo("local", limits_unavailable=dict(plan.unavailable))
        sweep = None  # a local worker is a process group, killed whole by its own close
    else:
        from grader.backends import docker_backend, engine, oci_runtime
        from grader.build import naming

        from docker.errors import DockerException, ImageNotFound

        client = engine.connect()
        wanted = flavor_for(gpu)
        name = image or naming.runtime_image_name(flavor=wanted)
        oci = oci_runtime.resolve_runtime(runtime)
        try:
            docker_backend.reap(client)  # containers a dead grader left behind on this host
            oci_runtime.require_runtime(client, oci, gpu=gpu is not None)
            found = client.images.get(name)
        except ImageNotFound:
            raise _not_built(name, wanted, chosen=image is not None) from None
        except DockerException as e:
            raise InfraError(f"The Docker engine failed while opening the sandbox: {e}") from None
        kwargs = docker_backend.container_kwargs(image=name, staged=staged, forbidden=forbidden, limits=limits,
                                                 grading_id=grading_id, gpu=gpu, runtime=oci, kernels=kernels)
        first = docker_backend.attach_starter(client, prestarted[0], grading_id) if prestarted is not None else None
        start = docker_backend.docker_starter(client, kwargs, first=first)
        info = SandboxInfo("docker", image=name, image_id=found.id)
        sweep = lambda: docker_backend.reap(client, grading_id=grading_id)  # noqa: E731
    return Sandbox(start, call_timeout_s=limits.call_timeout_s,
                   call_timeout_after_timeout_s=limits.call_timeout_after_timeout_s,
                   cpus=limits.cpus,
                   max_frame_bytes=limits.result_mb * 1024 * 1024,
                   sweep=sweep), info


def _not_built(name: str, flavor: Flavor, *, chosen: bool) -> InfraError:
    """A missing image, as "not graded": the CUDA one says why it is needed and how to get it."""
    if chosen:
        return InfraError(f"The sandbox image {name} (asked for by name) does not exist.",
                          hint="Build it or name another image.")
    if flavor is Flavor.CUDA:
        return InfraError(f"GPUs were requested, and gradings with GPUs run in the CUDA image {name}, which is not "
                          "built.", hint="Run `grader sandbox build --cuda` (downloads the CUDA build of torch and "
                          "its nvidia-* wheels, several GB), then grade again; or grade without --gpus.")
    return InfraError(f"The sandbox image {name} is not built.",
                      hint="Run `grader sandbox build` (or `bash sandbox/bootstrap.sh`), then grade again.")
