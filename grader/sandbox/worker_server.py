"""The sandbox's worker server: the one process the judge starts in a sandbox, forking a fresh worker on demand.

It prepares once (torch, the exercise's removals, no new program: ``worker.prepare``), then forks
workers: each a new process in its own process group, with a folder of its own for temporary files
and output, importing the probes and the candidate's module afresh. It relays whole frames between
the judge (its stdin and stdout) and the current worker (two pipes): a worker killed mid-frame loses
that frame and the judge hears ``lost``. On ``fresh`` it kills the worker, every process it started
and what it left behind, and forks the next in milliseconds. In a container it is PID 1, which
nothing inside can kill. Standard library, torch and the staged files only. INSIDE the sandbox.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import sys
import time

from grader.sandbox import removal, worker
from grader.wire import protocol

#: How often the loop wakes with nothing to read: to reap orphans (PID 1's duty) and notice a worker's end.
_TICK_S = 0.2
#: A worker's output and pipes read this much at a time.
_CHUNK = 1024 * 1024


class Server:
    def __init__(self, args, judge_in: int, judge_out: int, forbidden: removal.Removal, hello: dict):
        self.args, self.judge_in, self.judge_out = args, judge_in, judge_out
        self.forbidden, self.hello = forbidden, hello
        self.max_frame = min(args.max_frame_bytes, protocol.MAX_FRAME_BYTES)
        self.generation = 0
        self.pid = 0  # the current worker's (and its process group's) id; 0: none
        self.to_worker = self.from_worker = -1
        self.pending = bytearray()  # from the current worker: bytes of a frame not yet whole
        self.tmp_root = args.output_dir
        self.container = os.getpid() == 1  # PID 1 of its own namespace: every other process there is a worker's
        self.keep = set(os.listdir(self.tmp_root)) if self.container else set()
        self.own_pids = _children(everyone=self.container)  # its forkserver and resource tracker: never killed
        self.exited: dict[int, int] = {}  # children reaped, by pid: their wait status
        self.warm = False

    # ------------------------------------------------------------ workers

    def fork_worker(self) -> None:
        """Fork the next worker and tell the judge which it is, then its hello."""
        if self.generation and not self.warm:
            worker.warm_up()  # a replacement's calls may run under the shortened deadline: pay torch's lazy
            self.warm = True  # imports once, here, and every later worker is born with them
        self.generation += 1
        folder = os.path.join(self.tmp_root, f"grader-worker-{self.generation}")
        os.makedirs(folder, mode=0o700, exist_ok=True)
        to_r, to_w = os.pipe()
        from_r, from_w = os.pipe()
        pid = _fork()
        if pid == 0:
            try:
                os.close(to_w)
                os.close(from_r)
                _become_worker(self, to_r, from_w, folder)
            finally:
                os._exit(70)
        os.close(to_r)
        os.close(from_w)
        self.pid, self.to_worker, self.from_worker, self.pending = pid, to_w, from_r, bytearray()
        self.send_server({"type": "worker", "generation": self.generation})
        self.send_judge(protocol.encode({**self.hello, "generation": self.generation}))

    def end_worker(self, lost: dict | None) -> None:
        """Kill the current worker, everything it started, and remove what it left; ``lost``: tell the judge how
        it was lost (plain fields the judge words itself), None when the judge asked for its end."""
        if not self.pid:
            return
        pid, generation = self.pid, self.generation
        self.pid = 0
        for fd in (self.to_worker, self.from_worker):
            try:
                os.close(fd)
            except OSError:
                pass
        self.to_worker = self.from_worker = -1
        _kill_group(pid)
        # What the worker started, wherever it went (its own group or session): in a container every other
        # process is a worker's; elsewhere the server is their subreaper, so an orphan comes back to it.
        for other in _children(everyone=self.container) - self.own_pids:
            _kill_group(other)
        _empty(self.tmp_root, keep=self.keep)
        status = self.exited.pop(pid, None)
        if status is None:
            try:
                status = os.waitpid(pid, 0)[1]
            except ChildProcessError:
                status = None
        self.reap()
        if lost is not None:
            if status is not None and os.WIFSIGNALED(status):
                lost["signal"] = os.WTERMSIG(status)
            elif status is not None:
                lost["exit"] = os.waitstatus_to_exitcode(status)
            self.send_server({"type": "lost", "generation": generation, **lost})

    def reap(self) -> bool:
        """Reap every ended child (a zombie is PID 1's to collect); whether the current worker has ended."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            self.exited[pid] = status
        return bool(self.pid) and self.pid in self.exited

    # ------------------------------------------------------------ frames

    def send_judge(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.judge_out, view):]

    def send_server(self, message: dict) -> None:
        self.send_judge(protocol.encode(message, magic=protocol.SERVER_MAGIC))

    def read_judge(self, n: int) -> bytes:
        return os.read(self.judge_in, n)

    def from_judge(self) -> bool:
        """One frame from the judge: for the server, or relayed whole to the worker. False at the end."""
        try:
            magic, length = protocol.read_header(self.read_judge)
            payload = protocol.read_exactly(self.read_judge, length)
        except EOFError:
            return False
        if magic == protocol.SERVER_MAGIC:
            message = protocol.decode(payload)
            if message["type"] == "fresh":
                self.end_worker(None)
                self.fork_worker()
            elif message["type"] == "shutdown":
                return False
            return True
        if magic != protocol.MAGIC:
            raise protocol.ProtocolError("bad frame magic from the judge")
        if self.pid:
            try:
                _write_all(self.to_worker, protocol.frame_header(magic, length) + payload)
            except OSError:
                pass  # the worker is gone: its end is noticed and told on the next turn
        return True

    def from_current_worker(self) -> None:
        """What the worker wrote: whole frames go to the judge; a frame it cannot send is its loss."""
        try:
            data = os.read(self.from_worker, _CHUNK)
        except OSError:
            data = b""
        if not data:
            self.end_worker({"why": "ended", "midframe": bool(self.pending)})
            return
        self.pending += data
        while len(self.pending) >= 8:
            magic, length = protocol.read_header(_reader(self.pending))
            if magic != protocol.MAGIC:
                return self.end_worker({"why": "protocol"})
            if length > self.max_frame:
                return self.end_worker({"why": "too_large", "size": length})
            if len(self.pending) < 8 + length:
                return
            frame = bytes(self.pending[:8 + length])
            del self.pending[:8 + length]
            self.send_judge(frame)

    def serve(self) -> None:
        self.fork_worker()
        while True:
            ready = select.select([self.judge_in] + ([self.from_worker] if self.pid else []), [], [], _TICK_S)[0]
            if self.judge_in in ready and not self.from_judge():
                break
            if self.pid and self.from_worker in ready:
                self.from_current_worker()
            elif self.reap():  # ended, its pipe still open in a process it started
                self.end_worker({"why": "ended", "midframe": bool(self.pending)})
        self.end_worker(None)


