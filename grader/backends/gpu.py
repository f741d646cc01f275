"""GPU policy: what a grading asks for, whether the chosen sandbox can give it, and what happens without one.

Pure functions, so the whole policy is unit-tested without a GPU; what a machine can do is measured
by :mod:`grader.backends.gpu_probe` and passed in. ``--gpus SPEC`` takes ``docker run --gpus``'s
spellings; the exercise's policy decides whether a request is made (:func:`gpu_request`: ``none``
ignores it with a warning, ``optional`` skips its ``gpu`` checks without one, ``required`` is a usage
error without one); the backend decides whether it can be met (:func:`plan_gpus`): one that cannot
is "not graded", saying what is missing, never dropped. The local sandbox's plan says what it passes
to the worker, and that a resident-memory watchdog replaces the address-space limit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from grader.errors import InfraError, UsageError
from grader.exercise import GpuPolicy
from grader.reports.warning import ReportWarning, WarningCode
from grader.wire.grant import GpuRequest


def gpu_request(policy: GpuPolicy, asked: GpuRequest | None) -> tuple[GpuRequest | None, ReportWarning | None]:
    """The request the exercise's policy makes of ``asked`` (``--gpus``, parsed where it was given), and a warning
    for the report (or None).

    Needs nothing of the machine, so it runs first: a required exercise without --gpus is a
    usage error before any sandbox is looked at."""
    if policy is GpuPolicy.NONE:
        ignored = f"--gpus {asked} ignored: this exercise does not use a GPU"
        return None, ReportWarning(code=WarningCode.GPUS_IGNORED, message=ignored) if asked else None
    if asked is None:
        if policy is GpuPolicy.REQUIRED:
            raise UsageError("This exercise needs a GPU and none was requested: it is graded only with --gpus.",
                             hint="Pass --gpus all (or --gpus 1) on a machine with an NVIDIA GPU.")
        return None, ReportWarning(code=WarningCode.NO_GPUS,
                                   message="no --gpus given: checks that need a GPU are skipped")
    return asked, None


# ---------------------------------------------------------------- what a backend can do


@dataclass(frozen=True)
class DockerGpuCapabilities:
    """What the Docker sandbox can do about a GPU here (measured by ``gpu_probe.docker_capabilities``)."""

    engine: bool  # a Docker engine answered
    cuda_image: str  # the CUDA image's name (grader-runtime-cuda:<hash>)
    cuda_image_built: bool
    host_gpus: int | None  # GPUs `nvidia-smi -L` lists on this machine; None: cannot tell (a remote engine)
    host_note: str = ""  # why none or unknown, in words ("nvidia-smi is not installed")
    nvidia_runtime: bool | None = None  # the NVIDIA Container Toolkit is registered; None: cannot tell


@dataclass(frozen=True)
class LocalGpuCapabilities:
    """What the local sandbox can do: what its Python's torch sees, asked with the worker's environment
    (measured by ``gpu_probe.local_capabilities``)."""

    torch_version: str | None  # None: torch did not import (``error`` says why)
    cuda_version: str | None  # torch.version.cuda; None for a CPU build
    devices: int  # torch.cuda.device_count() under the grader's own CUDA_VISIBLE_DEVICES
    visible: str | None = None  # the grader's CUDA_VISIBLE_DEVICES (None: unset, every device)
    ld_library_path: str | None = None  # the grader's LD_LIBRARY_PATH, passed on to a GPU worker
    error: str | None = None
    device_order: str | None = None  # the grader's CUDA_DEVICE_ORDER, which its CUDA_VISIBLE_DEVICES is read in


Capabilities = DockerGpuCapabilities | LocalGpuCapabilities


@dataclass(frozen=True)
class LocalGpuSetup:
    """How the local sandbox gives its worker a GPU: the environment passed on, and the memory limit that
    replaces the address-space limit (CUDA maps tens of GiB of address space it never touches, so ``cuInit``
    fails under RLIMIT_AS; a watchdog on resident memory, run by the judge, holds ``[limits] memory_mb``)."""

    env: dict[str, str] = field(default_factory=dict)

    def describe(self, memory_mb: int) -> str:
        """The report's line about it (said on every GPU grading in the local sandbox)."""
        passed = ", ".join(f"{k}={v}" if k != "LD_LIBRARY_PATH" else k for k, v in sorted(self.env.items()))
        return (f"local sandbox with a GPU: the address-space limit (RLIMIT_AS) is off, since CUDA cannot start "
                f"under it; a watchdog on resident memory holds the {memory_mb} MB limit instead; passed on to the "
                f"worker: {passed or 'nothing'}")


