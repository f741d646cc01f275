"""The warm judge's server: import torch, pytest and hypothesis once, fork a judge per request.

Run as ``python -m grader.host.zygote`` by :mod:`grader.host.warm`, never by hand. It reads one
request per line on stdin (``grader.host.warm_wire``: a judge run, or a submission's subset check) and
answers ``Forked`` when a child is forked and ``Ended`` when it ends. Single-threaded,
so forking is safe; it exits when stdin closes, and its children get SIGKILL when it exits, so no
judge outlives either. Why not ``multiprocessing``'s forkserver: docs/decisions/warm-judge.md.
"""

from __future__ import annotations

import gc
import importlib
import os
import selectors
import signal
import sys

from grader.host import warm_wire

#: Imported once here; a judge that needs anything else imports it itself. Besides the obvious,
#: this is what a judge run was measured to import: torch's lazily loaded parts (sympy alone is
#: 400 modules), and the Docker SDK with requests.
PRELOAD = ("torch", "numpy", "pytest", "hypothesis", "safetensors.torch", "sympy", "torch.fx", "torch.distributed",
           "torch.testing", "docker", "grader.judge.plugin", "grader.judge.expect", "grader.judge.calls",
           "grader.backends.factory", "grader.backends.docker_backend", "grader.backends.local_backend",
           "grader.subset.audit")


def serve() -> None:
    replies = os.dup(1)  # stdout is the reply channel; anything a module prints goes nowhere
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 1)
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception:  # the judge will import it again and report the failure properly
            pass
    gc.collect()
    gc.freeze()  # what is loaded now is permanent: a judge's collections skip it and never copy its pages
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_w)
    selector = selectors.DefaultSelector()
    selector.register(0, selectors.EVENT_READ)
    selector.register(wake_r, selectors.EVENT_READ)
    children: dict[int, str] = {}
    pending = b""
    while True:
        for key, _ in selector.select():
            if key.fd == wake_r:
                os.read(wake_r, 4096)
                _reap(children, replies)
                continue
            chunk = os.read(0, 65536)
            if not chunk:
                return  # the grader is gone; our children die with us (PR_SET_PDEATHSIG)
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                request = warm_wire.REQUEST.validate_json(line)
                pid = os.fork()
                if pid == 0:
                    for fd in (replies, wake_r, wake_w):
                        os.close(fd)
                    _child(request)
                children[pid] = request.id
                _reply(replies, warm_wire.Forked(id=request.id, pid=pid))
        _reap(children, replies)


def _reap(children: dict[int, str], replies: int) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        if pid in children:
            _reply(replies, warm_wire.Ended(id=children.pop(pid), exit=os.waitstatus_to_exitcode(status)))


def _reply(fd: int, message: warm_wire.Forked | warm_wire.Ended) -> None:
    os.write(fd, warm_wire.line(message))


def _one_thread() -> None:
    """A judge's reference tensors are small, and a batch runs one judge per core already:
    torch's default of one thread per core only adds threads that spin waiting for work."""
    try:
        import torch

        torch.set_num_threads(1)
    except Exception:
        pass


def _child(request: warm_wire.JudgeRun | warm_wire.AuditRun) -> None:  # the forked child; never returns
    code, task = 1, request.kind
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.setsid()
        from grader.host.warm import die_with_parent

        die_with_parent()
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # stdin was the request pipe
        log = os.open(request.log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(log, 1)
        os.dup2(log, 2)
        code = _audit(request) if isinstance(request, warm_wire.AuditRun) else _judge(request)
    except BaseException as e:  # noqa: BLE001 - reported in the log; the caller sees no outcome or answer
        print(f"grader {task} failed: {e!r}", file=sys.stderr)
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _judge(request: warm_wire.JudgeRun) -> int:
    """One judge run, in the grader's environment of now (``warm.judge_environment``), not the server's."""
    os.chdir(request.cwd)
    os.environ.clear()
    os.environ.update(request.env)
    _one_thread()
    import pytest

    return int(pytest.main(request.argv))


def _audit(request: warm_wire.AuditRun) -> int:
    """One subset check: the request read from ``input``, the ``SourceAudit`` written to ``out`` as JSON."""
    from grader.subset.audit import AUDIT_JSON, AuditRequest

    with open(request.input, encoding="utf-8") as f:
        audit = AuditRequest.model_validate_json(f.read()).run()
    with open(request.out, "wb") as f:
        f.write(AUDIT_JSON.dump_json(audit))
    return 0


if __name__ == "__main__":
    serve()