def _become_worker(server: Server, read_fd: int, write_fd: int, folder: str) -> None:
    """In the forked child: a worker of its own process group, its own folder, born without the server's channels."""
    os.setpgid(0, 0)  # a group of its own, in the server's session (whose clocks the local sandbox reads)
    _prctl(4, 1)  # PR_SET_DUMPABLE: the worker's own /proc is its own again
    signal.signal(signal.SIGINT, signal.default_int_handler)  # a worker's signals are as a fresh Python's
    for caught in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(caught, signal.SIG_DFL)
    for fd in (server.judge_in, server.judge_out):
        os.close(fd)
    try:
        with open("/proc/self/oom_score_adj", "w") as f:  # under memory pressure, the kernel kills a worker first
            f.write("1000")
    except OSError:
        pass
    os.environ["TMPDIR"] = folder
    import tempfile

    tempfile.tempdir = folder
    capture = worker.Capture(folder)
    worker._exit_with_the_judge()  # the server gone, so is its worker
    if server.args.forkserver:
        from grader.sandbox import forkserver

        forkserver.adopt()

    def send(message, strict=True):
        _write_all(write_fd, protocol.encode(message, strict=strict))

    def read(n: int) -> bytes:
        return os.read(read_fd, n)

    try:
        worker.Worker(server.args, send, capture, server.forbidden).serve(read)
    except BaseException:
        os._exit(70)
    os._exit(0)  # no interpreter teardown: candidate atexit hooks and threads do not get a say


