"""The Docker edge: the container's configuration, its attach socket, and reaping.

Kept thin on purpose (like docker-py's ``api/`` layer): ``container_kwargs`` is a
pure function of the limits, so every limit is unit-tested without an engine;
``DockerTransport`` only moves bytes; ``reap`` removes containers a dead grader
left behind, found by label.

The sandbox pays for what it writes: its containers log nothing on the host (log
driver ``none``: a write to ``/proc/1/fd/2`` once filled the engine's JSON log at
100 MB/s, on the engine's CPU), and both of its streams come to the judge over the
attach socket, where anything that is not the protocol (stdout) is counted, dropped
and capped at :data:`STRAY_CAP`: past it the call fails as a protocol violation and
the container goes. The engine holds about a megabyte per stream for a reader that
is not reading, then the writer inside the container blocks.
"""

from __future__ import annotations

import os
import select
import socket
import struct
import time

from grader.wire import protocol
from grader.exercise import Limits
from grader.backends.accounting import Meter, NoMeter, cgroup_meter
from grader.backends.client import Transport
from grader.backends.served import ServedStarter
from grader.backends.gpu import gpu_start_error
from grader.wire.grant import GpuRequest
from grader.backends.staging import Staged, worker_argv
from grader.processes import pid_alive

MOUNT_POINT = "/sandbox"
LABEL = "grader.managed"
_STREAM_HEADER = struct.Struct(">BxxxI")

#: Bytes a container may write outside the protocol (to its stderr) before the call fails. The worker points
#: fds 1 and 2 at its capture file before anything else runs, so an honest sandbox writes none.
STRAY_CAP = 64 * 1024


#: Set it (a batch's name, a CI job) and every sandbox container carries it as the label ``grader.tag``:
#: ``docker ps --filter label=grader.tag=NAME`` then lists that run's sandboxes and no one else's.
TAG_ENV = "GRADER_TAG"


def labels_for(grading_id: str) -> dict[str, str]:
    """The labels that let a reaper tell whose container this is and whether its owner still lives."""
    labels = {
        LABEL: "1",
        "grader.grading": grading_id,
        "grader.owner_host": socket.gethostname(),
        "grader.owner_pid": str(os.getpid()),
    }
    if os.environ.get(TAG_ENV):
        labels["grader.tag"] = os.environ[TAG_ENV]
    return labels


def container_kwargs(*, image: str, staged: Staged, forbidden: list[str], limits: Limits,
                     grading_id: str, gpu: GpuRequest | None = None, runtime: str = "runc",
                     kernels: dict[str, list[str]] | None = None, ahead_s: float = 0.0) -> dict:
    """Everything ``client.containers.create`` gets: the whole lock-down in one place.

    ``ahead_s``: a container started ahead of its judge (``grader.backends.prestart``) may wait this long
    before its grading begins: its lifetime is that much longer, and its worker waits for a greet."""
    mb = 1024 * 1024
    from docker.types import LogConfig, Ulimit

    # PID 1 is the worker server, which nothing inside can kill; it ends itself after this long, so a container
    # outlives a dead grader by at most that.
    lifetime = int(limits.grading_timeout_s + ahead_s) + 60
    command = worker_argv("python3", MOUNT_POINT, forbidden, kernels=kernels, greet=ahead_s > 0,
                          forkserver=limits.forkserver, lifetime_s=lifetime,
                          max_frame_bytes=limits.result_mb * mb)
    kwargs = dict(
        image=image,
        command=command,
        stdin_open=True,
        tty=False,
        network_mode="none",
        read_only=True,
        tmpfs={"/tmp": f"rw,nosuid,nodev,noexec,size={limits.tmpfs_mb}m,mode=1777"},
        user="65534:65534",
        cap_drop=["ALL"],
        security_opt=["no-new-privileges"],
        mem_limit=limits.memory_mb * mb,
        memswap_limit=limits.memory_mb * mb,  # equal to memory: no extra swap
        pids_limit=limits.pids,
        nano_cpus=int(limits.cpus * 1e9),
        ulimits=[Ulimit(name="nofile", soft=limits.nofile, hard=limits.nofile),
                 Ulimit(name="fsize", soft=limits.fsize_mb * mb, hard=limits.fsize_mb * mb)],
        volumes={str(staged.root): {"bind": MOUNT_POINT, "mode": "ro"}},
        environment={"PYTHONPATH": f"{MOUNT_POINT}/lib", "HOME": "/tmp", "TMPDIR": "/tmp",
                     "OMP_NUM_THREADS": str(max(1, int(limits.cpus)))},
        working_dir="/tmp",
        labels=labels_for(grading_id),
        log_config=LogConfig(type=LogConfig.types.NONE),  # nothing it writes is kept on the host
        detach=True,
        runtime=runtime,  # runc, or runsc (gVisor): see grader/backends/oci_runtime.py
    )
    if gpu is not None:
        kwargs["device_requests"] = [gpu.to_docker()]
    return kwargs


