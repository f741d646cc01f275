"""The connection to the Docker engine (judge side).

Every Docker-backed part of the grader gets its client from :func:`connect`, so a
missing or stopped engine is always reported the same way: an ``InfraError``
("not graded, rerun") that says how to start one.
"""

from __future__ import annotations

import os
from pathlib import Path

import docker

from grader.errors import InfraError

#: Printed under every "no engine" error.
ENGINE_HINT = (
    "Start the Docker engine: run `bash sandbox/bootstrap.sh` as root (installs "
    "docker.io if needed, starts dockerd, builds the runtime image), or start it "
    "yourself with `dockerd >/var/log/grader-dockerd.log 2>&1 &` and wait until "
    "`docker info` answers."
)

_DEFAULT_SOCKET = Path("/var/run/docker.sock")


def where() -> str:
    """The engine address the Docker SDK connects to, as messages name it."""
    return os.environ.get("DOCKER_HOST") or f"unix://{_DEFAULT_SOCKET}"


def connect(timeout: float = 60) -> docker.DockerClient:
    """A client for the engine named by the environment (``DOCKER_HOST`` or the default socket).

    ``timeout`` is the client's HTTP timeout in seconds, for the ping here and for
    every later request made through this client. Raises ``InfraError`` when the
    engine cannot be reached or does not answer the ping.
    """
    client = None
    try:
        client = docker.from_env(version="auto", timeout=int(max(1, timeout)))
        if not client.ping():
            raise docker.errors.DockerException("the engine did not answer the ping")
        return client
    except docker.errors.DockerException as exc:
        detail = str(exc)
    except Exception as exc:  # requests' connection errors, socket errors, ...
        detail = f"{type(exc).__name__}: {exc}"
    if client is not None:
        try:
            client.close()
        except Exception:
            pass
    hint = ENGINE_HINT
    if "Permission denied" in detail or "PermissionError" in detail:
        hint = (
            f"This user may not use {where()}. Run as root, or add the user to the "
            "`docker` group (`usermod -aG docker $USER`, then log in again)."
        )
    raise InfraError(f"No Docker engine at {where()}: {detail}", hint=hint)


def engine_available(timeout: float = 3) -> bool:
    """Whether an engine answers a ping within about ``timeout`` seconds. Never raises."""
    try:
        if not os.environ.get("DOCKER_HOST") and not _DEFAULT_SOCKET.exists():
            return False
        client = docker.from_env(version="auto", timeout=int(max(1, timeout)))
        try:
            return bool(client.ping())
        finally:
            client.close()
    except Exception:
        return False