def _one_worker(args, judge_in: int, judge_out: int, forbidden: removal.Removal, hello: dict) -> None:
    """A platform without fork (Windows): the server is its one worker, on the judge's channel itself; the judge
    starts a new server for a fresh worker, and this one's end is that worker's."""
    _write_all(judge_out, protocol.encode({"type": "worker", "generation": 1}, magic=protocol.SERVER_MAGIC))
    _write_all(judge_out, protocol.encode({**hello, "generation": 1}))
    capture = worker.Capture(args.output_dir)

    def send(message, strict=True):
        _write_all(judge_out, protocol.encode(message, strict=strict))

    worker.Worker(args, send, capture, forbidden).serve(lambda n: os.read(judge_in, n))


def _fork() -> int:
    """``os.fork``, retried a while: the last worker's processes, just killed, may still hold the sandbox's pids."""
    for _ in range(100):
        try:
            return os.fork()
        except BlockingIOError:
            time.sleep(0.05)
            try:
                while os.waitpid(-1, os.WNOHANG)[0]:
                    pass
            except ChildProcessError:
                pass
    return os.fork()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _reader(buffer: bytearray):
    position = [0]

    def read(n: int) -> bytes:
        chunk = bytes(buffer[position[0]:position[0] + n])
        position[0] += len(chunk)
        return chunk

    return read


def _kill_group(pid: int) -> None:
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _children(*, everyone: bool) -> set[int]:
    """The server's child processes (``everyone``: in a container, every process there but the server)."""
    me, found = os.getpid(), set()
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return found
    for pid in pids:
        if pid == me:
            continue
        if everyone:
            found.add(pid)
            continue
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                if int(f.read().rsplit(b")", 1)[1].split()[1]) == me:
                    found.add(pid)
        except (OSError, ValueError, IndexError):
            pass
    return found


def _prctl(option: int, value: int) -> None:
    try:
        import ctypes

        ctypes.CDLL(None).prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _become_subreaper() -> None:
    """Linux: the orphans of a worker's processes come back to the server, which can then end them."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def _empty(folder: str, *, keep: set[str]) -> None:
    for name in os.listdir(folder):
        if name not in keep:
            path = os.path.join(folder, name)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                try:
                    os.unlink(path)
                except OSError:
                    pass


def main(argv=None) -> None:
    args = worker.parser().parse_args(argv)
    rlimits = worker.apply_rlimits(args.rlimit)  # first: nothing heavy or foreign has run yet
    judge_in, judge_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # nothing the server or torch prints can reach the protocol
        os.dup2(null, fd)
    if hasattr(signal, "SIGXFSZ"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a full file becomes an error, not a dead worker
    _prctl(4, 0)  # PR_SET_DUMPABLE: no process of the same user opens the server's /proc/<pid>/fd (its channel)
    for caught in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(caught, signal.SIG_IGN)  # no signal a worker could send ends the server (see no_exec)
    if args.lifetime_s:  # PID 1 of a container: its own end, since nothing else may kill it
        signal.signal(signal.SIGALRM, lambda *_: os._exit(0))
        signal.alarm(args.lifetime_s)
    if os.getpid() != 1:
        worker._exit_with_the_judge()  # the judge gone (a local sandbox), so is the server
        _become_subreaper()
    try:
        forbidden, hello = worker.prepare(args, rlimits)
        if args.greet:  # started ahead of its judge (grader.backends.prestart): nobody may be listening yet
            message = protocol.read_server_frame(lambda n: os.read(judge_in, n))
            if message.get("type") != "greet":
                raise protocol.ProtocolError(f"expected a greet, got {message.get('type')!r}")
        if args.one_worker or not hasattr(os, "fork"):
            _one_worker(args, judge_in, judge_out, forbidden, hello)
        else:
            Server(args, judge_in, judge_out, forbidden, hello).serve()
    except BaseException:
        try:
            import traceback

            _write_all(judge_out, protocol.encode({"type": "fatal", "message": traceback.format_exc()[-4000:]},
                                                  magic=protocol.SERVER_MAGIC))
        except BaseException:
            pass
        os._exit(70)
    os._exit(0)


if __name__ == "__main__":
    main()
elif __name__ == "__mp_main__":
    # A process the probes' forkserver starts imports the server's main module under this name first: the
    # forbidden APIs are removed there too (it inherited them from the sealed forkserver; this makes sure).
    removal.install_inherited()
    sys.modules.setdefault("grader.sandbox.worker_server", sys.modules[__name__])
