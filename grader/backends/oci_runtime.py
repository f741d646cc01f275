"""Which OCI runtime runs the Docker sandbox: runc (the default) or runsc (gVisor, a second wall).

runc isolates with namespaces, cgroups and capabilities over the host kernel.
runsc puts gVisor's user-space kernel between the candidate and the host, so a
kernel bug is no longer a way out; it costs time (torch imports in about 4.7 s
instead of 1.4 s). The choice is per run (``--runtime``) or per machine
(``GRADER_RUNTIME``), and every report records the runtime that graded it.
"""

from __future__ import annotations

import os

from grader.errors import InfraError, UsageError

RUNTIMES = ("runc", "runsc")
ENV_VAR = "GRADER_RUNTIME"
DEFAULT = "runc"
REGISTER_HINT = ("Run `bash sandbox/bootstrap.sh` as root: it installs runsc and registers it in "
                 "/etc/docker/daemon.json ({\"runtimes\": {\"runsc\": {\"path\": \"/usr/bin/runsc\"}}}), "
                 "then reloads dockerd (SIGHUP).")


def resolve_runtime(requested: str | None = None) -> str:
    """``requested``, else ``$GRADER_RUNTIME``, else runc; a name outside :data:`RUNTIMES` is a usage error."""
    name = requested or os.environ.get(ENV_VAR) or DEFAULT
    if name not in RUNTIMES:
        where = "--runtime" if requested else ENV_VAR
        raise UsageError(f"Unknown OCI runtime {name!r} (from {where}): choose one of {', '.join(RUNTIMES)}.")
    return name


def require_runtime(client, name: str, *, gpu: bool = False) -> None:
    """Raise ``InfraError`` (not graded, rerun) when the engine does not know runtime ``name``, or when
    ``gpu`` and that runtime cannot pass a GPU: gVisor does so only with ``--nvproxy``, and without it
    the container starts and sees no GPU, which would read as "the exercise's GPU checks skip"."""
    if name == DEFAULT:
        return
    known = (client.info() or {}).get("Runtimes") or {}
    if name not in known:
        raise InfraError(f"The Docker engine has no {name!r} runtime registered (it knows: "
                         f"{', '.join(sorted(known)) or 'none'}).", hint=REGISTER_HINT)
    if gpu and name == "runsc" and not _nvproxy_on((known.get(name) or {}).get("runtimeArgs") or []):
        raise InfraError("GPUs were requested under gVisor (runsc), but this engine registers runsc without "
                         "--nvproxy, so no GPU would reach the sandbox.", hint=NVPROXY_HINT)


NVPROXY_HINT = ('Register runsc with nvproxy in /etc/docker/daemon.json: {"runtimes": {"runsc": {"path": '
                '"/usr/bin/runsc", "runtimeArgs": ["--nvproxy"]}}}, then reload dockerd (SIGHUP); or grade '
                "GPU exercises with --runtime runc.")


def _nvproxy_on(args: list) -> bool:
    """Whether runsc's registered arguments turn nvproxy on (``--nvproxy`` or ``--nvproxy=true``)."""
    on = False
    for arg in args:
        flag, _, value = str(arg).partition("=")
        if flag.lstrip("-") == "nvproxy":
            on = value.lower() in ("", "true", "1")
    return on
