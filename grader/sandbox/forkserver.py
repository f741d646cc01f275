"""The probes' forkserver (``probekit.run_ranks``: DDP ranks): its context, and its start. INSIDE the sandbox.

The server imports torch once, so a rank starts in milliseconds. It must start before the
sandbox refuses new programs (``grader.sandbox.no_exec``), so the worker starts it first for an
exercise that sets ``[limits] forkserver = true``; its last preload, ``grader.sandbox.sealed``,
removes the forbidden APIs and installs the same filter in the server before it forks anything.
Standard library only: it is staged into the sandbox.
"""

from __future__ import annotations

import multiprocessing
from multiprocessing import forkserver

#: torch._dynamo: the first optimizer built in a process imports it (~2 s), once in the server; then the seal.
PRELOAD = ["torch", "torch.distributed", "torch._dynamo", "grader.sandbox.sealed"]


def context():
    """The forkserver context, its server to import :data:`PRELOAD` when it starts."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    return ctx


def start() -> None:
    """Start the server now, while programs may still start."""
    context()
    forkserver.ensure_running()


def adopt() -> None:
    """In a worker forked from the process that started the server: use that server as it is. (The stdlib would
    check it is alive with ``waitpid``, which only its parent may call, and could not start another: no new
    program may start.)"""
    server = forkserver._forkserver
    if server._forkserver_address is not None:
        server.ensure_running = lambda: None
