"""A grading's Docker sandbox, started before its file is known.

Most of a container's start (Python, ``import torch``, the removal of forbidden APIs) does not depend
on the submission, so it starts while the judge prepares, or in a batch while the previous grading
runs (:func:`start_next`); the judge then stages the file into the folder it already mounts and
attaches to it. Still one sandbox per grading (removed when that grading ends,
:meth:`PreStarted.discard`), a worker that has read nothing of the submission, judge-written files.
A container waits :data:`TAKEOVER_S` for its judge, or :func:`ahead_s` when started ahead; at most one
waits ahead per process. See docs/decisions/prestarted-sandbox.md.
"""

from __future__ import annotations

import atexit
import os
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from grader.exercise import Exercise


#: How long a container started for a grading about to begin may wait for its judge to take it over.
TAKEOVER_S = 60.0


def usable_cores() -> int:
    """The cores this process may run on (its affinity, where the OS has one)."""
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def worth_starting_ahead(jobs: int) -> bool:
    """Start the next grading's sandbox ahead only with a core to spare: with every core grading already,
    one more container booting only costs its memory (148 MiB waiting) and buys no measurable time."""
    return jobs < usable_cores()


def ahead_s(ex: Exercise) -> float:
    """How long a container started ahead (for the next grading of a batch) may wait for its grading."""
    return ex.limits.grading_timeout_s


@dataclass(eq=False)
class PreStarted:
    """One container being started (or started) for one grading, and the folder it mounts."""

    key: tuple
    grading_id: str
    folder: tempfile.TemporaryDirectory
    wait_s: float = TAKEOVER_S  # how long it may wait before its judge takes it over (its lifetime allows it)
    started_at: float = field(default_factory=time.monotonic)
    container_id: str | None = None
    error: str | None = None
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _discarded: bool = False

    @property
    def stage(self) -> Path:
        return Path(self.folder.name) / "stage"

    def handoff(self) -> tuple[str, Path] | None:
        """``(container id, staged folder)`` for the judge, once the container runs; None if it could not
        start (the judge then starts one itself, and says why if that fails too)."""
        if self._thread is not None:
            self._thread.join()
        return (self.container_id, self.stage) if self.container_id else None

    def discard(self) -> None:
        """Remove the container (gone already is fine) and the folder. Safe to call twice, from any thread."""
        with self._lock:
            if self._discarded:
                return
            self._discarded = True
        if self._thread is not None:
            self._thread.join()
        if self.container_id is not None:
            try:
                from grader.backends import engine

                engine.connect(timeout=30).api.remove_container(self.container_id, force=True)
            except Exception:
                pass  # removed by its judge already, or reaped later by its label (grading id, owner pid)
        self.folder.cleanup()


def _key(ex: Exercise, image: str | None, runtime: str | None) -> tuple:
    return (str(ex.root), ex.fingerprint, image, runtime)


def start(ex: Exercise, *, image: str | None = None, runtime: str | None = None,
          wait_s: float = TAKEOVER_S) -> PreStarted:
    """Begin starting a container for one new grading of ``ex`` (CPU only), on a thread; returns at once.
    ``wait_s``: how long it may wait for its grading's judge (its lifetime is that much longer)."""
    from grader.backends.staging import stage_base

    pre = PreStarted(_key(ex, image, runtime), uuid.uuid4().hex[:12],
                     tempfile.TemporaryDirectory(prefix="grader-prestart-"), wait_s)
    staged = stage_base(probes=ex.probes, dest=pre.stage, shared=ex.shared)

    def run() -> None:
        try:
            from grader.backends import docker_backend, engine, oci_runtime
            from grader.build import naming as runtime_image

            client = engine.connect()
            kwargs = docker_backend.container_kwargs(
                image=image or runtime_image.runtime_image_name(), staged=staged,
                forbidden=ex.config.forbidden.apis, limits=ex.limits, grading_id=pre.grading_id,
                runtime=oci_runtime.resolve_runtime(runtime), kernels=ex.config.forbidden.kernels,
                ahead_s=wait_s)
            container = client.containers.create(**kwargs)
            pre.container_id = container.id
            container.start()
        except Exception as e:  # the judge starts its own and reports a real failure in its words
            pre.error = f"{type(e).__name__}: {e}"
            if pre.container_id is not None:
                try:
                    client.api.remove_container(pre.container_id, force=True)
                except Exception:
                    pass
                pre.container_id = None

    pre._thread = threading.Thread(target=run, name="grader-prestart", daemon=True)
    pre._thread.start()
    return pre


class _Waiting:
    """The one container started ahead for the next grading of this process, if any."""

    def __init__(self):
        self.lock = threading.Lock()
        self.pre: PreStarted | None = None
        self.registered = False

    def take(self, key: tuple) -> PreStarted | None:
        with self.lock:
            pre = self.pre
            if pre is None or pre.key != key:
                return None
            self.pre = None
        if time.monotonic() - pre.started_at > pre.wait_s - TAKEOVER_S:
            pre.discard()  # waited too long: its lifetime may not cover a whole grading
            return None
        return pre

    def put(self, pre: PreStarted) -> None:
        with self.lock:
            old, self.pre = self.pre, pre
            if not self.registered:
                atexit.register(close_waiting)
                self.registered = True
        if old is not None:
            old.discard()

    def has(self, key: tuple) -> bool:
        with self.lock:
            return self.pre is not None and self.pre.key == key

    def clear(self) -> None:
        with self.lock:
            old, self.pre = self.pre, None
        if old is not None:
            old.discard()


_waiting = _Waiting()


def take(ex: Exercise, *, image: str | None = None, runtime: str | None = None) -> PreStarted:
    """This grading's container: the one started ahead for ``ex`` if one waits, else one started now."""
    pre = _waiting.take(_key(ex, image, runtime))
    return pre if pre is not None else start(ex, image=image, runtime=runtime)


def start_next(ex: Exercise, *, image: str | None = None, runtime: str | None = None) -> None:
    """Start the container of the next grading of ``ex`` now (a batch), unless one already waits for it;
    one waiting for another exercise is removed (at most one waits)."""
    if not _waiting.has(_key(ex, image, runtime)):
        _waiting.put(start(ex, image=image, runtime=runtime, wait_s=ahead_s(ex) + TAKEOVER_S))


def close_waiting() -> None:
    """Remove the container waiting for a next grading (the batch is over, or the process ends)."""
    _waiting.clear()
