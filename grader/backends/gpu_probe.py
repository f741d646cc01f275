"""Measure what this machine's sandboxes can do about a GPU, for :func:`grader.backends.gpu.plan_gpus`.

Only gradings that ask for a GPU pay for this (``nvidia-smi -L``, and for the local sandbox one Python
that imports torch); each answer is kept for the process. The local sandbox's answer comes from a child
Python started as its worker would be (same interpreter, ``-P`` in a folder of its own, a GPU worker's
environment, no address-space limit): asking torch in the grader's own process would start CUDA in a
process that later forks judges, and would answer for a Python that may not be the worker's.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import replace

from grader.child_python import python_argv
from grader.backends.gpu import DockerGpuCapabilities, LocalGpuCapabilities

#: Run in the child: what torch sees. Printed as one JSON line; anything else it prints is ignored.
_ASK_TORCH = """
import json
try:
    import torch
except BaseException as e:
    print(json.dumps({"error": f"{type(e).__name__}: {e}"[:300]}))
    raise SystemExit(0)
out = {"torch": torch.__version__, "cuda": torch.version.cuda, "devices": 0}
if torch.version.cuda is not None:
    try:
        out["devices"] = torch.cuda.device_count() if torch.cuda.is_available() else 0
    except BaseException as e:
        out["error"] = f"{type(e).__name__}: {e}"[:300]
print(json.dumps(out))
"""

#: Where the NVIDIA Container Toolkit's hook lives when it is installed (dockerd looks it up on its PATH).
_HOOK = "nvidia-container-runtime-hook"


def host_gpus() -> tuple[int | None, str]:
    """How many GPUs ``nvidia-smi -L`` lists on this machine, and, when none, why, in words."""
    return _host_gpus()


@functools.lru_cache(maxsize=1)
def _host_gpus() -> tuple[int | None, str]:
    if shutil.which("nvidia-smi") is None:
        return 0, "`nvidia-smi` is not installed (no NVIDIA driver)"
    try:
        done = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as e:
        return 0, f"`nvidia-smi -L` failed ({type(e).__name__})"
    listed = sum(1 for line in done.stdout.splitlines() if line.startswith("GPU "))
    if listed == 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        return 0, "`nvidia-smi -L` lists no GPU" + (f" ({said[0][:200]})" if said else "")
    return listed, ""


def local_engine() -> bool:
    """Whether the Docker engine is on this machine (a unix socket), so that ``nvidia-smi`` here speaks for it."""
    where = os.environ.get("DOCKER_HOST", "")
    return not where or where.startswith("unix://")


def docker_capabilities(*, engine: bool, cuda_image: str, cuda_image_built: bool,
                        runtimes: dict | None = None) -> DockerGpuCapabilities:
    """The Docker sandbox's GPU capabilities: what the caller found out about the engine and the CUDA image,
    and what this machine says about its GPUs and the NVIDIA Container Toolkit."""
    if local_engine():
        gpus, note = host_gpus()
    else:
        gpus, note = None, f"the engine at {os.environ.get('DOCKER_HOST')} is another machine's"
    toolkit: bool | None = None
    if runtimes is not None and "nvidia" in runtimes:
        toolkit = True
    elif runtimes is not None and local_engine() and not _hook_installed():
        toolkit = False
    return DockerGpuCapabilities(engine=engine, cuda_image=cuda_image, cuda_image_built=cuda_image_built,
                                 host_gpus=gpus, host_note=note, nvidia_runtime=toolkit)


def _hook_installed() -> bool:
    return shutil.which(_HOOK) is not None or any(os.path.exists(f"{d}/{_HOOK}") for d in ("/usr/bin", "/usr/local/bin"))


def local_capabilities(python: str | None = None) -> LocalGpuCapabilities:
    """What the local sandbox's Python (default: this one) sees of CUDA, asked in a child process."""
    python = python or sys.executable
    caps = _local_capabilities(python, os.environ.get("LD_LIBRARY_PATH"), os.environ.get("CUDA_VISIBLE_DEVICES"))
    return replace(caps, device_order=os.environ.get("CUDA_DEVICE_ORDER"))