@dataclass(frozen=True)
class GpuPlan:
    request: GpuRequest | None
    warning: str | None = None
    local: LocalGpuSetup | None = None  # the local sandbox's set-up for a GPU grading


#: Said under every refusal made because no GPU is to be had here.
_NO_GPU_HINT = ("Grade on a machine where `nvidia-smi` lists an NVIDIA GPU. An exercise whose gpu policy is "
                "\"optional\" can be graded without --gpus (its GPU checks then skip); a \"required\" one cannot.")


def plan_gpus(policy: GpuPolicy, request: GpuRequest | None, capabilities: Capabilities | None) -> GpuPlan:
    """The GPU plan of a grading: ``request`` as :func:`gpu_request` made it, ``capabilities`` those of the
    sandbox chosen (None only when there is no request). Raises ``InfraError`` (not graded, exit 3) naming
    what is missing when the sandbox cannot give what was asked for; never drops a request."""
    if request is None or policy is GpuPolicy.NONE:
        if policy is GpuPolicy.REQUIRED:
            raise UsageError("This exercise needs a GPU and none was requested: it is graded only with --gpus.",
                             hint="Pass --gpus all (or --gpus 1) on a machine with an NVIDIA GPU.")
        return GpuPlan(None)
    if isinstance(capabilities, DockerGpuCapabilities):
        refuse_docker(request, capabilities)
        return GpuPlan(request)
    if isinstance(capabilities, LocalGpuCapabilities):
        return GpuPlan(request, local=LocalGpuSetup(env=local_gpu_env(request, capabilities)))
    raise TypeError(f"plan_gpus needs the sandbox's capabilities for a request ({request}), got {capabilities!r}")


def refuse_docker(request: GpuRequest, caps: DockerGpuCapabilities, *, auto: bool = False) -> None:
    """Raise the first reason the Docker sandbox cannot give ``request`` (the missing GPU first: that is the one
    no command fixes). ``auto``: the user did not choose Docker, so the hint also offers ``--sandbox local``."""
    local = (" Or grade with `--sandbox local`: this machine's own Python and GPU, NOT isolated."
             if auto else "")
    if caps.host_gpus == 0:
        raise InfraError(f"--gpus {request} asked for a GPU, and this machine has none: {caps.host_note}.",
                         hint=_NO_GPU_HINT)
    if not caps.engine:
        raise InfraError(f"--gpus {request} asked for a GPU, and no Docker engine answered: gradings with GPUs run "
                         "in Docker's CUDA image, and never fall back to the local sandbox by themselves.",
                         hint="Start Docker with the NVIDIA Container Toolkit and build the CUDA image "
                              f"(`grader sandbox build --cuda`).{local}")
    if not caps.cuda_image_built:
        raise InfraError(f"GPUs were requested, and gradings with GPUs run in the CUDA image {caps.cuda_image}, "
                         "which is not built.",
                         hint="Run `grader sandbox build --cuda` (downloads the CUDA build of torch and its nvidia-* "
                              f"wheels, several GB), then grade again.{local}")
    if caps.nvidia_runtime is False:
        raise InfraError("Docker cannot give the sandbox a GPU: the NVIDIA Container Toolkit is not installed or not "
                         "registered with this Docker engine.",
                         hint="Install nvidia-container-toolkit, run `nvidia-ctk runtime configure --runtime=docker`, "
                              f"restart dockerd, and check with `docker run --rm --gpus all IMAGE nvidia-smi`.{local}")


