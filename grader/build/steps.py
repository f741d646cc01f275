"""What every build step shares: a command run with its output's tail named on failure, and the engine asked.

Every failure is an ``InfraError`` that names the step and shows the tail of its output.
"""

from __future__ import annotations

import os
import subprocess
from typing import Callable, Iterable

import docker

from grader.errors import InfraError

Log = Callable[[str], None]


def tail(lines: Iterable[str], n: int = 25) -> str:
    return "\n".join(list(lines)[-n:])


def run_step(step: str, cmd: list[str], *, timeout: float, env: dict[str, str] | None = None) -> str:
    """Run ``cmd``; on failure raise InfraError naming ``step`` with the tail of its output."""
    try:
        proc = subprocess.run(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout, env=env
        )
    except FileNotFoundError as exc:
        raise InfraError(f"Step '{step}' failed: {cmd[0]} is not installed ({exc}).") from exc
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout if isinstance(exc.stdout, str) else (exc.stdout or b"").decode(errors="replace")
        raise InfraError(
            f"Step '{step}' did not finish within {timeout:.0f} s.\n"
            f"--- last output ---\n{tail(out.splitlines())}"
        ) from exc
    if proc.returncode != 0:
        raise InfraError(
            f"Step '{step}' failed (exit status {proc.returncode}): {' '.join(cmd)}\n"
            f"--- last output ---\n{tail(proc.stdout.splitlines())}"
        )
    return proc.stdout


def engine_arch(client: docker.DockerClient) -> str:
    """The engine's CPU architecture, in wheel-tag spelling (x86_64, aarch64)."""
    try:
        arch = client.version().get("Arch", "")
    except (docker.errors.DockerException, OSError) as exc:
        raise InfraError(f"Could not ask the Docker engine for its version: {exc}") from exc
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(arch, arch or os.uname().machine)


def image_exists(client: docker.DockerClient, name: str) -> bool:
    try:
        client.images.get(name)
        return True
    except docker.errors.ImageNotFound:
        return False
    except (docker.errors.DockerException, OSError) as exc:
        raise InfraError(f"Could not ask the Docker engine for image {name}: {exc}") from exc
