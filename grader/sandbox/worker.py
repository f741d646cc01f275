"""A worker: it answers ``call`` frames by running a probe, which imports the candidate's module. INSIDE the sandbox.

It sends back plain data and never decides pass or fail. :func:`prepare` is what every worker
of a sandbox shares, done once in the worker server (``grader.sandbox.worker_server``) before it
forks one: torch imported, the exercise's forbidden APIs removed (``grader.sandbox.removal``; what
was called of them goes back with each result as indices the judge names), no new program
(``grader.sandbox.no_exec``). A forked worker speaks on a pipe to the server; its file descriptors
1 and 2 point at a capture file, read back, capped, after every call. Standard library, torch and
the staged files only: it runs from a read-only copy in a bare runtime image.
"""

from __future__ import annotations

import argparse
import importlib
import linecache
import os
import signal
import sys
import threading
import time
import traceback

from grader.wire import protocol
from grader.sandbox import no_exec, removal

OUTPUT_CAP = 8000  # characters of candidate output sent back per call


class Capture:
    """Points fds 1 and 2 at an append-only file and hands back what was written since last time."""

    def __init__(self, directory: str):
        self.path = os.path.join(directory, f"grader-output-{os.getpid()}.txt")
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC, 0o600)
        os.dup2(self.fd, 1)
        os.dup2(self.fd, 2)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        for stream in (sys.stdout, sys.stderr):  # keep prints in order with raw fd writes
            stream.reconfigure(line_buffering=True, write_through=True)

    def take(self) -> tuple[str, int]:
        """Output since the last call (capped) and how many characters were dropped."""
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        try:
            size = os.fstat(self.fd).st_size
            data = _read_from_start(self.fd, OUTPUT_CAP * 4)
            os.ftruncate(self.fd, 0)
        except OSError as e:
            return f"[grader: could not read candidate output: {e}]", 0
        text = data.decode("utf-8", "replace")
        kept = text[:OUTPUT_CAP]
        return kept, max(0, size - len(kept.encode("utf-8", "replace")))


def _read_from_start(fd: int, n: int) -> bytes:
    if hasattr(os, "pread"):
        return os.pread(fd, n, 0)
    os.lseek(fd, 0, os.SEEK_SET)  # Windows: no pread; appends still go to the end (O_APPEND)
    return os.read(fd, n)


def apply_rlimits(specs: list[str]) -> dict:
    """Put ``RLIMIT_NAME=SOFT:HARD`` limits on this very process (children inherit them).

    Called first, before torch or any candidate code is imported. A limit the OS
    refuses (soft above hard, above what this user may raise, no ``resource``
    module on Windows) is recorded for the hello frame, not fatal: the judge
    reports it, and the wall-clock deadlines still hold.
    """
    applied, failed = [], {}
    try:
        import resource
    except ImportError:
        resource = None
    for spec in specs:
        name, _, value = spec.partition("=")
        which = getattr(resource, name, None) if resource is not None and name.startswith("RLIMIT_") else None
        if which is None:  # the reason is a word the judge words (grader.wire.selfreport.LIMIT_REFUSALS)
            failed[name] = "unsupported" if resource is None else "unknown"
            continue
        try:
            soft, hard = (int(v) for v in value.split(":"))
            resource.setrlimit(which, (soft, hard))
        except (ValueError, OSError):
            failed[name] = "refused"
        else:
            applied.append(name)
    return {"rlimits_applied": applied, "rlimits_failed": failed}


#: Frames an error record keeps (the innermost: a deep recursion keeps its end); the judge accepts no more.
MAX_FRAMES = 100