def local_gpu_env(request: GpuRequest, caps: LocalGpuCapabilities) -> dict[str, str]:
    """What the local worker is given for ``request``, or ``InfraError`` saying why it cannot be met.

    ``LD_LIBRARY_PATH`` as the grader has it (where a driver outside the linker's default path is
    found); ``CUDA_VISIBLE_DEVICES`` naming exactly the devices asked for, counted within those the
    grader itself may use; ``CUDA_DEVICE_ORDER=PCI_BUS_ID``, so ``device=N`` means what ``nvidia-smi``
    and ``docker run --gpus`` call GPU N (CUDA's own default order puts the fastest first);
    ``CUDA_CACHE_DISABLE=1``: the driver's JIT cache would write to the worker's home, where
    the file-size limit (``[limits] fsize_mb``) could kill it mid-write."""
    asked = f"--gpus {request}"
    if caps.torch_version is None:
        raise InfraError(f"{asked} asked for a GPU, and the local sandbox's Python cannot import torch: "
                         f"{caps.error or 'no reason given'}.")
    if caps.cuda_version is None:
        raise InfraError(f"{asked} asked for a GPU, and the local sandbox runs this Python's torch "
                         f"{caps.torch_version}, a CPU build: no GPU can reach it.",
                         hint="Install a CUDA build of torch in this environment, or grade in Docker's CUDA image "
                              "(`grader sandbox build --cuda`, then --sandbox docker). " + _NO_GPU_HINT)
    if caps.devices < 1:
        seen = f" (CUDA_VISIBLE_DEVICES={caps.visible!r})" if caps.visible is not None else ""
        raise InfraError(f"{asked} asked for a GPU, and the local sandbox's torch {caps.torch_version} (CUDA "
                         f"{caps.cuda_version}) sees none{seen}" + (f": {caps.error}" if caps.error else "."),
                         hint="Check that `nvidia-smi` lists a GPU and that its driver's libraries are found "
                              "(LD_LIBRARY_PATH). " + _NO_GPU_HINT)
    parent = [d for d in (caps.visible or "").split(",") if d.strip()] if caps.visible is not None else None
    if request.device_ids:
        if parent is not None and not set(request.device_ids) <= set(parent):
            raise InfraError(f"{asked}: the grader runs with CUDA_VISIBLE_DEVICES={caps.visible}, which does not "
                             f"include device {', '.join(d for d in request.device_ids if d not in parent)}.")
        if parent is None and max(int(d) for d in request.device_ids) >= caps.devices:
            raise InfraError(f"{asked}: this machine's torch sees {caps.devices} GPU(s), numbered from 0.")
        visible = ",".join(request.device_ids)
    elif request.count > caps.devices:
        raise InfraError(f"{asked} asked for {request.count} GPUs, and the local sandbox sees {caps.devices}.")
    elif request.count == -1:
        visible = caps.visible if parent is not None else ",".join(str(i) for i in range(caps.devices))
    else:
        visible = ",".join((parent or [str(i) for i in range(caps.devices)])[:request.count])
    env = {"CUDA_VISIBLE_DEVICES": visible, "CUDA_CACHE_DISABLE": "1"}
    if parent is None:  # ids are this machine's, as nvidia-smi numbers them
        env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
    elif caps.device_order:  # the grader's own CUDA_VISIBLE_DEVICES means what its order says
        env["CUDA_DEVICE_ORDER"] = caps.device_order
    if caps.ld_library_path:
        env["LD_LIBRARY_PATH"] = caps.ld_library_path
    return env


# ---------------------------------------------------------------- the sandbox's own word, once it runs


def version_from_hello(value: object) -> str | None:
    """A version the sandbox's hello reports (``torch.version.cuda``, ``torch.__version__``), as short
    printable text or None: the hello comes from inside the sandbox, so its shape is not trusted."""
    if not isinstance(value, str):
        return None
    text = "".join(c for c in value[:40] if c.isprintable())
    return text or None


def gpu_skip_reason(policy: GpuPolicy, sandbox_gpus: int, *, requested: bool = False,
                    cuda_version: str | None = None, torch_version: str | None = None) -> str | None:
    """Why a ``gpu``-marked check cannot run in a sandbox seeing ``sandbox_gpus`` GPUs (None: it runs).

    It skips only where no GPU was asked for (an optional exercise graded without --gpus).
    A sandbox that was asked for one (``requested``) and sees none, and a required exercise's
    sandbox, is an infrastructure failure: the request was not met, so nothing is scored.
    ``cuda_version`` (the sandbox's ``torch.version.cuda``, from its hello) tells the two ways
    of seeing none apart: a CPU build of torch, and a CUDA build given no device.
    """
    if sandbox_gpus > 0:
        return None
    detail = _why_none(cuda_version, torch_version)
    if requested or policy is GpuPolicy.REQUIRED:
        raise InfraError(f"A GPU was requested but the sandbox sees none{detail}.",
                         hint="Grade on a host where `nvidia-smi` lists a GPU: in Docker with the NVIDIA Container "
                              "Toolkit and the CUDA image (`grader sandbox build --cuda`), or with --sandbox local "
                              "and a CUDA build of torch.")
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