class DockerTransport(Transport):
    """Frames over the container's attach socket; stdout and stderr arrive in 8-byte-header chunks.

    Bytes go from the socket straight to the reader: a stream chunk is consumed as it
    is asked for (``_left`` says how much of it remains), never gathered whole first,
    so the judge holds no copy of a frame beside the one the protocol reads into.
    Stdout is the protocol; a chunk of any other stream is read, counted and dropped.
    """

    def __init__(self, client, container, sock):
        self.client = client
        self.container = container
        self._socket_io = sock
        self._sock = sock._sock
        self._stream = 0  # the stream (1 = stdout) of the chunk being read
        self._left = 0  # bytes of that chunk not read yet
        self.stray_bytes = 0  # bytes received on streams other than stdout, dropped unread
        self._closed = False

    def send(self, data: bytes) -> None:
        self._sock.sendall(data)

    def _recv(self, n: int, deadline: float) -> bytes:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([self._sock], [], [], remaining)[0]:
            raise TimeoutError
        return self._sock.recv(n)

    def _recv_exactly(self, n: int, deadline: float) -> bytes:
        out = bytearray()
        while len(out) < n:
            chunk = self._recv(n - len(out), deadline)
            if not chunk:
                return b""
            out += chunk
        return bytes(out)

    def read(self, n: int, deadline: float) -> bytes:
        while True:
            if self._left == 0:
                header = self._recv_exactly(_STREAM_HEADER.size, deadline)
                if not header:
                    return b""
                self._stream, self._left = _STREAM_HEADER.unpack(header)
                continue
            data = self._recv(min(n, self._left) if self._stream == 1 else min(self._left, 65536), deadline)
            if not data:
                return b""
            self._left -= len(data)
            if self._stream == 1:  # stdout is the protocol
                return data
            self.stray_bytes += len(data)
            if self.stray_bytes > STRAY_CAP:
                raise protocol.ProtocolError(
                    f"the sandbox wrote more than {STRAY_CAP // 1024} KB outside the protocol channel (to the "
                    "container's stderr, where no candidate output goes)")

    def meter(self) -> Meter:
        """The container's cgroup clocks (``grader.backends.accounting``), found from its first process."""
        try:
            self.container.reload()
            pid = self.container.attrs.get("State", {}).get("Pid") or None
            nano = self.container.attrs.get("HostConfig", {}).get("NanoCpus") or 0
        except Exception as e:
            return NoMeter(f"the container could not be inspected ({type(e).__name__})")
        return cgroup_meter(self.container.id, pid, cpu_rate=nano / 1e9 if nano else float(os.cpu_count() or 1))

    def ended_by_its_limits(self) -> bool:
        """Killed for its memory; or under gVisor, whose sandbox kernel ends with the container when what the
        candidate ran took its pids or memory (a fork bomb ends it with exit code 2)."""
        try:
            self.container.wait(timeout=5)
            self.container.reload()
            return bool(self.container.attrs["State"].get("OOMKilled")) or \
                self.container.attrs.get("HostConfig", {}).get("Runtime") == "runsc"
        except Exception:
            return False

    def exit_reason(self) -> str:
        try:
            self.container.wait(timeout=5)
            self.container.reload()
            state = self.container.attrs["State"]
        except Exception as e:
            return f"the container could not be inspected ({type(e).__name__})"
        if state.get("OOMKilled"):
            return "killed for exceeding its memory limit"
        code = state.get("ExitCode")
        if code == 137:
            return "killed (exit code 137)"
        return f"exit code {code}"

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        # Shut the socket itself down, not only its file wrapper: a worker may be in the middle
        # of a frame the judge refused unread, and while the engine can still write to an open
        # socket that nobody reads, it does not finish killing the container (a remove then
        # hangs until the SDK's 60 s timeout).
        for end in (lambda: self._sock.shutdown(socket.SHUT_RDWR), self._sock.close, self._socket_io.close):
            try:
                end()
            except Exception:
                pass
        try:
            self.container.remove(force=True)
        except Exception:
            pass  # reaped later by label if the engine refused now


def docker_starter(client, kwargs: dict, *, first=None) -> ServedStarter:
    """The sandbox's workers: each a fork in the container's worker server (``grader.backends.served``); a
    container per server, started when there is none that answers. ``first``: a container started ahead for
    this grading (:func:`attach_starter`), taken for the first server."""

    def start() -> DockerTransport:
        container = client.containers.create(**kwargs)
        try:
            sock = client.api.attach_socket(container.id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
            container.start()
        except BaseException as e:
            container.remove(force=True)
            explained = gpu_start_error(e) if kwargs.get("device_requests") and isinstance(e, Exception) else None
            if explained is not None:
                raise explained from None
            raise
        return DockerTransport(client, container, sock)

    return ServedStarter(start, first=first)


def attach_starter(client, container_id: str, grading_id: str):
    """A function that takes over a container started ahead of this judge (``grader.backends.prestart``)
    once: attach to it, make sure it is this grading's (its label), and ask its worker for the hello."""

    def start() -> DockerTransport:
        container = client.containers.get(container_id)
        labels = container.labels or {}
        if labels.get(LABEL) != "1" or labels.get("grader.grading") != grading_id:
            raise RuntimeError(f"container {container_id[:12]} is not a sandbox started for grading {grading_id}")
        try:
            sock = client.api.attach_socket(container.id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
            transport = DockerTransport(client, container, sock)
            transport.send(protocol.encode({"type": "greet"}, magic=protocol.SERVER_MAGIC))
        except BaseException:
            container.remove(force=True)
            raise
        return transport

    return start


def reap(client, *, grading_id: str | None = None) -> int:
    """Remove grader containers of ``grading_id``, or (None) those whose owner process on this host is gone.

    Uses the engine's plain list (no inspect per container): other gradings remove
    their own containers concurrently, and one vanishing mid-listing is no error.
    """
    filters = {"label": [f"{LABEL}=1"] + ([f"grader.grading={grading_id}"] if grading_id else [])}
    removed = 0
    for entry in client.api.containers(all=True, filters=filters):
        labels = entry.get("Labels") or {}
        if grading_id is None:
            if labels.get("grader.owner_host") != socket.gethostname():
                continue
            pid = labels.get("grader.owner_pid", "")
            if pid.isdigit() and pid_alive(int(pid)):
                continue
        try:
            client.api.remove_container(entry["Id"], force=True)
            removed += 1
        except Exception:
            pass  # already gone, or the engine refused: the next reaper tries again
    return removed