def _trace(exc: BaseException, keep_dirs: tuple[str, ...]) -> dict:
    """The traceback as data, without the worker's own frames: each kept frame's fields, and the exception's
    own lines. The judge formats it, and decides which frames are the candidate's."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(keep_dirs)]
    return {"frames": [{"file": f.filename[-1000:], "line": f.lineno or 0, "function": f.name[:300],
                        "source": linecache.getline(f.filename, f.lineno or 0)[:2000], "end_line": f.end_lineno,
                        "column": f.colno, "end_column": f.end_colno} for f in frames[-MAX_FRAMES:]],
            "exception": "".join(traceback.format_exception_only(type(exc), exc))[-6000:]}


def _error(exc: BaseException, keep_dirs) -> dict:
    try:
        message = str(exc)[:2000]
    except BaseException:
        message = "<str() of the exception raised>"
    return {
        "type": type(exc).__name__,
        "qualnames": [c.__name__ for c in type(exc).__mro__][:20],
        "builtin": type(exc).__module__ == "builtins",
        "message": message,
        "trace": _trace(exc, keep_dirs),
    }


class Worker:
    def __init__(self, args, send, capture: Capture, forbidden: removal.Removal):
        self.args = args
        self.send = send
        self.capture = capture
        self.forbidden = forbidden
        self.probes = None
        self.keep_dirs = (os.path.abspath(args.submission_dir), os.path.dirname(os.path.abspath(args.probes)))

    def load_probes(self):
        if self.probes is None:
            self.send({"type": protocol.Kind.IMPORTING})
            # Both folders go on sys.path, so `probes` and the candidate's module import by
            # name in processes the probes start themselves (spawned DDP ranks, DataLoader workers).
            # The judge's loader (subset/<module>.py, beside the submission) stands in for the file: it
            # runs it under the subset's guard (grader.sandbox.restricted).
            submission = os.path.abspath(self.args.submission_dir)
            loader = os.path.join(os.path.dirname(submission), "subset")
            sys.path[:0] = [os.path.dirname(os.path.abspath(self.args.probes)),
                            loader if os.path.isdir(loader) else submission]
            self.probes = importlib.import_module("probes")
            self.send({"type": protocol.Kind.IMPORTED})
        return self.probes

    def handle_call(self, message: dict) -> dict:
        reply = {"type": protocol.Kind.RESULT, "id": message.get("id")}
        started = time.perf_counter()
        try:
            probes = self.load_probes()
            fn = getattr(probes, message["probe"], None)
            if fn is None or message["probe"].startswith("_") or not callable(fn):
                raise LookupError(f"probes.py defines no probe {message['probe']!r}")
            value = fn(*message.get("args", []), **message.get("kwargs", {}))
            reply.update(ok=True, value=value)
        except BaseException as exc:  # SystemExit and KeyboardInterrupt from candidate code too
            reply.update(ok=False, error=_error(exc, self.keep_dirs))
        reply["duration_s"] = time.perf_counter() - started
        reply["output"], reply["output_dropped"] = self.capture.take()
        reply["forbidden"] = self.forbidden.take()  # indices into the judge's list: the judge names them
        return reply

    def serve(self, read) -> None:
        while True:
            try:
                message = protocol.read_frame(read)
            except EOFError:
                return
            kind = message.get("type")
            if kind == protocol.Kind.SHUTDOWN:
                return
            if kind == protocol.Kind.WARM:  # a spare, before any call: see warm_up
                warm_up()
                self.send({"type": protocol.Kind.WARMED})
                continue
            if kind != protocol.Kind.CALL:
                raise protocol.ProtocolError(f"worker got an unexpected {kind!r} message")
            reply = self.handle_call(message)
            try:
                self.send(reply, strict=False)
            except protocol.ProtocolError as e:  # e.g. a result too large or too deep
                self.send({"type": protocol.Kind.RESULT, "id": message.get("id"), "ok": False, "duration_s": reply["duration_s"],
                           "output": reply["output"], "output_dropped": reply["output_dropped"],
                           "forbidden": reply["forbidden"],
                           "error": {"type": "ResultNotSendable", "qualnames": ["ResultNotSendable"],
                                     "builtin": False, "message": str(e),
                                     "trace": {"frames": [], "exception": ""}}})


def warm_up() -> None:
    """What a spare pays before it is taken into service, so it is not charged to a call.

    A spare replaces a lost worker, and the calls after a timeout run under the shortened
    deadline (``grader.backends.deadlines``): torch's optimizers import ``torch._dynamo`` on
    their first step, 1.8 CPU-seconds that would cut an honest call there. The first worker
    of a grading is not warmed: its calls have the full deadline. A warm-up that fails only
    costs that time later (a call that needs the module meets the same error as its own).
    """
    try:
        import torch._dynamo  # noqa: F401
    except Exception:
        pass


def parser() -> argparse.ArgumentParser:
    """The command line a sandbox's worker server takes (``grader.sandbox.worker_server``)."""
    parser = argparse.ArgumentParser(prog="grader-worker-server")
    parser.add_argument("--probes", required=True)
    parser.add_argument("--submission-dir", required=True)
    parser.add_argument("--forbid", action="append", default=[])
    parser.add_argument("--kernel", action="append", default=[], help="API=PATTERN: a kernel that stands for API")
    parser.add_argument("--rlimit", action="append", default=[], help="RLIMIT_NAME=SOFT:HARD (repeatable)")
    parser.add_argument("--output-dir", default=os.environ.get("TMPDIR", "/tmp"))
    parser.add_argument("--forkserver", action="store_true",
                        help="start the probes' forkserver before no new program may start (DDP ranks)")
    parser.add_argument("--greet", action="store_true",
                        help="started ahead of its judge: say hello only once asked (a greet frame)")
    parser.add_argument("--max-frame-bytes", type=int, default=protocol.MAX_FRAME_BYTES,
                        help="the largest frame a worker may send (the exercise's [limits] result_mb)")
    parser.add_argument("--lifetime-s", type=int, default=0, help="end after this long (0: never)")
    parser.add_argument("--one-worker", action="store_true",
                        help="be the one worker yourself (a platform without fork): a fresh one is a new server")
    return parser