@functools.lru_cache(maxsize=8)
def _local_capabilities(python: str, ld_library_path: str | None, visible: str | None) -> LocalGpuCapabilities:
    # The worker's environment, as far as torch is concerned: no PYTHONPATH of the grader's (the worker's is its
    # staged folder), so torch is found where the worker finds it.
    env = {"PATH": os.environ.get("PATH", os.defpath), "PYTHONDONTWRITEBYTECODE": "1"}
    for name, value in (("LD_LIBRARY_PATH", ld_library_path), ("CUDA_VISIBLE_DEVICES", visible),
                        ("SYSTEMROOT", os.environ.get("SYSTEMROOT"))):
        if value is not None:
            env[name] = value
    with tempfile.TemporaryDirectory(prefix="grader-gpu-probe-") as home:
        env["HOME"] = env["TMPDIR"] = home
        try:
            done = subprocess.run(python_argv(python, "-s", "-B", "-c", _ASK_TORCH), capture_output=True,
                                  text=True, timeout=180, cwd=home, env=env)
        except (OSError, subprocess.SubprocessError) as e:
            return LocalGpuCapabilities(None, None, 0, visible, ld_library_path, error=f"{type(e).__name__}: {e}")
    return read_answer(done.stdout, done.returncode, visible=visible, ld_library_path=ld_library_path)


def read_answer(stdout: str, returncode: int, *, visible: str | None, ld_library_path: str | None) -> LocalGpuCapabilities:
    """The child's JSON line as capabilities (its last line that parses; a child that printed none failed)."""
    for line in reversed(stdout.splitlines()):
        try:
            said = json.loads(line)
        except ValueError:
            continue
        if isinstance(said, dict):
            torch_version = said.get("torch") if isinstance(said.get("torch"), str) else None
            cuda = said.get("cuda") if isinstance(said.get("cuda"), str) else None
            devices = said.get("devices") if isinstance(said.get("devices"), int) else 0
            error = said.get("error") if isinstance(said.get("error"), str) else None
            return LocalGpuCapabilities(torch_version, cuda, max(0, devices), visible, ld_library_path, error=error)
    return LocalGpuCapabilities(None, None, 0, visible, ld_library_path,
                                error=f"the Python that would run the worker exited with status {returncode} "
                                      "before saying what torch sees")


def measure_docker(image: str | None = None) -> DockerGpuCapabilities:
    """The Docker sandbox's GPU capabilities now: does an engine answer, is the CUDA image (or ``image``, when
    one is named) there, is the NVIDIA runtime registered, and what this machine's ``nvidia-smi`` lists."""
    from grader.errors import InfraError
    from grader.backends import engine
    from grader.build import naming
    from grader.wire.grant import Flavor

    name = image or naming.runtime_image_name(flavor=Flavor.CUDA)
    if not engine.engine_available():
        return docker_capabilities(engine=False, cuda_image=name, cuda_image_built=False)
    try:
        client = engine.connect(timeout=10)
    except InfraError:
        return docker_capabilities(engine=False, cuda_image=name, cuda_image_built=False)
    try:
        if image is None:
            try:
                built = naming.find_runtime_image(client, flavor=Flavor.CUDA) is not None
            except InfraError:  # the engine failed to answer: opening the sandbox will say what it says
                built = True
        else:
            built = _image_exists(client, image)
        try:
            runtimes = client.info().get("Runtimes") or {}
        except Exception:
            runtimes = None
        return docker_capabilities(engine=True, cuda_image=name, cuda_image_built=built, runtimes=runtimes)
    finally:
        client.close()


def _image_exists(client, name: str) -> bool:
    from docker.errors import DockerException, ImageNotFound

    try:
        client.images.get(name)
        return True
    except ImageNotFound:
        return False
    except (DockerException, OSError):
        return True  # not known to be missing: opening the sandbox will say what the engine says
