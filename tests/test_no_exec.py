"""No new program in the sandbox (grader.sandbox.no_exec): once the worker has removed the forbidden APIs, neither
it, nor any of its threads, nor any process it or the probes' forkserver starts can execute a program, so no fresh
interpreter brings the removed APIs back. Each case runs in a child interpreter: the filter cannot be lifted."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from grader.backends.factory import open_sandbox
from grader.exercise import load_exercise
from grader.sandbox import no_exec

REPO = Path(__file__).resolve().parent.parent
HOSTILE = Path(__file__).parent / "hostile"
TOY = Path(__file__).parent / "fixtures" / "toy"

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a seccomp filter is Linux's")


def _run_filter(program, nr: int, arch: int, arg0: int = 0) -> int:
    """What the classic-BPF ``program`` returns for a syscall (a tiny interpreter of the four opcodes it uses)."""
    data = {0: nr, 4: arch, 16: arg0 & 0xFFFFFFFF}
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = program[pc]
        if code == no_exec._LD_W_ABS:
            acc, pc = data[k], pc + 1
        elif code == no_exec._JEQ_K:
            pc = pc + 1 + (jt if acc == k else jf)
        elif code == no_exec._JGE_K:
            pc = pc + 1 + (jt if acc >= k else jf)
        else:
            return k


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_filter_refuses_new_programs_and_signals_to_the_server_and_lets_everything_else_through(machine):
    arch, execve, execveat, _, x32 = no_exec._ARCH[machine]
    program = no_exec.program(machine)
    eperm, allow = no_exec._RET_ERRNO | 1, no_exec._RET_ALLOW
    assert _run_filter(program, execve, arch + 1) == no_exec._RET_KILL_PROCESS  # another architecture: killed
    for nr in (execve, execveat, *no_exec._REFUSED[machine]):
        assert _run_filter(program, nr, arch) == eperm
    for nr in no_exec._SIGNALS[machine]:
        assert _run_filter(program, nr, arch, arg0=1) == eperm and _run_filter(program, nr, arch, arg0=-1) == eperm
        assert _run_filter(program, nr, arch, arg0=4242) == allow and _run_filter(program, nr, arch, arg0=-4242) == allow
    for nr in (0, 1, 3, 39, 57, 56, 435):  # read, write, close, getpid, fork, clone, clone3: untouched
        assert _run_filter(program, nr, arch) == allow
    assert (_run_filter(program, no_exec._X32_BIT | 59, arch) == eperm) == x32


def _child(code: str, tmp_path: Path) -> list[str]:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300,
                         cwd=tmp_path, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.split()


@linux_only
def test_after_install_no_thread_and_no_process_starts_a_program(tmp_path):
    found = _child('''
        import multiprocessing, os, subprocess, sys, threading
        from grader.sandbox import no_exec

        ready, go, early = threading.Event(), threading.Event(), []
        def before_the_filter():  # a thread that existed before the filter gets it too
            ready.set(); go.wait()
            try:
                os.execv("/bin/true", ["true"])
            except OSError as e:
                early.append(e.errno)
        t = threading.Thread(target=before_the_filter); t.start(); ready.wait()
        print(no_exec.install()); go.set(); t.join()
        print("thread", early == [1])
        for name, start in (("subprocess", lambda: subprocess.run(["/bin/true"])),
                            ("posix_spawn", lambda: os.posix_spawn("/bin/true", ["true"], {}))):
            try:
                start(); print(name, "STARTED")
            except PermissionError:
                print(name, "refused")
        print("system", os.system("/bin/true") != 0)
        pid = os.fork()
        if pid == 0:
            try:
                os.execv("/bin/true", ["true"])
            except OSError:
                os._exit(7)
        print("fork_exec", os.waitpid(pid, 0)[1] >> 8 == 7)
        p = multiprocessing.get_context("spawn").Process(target=print); p.start(); p.join(30)
        print("spawn", p.exitcode != 0)
        pid = os.fork()  # forking itself, and work without a new program, go on
        if pid == 0:
            os._exit(3)
        print("fork", os.waitpid(pid, 0)[1] >> 8 == 3)
    ''', tmp_path)
    assert found == ["installed", "thread", "True", "subprocess", "refused", "posix_spawn", "refused", "system",
                     "True", "fork_exec", "True", "spawn", "True", "fork", "True"]


@linux_only
def test_a_forkserver_started_before_the_filter_seals_itself_and_every_process_it_forks(tmp_path):
    """ddp_step's ranks come from a forkserver the worker starts while programs may still start: the server removes
    the forbidden APIs and installs the filter before it forks, so a rank (or any process anyone asks it for) can
    neither exec nor call what the exercise forbids."""
    (tmp_path / "rank_target.py").write_text(textwrap.dedent('''
        import os, torch

        def attempt(queue):
            try:
                os.execv("/bin/true", ["true"])
            except OSError as e:
                queue.put(("exec", e.errno))
            try:
                torch.nn.functional.silu(torch.ones(2))
                queue.put(("silu", "ran"))
            except Exception as e:
                queue.put(("silu", type(e).__name__))
    '''))
    found = _child(f'''
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        from grader.sandbox import forkserver, no_exec, probekit, removal
        removal.install(["torch.nn.functional.silu"], {{"torch.nn.functional.silu": ["silu*"]}}, candidate_dirs=[])
        forkserver.start()
        print(no_exec.install())
        import rank_target
        ctx = probekit._context()
        queue = ctx.Queue()
        p = ctx.Process(target=rank_target.attempt, args=(queue,)); p.start()
        print(*queue.get(timeout=120), *queue.get(timeout=120))
        p.join(30)
    ''', tmp_path)
    assert found == ["installed", "exec", "1", "silu", "ForbiddenAPIError"]


@linux_only
@pytest.mark.slow
def test_a_local_worker_refuses_new_programs_to_a_file_run_raw(tmp_path):
    """The local sandbox too: the worker installs the filter itself, before the file is imported."""
    sandbox, _ = open_sandbox("local", exercise=load_exercise(TOY), submission=HOSTILE / "new_program.py",
                              workdir=tmp_path, grading_id=uuid.uuid4().hex[:12], guard=False)
    try:
        import torch

        result = sandbox.call("scale", (torch.tensor([1.0, 2.0]), 2.0))
        assert result.error is None and result.failure is None, result.failure_message
        assert "STARTED=\n" in result.output + "\n" and sandbox.hello.no_exec
    finally:
        sandbox.close()