def _exit_with_the_judge(poll_s: float = 0.5) -> None:
    """End this worker when the process that started it dies.

    A judge can be killed outright (Ctrl-C, the grading's deadline). A local worker
    runs in its own session, so the kill does not reach it, and one busy in a
    candidate's call never reads the end of its input: it would live on. This
    watch is a second net (the candidate's code can stop it); the first is the
    judge's own cleanup and, for Docker, the reaper that removes a grading's containers.
    """
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_s)
        os._exit(0)

    threading.Thread(target=watch, name="grader-judge-watch", daemon=True).start()


def prepare(args, rlimits: dict) -> tuple[removal.Removal, dict]:
    """What every worker of this sandbox shares, done once before the first is forked: torch imported, the
    forbidden APIs removed, the probes' forkserver started if asked, no new program; and the hello that says so."""
    import torch

    kernels: dict[str, list[str]] = {}
    for spec in args.kernel:
        api, _, pattern = spec.partition("=")
        kernels.setdefault(api, []).append(pattern)
    # Before the probes (and through them the candidate's module) are imported: see grader.sandbox.removal.
    forbidden = removal.install(args.forbid, kernels, candidate_dirs=[args.submission_dir])
    if args.forkserver:  # its server seals itself too (grader.sandbox.sealed) before it forks a rank
        from grader.sandbox import forkserver

        forkserver.start()
    sealed = no_exec.install() == "installed"
    return forbidden, {
        "type": protocol.Kind.HELLO,
        "torch": str(torch.__version__),
        "python": sys.version.split()[0],
        "cuda": bool(torch.cuda.is_available()),
        "cuda_version": torch.version.cuda,  # None for a CPU build of torch
        "gpus": torch.cuda.device_count() if torch.cuda.is_available() else 0,
        "forbidden_missing": forbidden.missing,
        "forbidden_packages": forbidden.packages,
        **rlimits,
        "no_exec": sealed,
    }


if __name__ == "__mp_main__":
    # A process multiprocessing started from the worker (spawn, forkserver: the DDP ranks)
    # imports this module under that name before it unpickles anything of the probes or the
    # candidate's: the forbidden APIs are removed there too, from the plan the worker published.
    removal.install_inherited()
