"""Starts a new program from inside the sandbox, every way Python has: a fresh interpreter would import torch with
nothing removed. Leaves the subset (os, subprocess, multiprocessing): refused by the judge; run raw, each start is
refused in the sandbox (a seccomp filter on execve and execveat, installed before the file was imported), and the
file still computes, so the toy's calls pass: only the new programs fail. It prints one line saying which did.
"""

import multiprocessing
import os
import subprocess
import sys


def _fork_then_exec():
    pid = os.fork()
    if pid == 0:
        try:
            os.execv(sys.executable, [sys.executable, "-c", "pass"])
        except OSError:
            os._exit(7)
        os._exit(0)
    return os.waitpid(pid, 0)[1] >> 8 == 0


def _spawned():
    process = multiprocessing.get_context("spawn").Process(target=print)
    process.start()
    process.join(30)
    return process.exitcode == 0


ROUTES = {
    "subprocess": lambda: subprocess.run([sys.executable, "-c", "pass"], timeout=30).returncode == 0,
    "posix_spawn": lambda: os.waitpid(os.posix_spawn(sys.executable, [sys.executable, "-c", "pass"], {}), 0)[1] == 0,
    "system": lambda: os.system("true") == 0,
    "fork_exec": _fork_then_exec,
    "spawn": _spawned,
}


def scale(x, factor):
    started = []
    for name, route in ROUTES.items():
        try:
            if route():
                started.append(name)
        except Exception:
            pass
    print("STARTED=" + ",".join(started))
    return x * factor
