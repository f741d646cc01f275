"""Start a child in its own process group and kill the whole group (or session), on whatever OS we run on.

The grader kills what it starts (a judge past its deadline, a sandbox worker
that hangs) together with anything that child started. POSIX does that with a
new session and ``os.killpg``; Windows has neither, only a new process group
flag and ``Popen.kill`` (which ends the child alone). Both functions look at
``os`` when they are called, not when this module is imported, so a test can
take ``os.setsid`` or ``os.killpg`` away and see the fallback. :func:`pid_alive` says whether a process
another one recorded (a container's owner, a grading worker) still runs.
"""

from __future__ import annotations

import os
import signal
import subprocess


def group_popen_kwargs() -> dict:
    """``Popen`` keyword arguments that start the child as the leader of a new process group."""
    if hasattr(os, "setsid"):
        return {"start_new_session": True}
    flag = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", None)
    return {"creationflags": flag} if flag is not None else {}


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL ``proc``'s group where the OS has ``killpg``; the child itself in any case. Never raises
    for a process that is already gone."""
    killpg = getattr(os, "killpg", None)
    if killpg is not None:
        try:
            killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass  # gone already, or it never led a group (started without a new session)
    if proc.poll() is None:
        try:
            proc.kill()
        except (ProcessLookupError, PermissionError):
            pass


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` runs; a zombie (dead, not yet reaped by its new parent) does not."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True  # no /proc: trust kill(0)


def kill_session(proc: subprocess.Popen) -> None:
    """:func:`kill_group`, and every other process of the session ``proc`` leads where ``/proc`` shows them
    (a worker server's workers each lead a process group of their own in its session)."""
    kill_group(proc)
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return
    for entry in entries:
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                session = int(f.read().rsplit(b")", 1)[1].split()[3])
        except (OSError, ValueError, IndexError):
            continue
        if session == proc.pid:
            try:
                os.kill(int(entry), signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
