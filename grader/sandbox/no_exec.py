"""No new program in the sandbox: a seccomp filter on ``execve`` and ``execveat``. INSIDE the sandbox.

The forbidden APIs are removed from the worker's own interpreter (``grader.sandbox.removal``); a
fresh ``python -c`` would have them back. So once the worker has removed them, before the
candidate's module is imported, it installs a filter under which neither it, nor any thread it
runs, nor any process it or they start (filters are inherited and cannot be lifted) can execute
a program, or signal PID 1 (a container's worker server) or every process: the call fails with EPERM. Processes an exercise needs are forks, or come from a
forkserver sealed the same way when it started (``grader.sandbox.sealed``).

Linux on x86-64 and arm64; elsewhere :func:`install` says why not, and the report says so.
Standard library only (``ctypes``, no libseccomp): it is staged into the sandbox.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import sys

#: Per machine: the audit architecture, the execve, execveat and seccomp syscall numbers, and whether the
#: x32 ABI (syscall numbers from 0x40000000) must be closed too.
_ARCH = {"x86_64": (0xC000003E, 59, 322, 317, True), "aarch64": (0xC00000B7, 221, 281, 277, False)}
#: Per machine: kill, tkill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo and pidfd_open, refused when their
#: first argument is PID 1 (a container's worker server) or -1 (every process): nothing the candidate runs
#: signals the server.
_SIGNALS = {"x86_64": (62, 200, 234, 129, 297, 434), "aarch64": (129, 130, 131, 138, 240, 434)}
#: Per machine: ptrace, process_vm_readv and process_vm_writev, refused whatever their arguments: no process
#: reads or writes another's memory.
_REFUSED = {"x86_64": (101, 310, 311), "aarch64": (117, 270, 271)}

_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 22, 2
_SECCOMP_SET_MODE_FILTER, _SECCOMP_FILTER_FLAG_TSYNC = 1, 1
_RET_ALLOW, _RET_ERRNO, _RET_KILL_PROCESS = 0x7FFF0000, 0x00050000, 0x80000000
_LD_W_ABS, _JEQ_K, _JGE_K, _RET_K = 0x20, 0x15, 0x35, 0x06
_X32_BIT = 0x40000000

_installed: str | None = None  # "installed", or why not: a process installs once


class _Instruction(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint32)]


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Instruction))]


def program(machine: str) -> list[tuple[int, int, int, int]]:
    """The classic-BPF filter for ``machine``: another architecture is killed; exec*, ptrace and another process's
    memory fail with EPERM, and so does a signal to PID 1 or to every process (the low 32 bits of the first
    argument: a ``pid_t``)."""
    arch, execve, execveat, _, x32 = _ARCH[machine]
    head = [(_LD_W_ABS, 0, 0, 4), (_JEQ_K, 1, 0, arch), (_RET_K, 0, 0, _RET_KILL_PROCESS), (_LD_W_ABS, 0, 0, 0)]
    tests = ([(_JGE_K, _X32_BIT)] if x32 else []) + [(_JEQ_K, k) for k in (execve, execveat, *_REFUSED[machine])]
    signals = _SIGNALS[machine]
    # Then: a signal syscall goes on to its argument's test; any other is allowed.
    after = [(_JEQ_K, k) for k in signals]
    # Layout: head, exec tests, signal tests, ALLOW, (load arg0, pid 1 -> EPERM, pid -1 -> EPERM, ALLOW), EPERM.
    n_exec, n_sig = len(tests), len(after)
    eperm = n_exec + n_sig + 1 + 4  # index (after head) of the EPERM return
    body = [(code, eperm - i - 1, 0, k) for i, (code, k) in enumerate(tests)]
    body += [(code, n_sig - j, 0, k) for j, (code, k) in enumerate(after)]  # true: to the argument's test
    body += [(_RET_K, 0, 0, _RET_ALLOW)]
    body += [(_LD_W_ABS, 0, 0, 16), (_JEQ_K, 2, 0, 1), (_JEQ_K, 1, 0, 0xFFFFFFFF), (_RET_K, 0, 0, _RET_ALLOW)]
    return head + body + [(_RET_K, 0, 0, _RET_ERRNO | errno.EPERM)]


def install() -> str:
    """Install the filter on this process and all its threads: "installed", or why it could not be."""
    global _installed
    if _installed is None:
        _installed = _install()
    return _installed


def _install() -> str:
    machine = platform.machine()
    if not sys.platform.startswith("linux") or machine not in _ARCH:
        return f"no seccomp filter on {sys.platform} {machine}"
    instructions = program(machine)
    table = (_Instruction * len(instructions))(*instructions)
    prog = _Program(len(instructions), table)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError as e:
        return f"the C library could not be loaded ({e})"
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return f"no_new_privs was refused ({os.strerror(ctypes.get_errno())})"
    syscall = libc.syscall
    syscall.restype = ctypes.c_long
    rc = syscall(ctypes.c_long(_ARCH[machine][3]), ctypes.c_uint(_SECCOMP_SET_MODE_FILTER),
                 ctypes.c_uint(_SECCOMP_FILTER_FLAG_TSYNC), ctypes.byref(prog))
    if rc == 0:
        return "installed"
    if rc > 0:
        return f"thread {rc} could not take the filter"
    if ctypes.get_errno() != errno.ENOSYS:
        return f"the seccomp filter was refused ({os.strerror(ctypes.get_errno())})"
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:  # an old kernel
        return f"the seccomp filter was refused ({os.strerror(ctypes.get_errno())})"
    return "installed" if _single_threaded() else "installed on this thread only (an old kernel)"


def _single_threaded() -> bool:
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False
