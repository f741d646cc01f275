"""Stage the only files a sandbox may see: the worker and its kit, the protocol, the probes, the submission.

Everything is copied into a fresh folder (so the candidate's own file is never
touched, and is mounted read-only) with this layout, which is also what the
container sees under ``/sandbox``::

    lib/grader/__init__.py            empty
    lib/grader/wire/__init__.py       empty
    lib/grader/wire/protocol.py       the framed protocol (grader.wire.protocol)
    lib/grader/wire/module_ast.py     a syntax tree as JSON (grader.wire.module_ast)
    lib/grader/wire/guarded.py        the guards' names a rewritten module calls (grader.wire.guarded)
    lib/grader/sandbox/__init__.py    empty
    lib/grader/sandbox/worker_server.py  the server the judge starts: it forks a fresh worker on demand
    lib/grader/sandbox/worker.py      what each worker runs (grader.sandbox.worker)
    lib/grader/sandbox/removal.py     what the exercise forbids, made absent (grader.sandbox.removal)
    lib/grader/sandbox/absent_ops.py  its dispatcher half
    lib/grader/sandbox/absent_imports.py  its imports half
    lib/grader/sandbox/probekit.py    what probes share (grader.sandbox.probekit)
    lib/grader/sandbox/instruments.py what probes measure with, out of the candidate's reach
    lib/grader/sandbox/no_exec.py     no new program once the worker has started (grader.sandbox.no_exec)
    lib/grader/sandbox/forkserver.py, sealed.py   the probes' forkserver, and what it does before it serves
    lib/grader/sandbox/restricted.py  loads the rewritten module under the runtime subset (grader.sandbox.restricted)
    lib/grader/sandbox/runtime_subset.py, guard_ops.py   the runtime subset and its guarded operations
    probes/probes.py
    probes/shared.py                  the exercise's shared.py, when it has one
    submission/<module>.py            the candidate's file, under the exercise's name
    subset/<module>.py                the loader every ``import <module>`` finds first: it runs the
                                      judge's rewrite of submission/<module>.py under the runtime subset
    subset/<module>.json              that rewrite (``grader.subset.rewrite``), a syntax tree as JSON

``shared.py`` is code an exercise's probes and checks both use (a model the checks
compute with and the probes build): it is written for the sandbox to read, like
probes.py, and imports as ``shared`` there.

Hidden checks, solutions and mutants are never staged: there is no code path
here that could copy them.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import grader
from grader.child_python import python_argv

_PACKAGE = Path(grader.__file__).resolve().parent


#: Our code in the sandbox: staged path -> its source in this package (None: an empty ``__init__.py``).
#: These files may import, of grader, only each other (tests/test_architecture.py holds them to it).
LIB_FILES: dict[str, Path | None] = {
    "lib/grader/__init__.py": None,
    "lib/grader/wire/__init__.py": None,
    "lib/grader/wire/protocol.py": _PACKAGE / "wire" / "protocol.py",
    "lib/grader/wire/module_ast.py": _PACKAGE / "wire" / "module_ast.py",
    "lib/grader/wire/guarded.py": _PACKAGE / "wire" / "guarded.py",
    "lib/grader/sandbox/__init__.py": None,
    "lib/grader/sandbox/worker.py": _PACKAGE / "sandbox" / "worker.py",
    "lib/grader/sandbox/worker_server.py": _PACKAGE / "sandbox" / "worker_server.py",
    "lib/grader/sandbox/removal.py": _PACKAGE / "sandbox" / "removal.py",
    "lib/grader/sandbox/absent_ops.py": _PACKAGE / "sandbox" / "absent_ops.py",
    "lib/grader/sandbox/absent_imports.py": _PACKAGE / "sandbox" / "absent_imports.py",
    "lib/grader/sandbox/probekit.py": _PACKAGE / "sandbox" / "probekit.py",
    "lib/grader/sandbox/instruments.py": _PACKAGE / "sandbox" / "instruments.py",
    "lib/grader/sandbox/restricted.py": _PACKAGE / "sandbox" / "restricted.py",
    "lib/grader/sandbox/runtime_subset.py": _PACKAGE / "sandbox" / "runtime_subset.py",
    "lib/grader/sandbox/guard_ops.py": _PACKAGE / "sandbox" / "guard_ops.py",
    "lib/grader/sandbox/no_exec.py": _PACKAGE / "sandbox" / "no_exec.py",
    "lib/grader/sandbox/sealed.py": _PACKAGE / "sandbox" / "sealed.py",
    "lib/grader/sandbox/forkserver.py": _PACKAGE / "sandbox" / "forkserver.py",
}


@dataclass(frozen=True)
class Staged:
    root: Path

    lib = property(lambda self: self.root / "lib")
    probes = property(lambda self: self.root / "probes" / "probes.py")
    submission_dir = property(lambda self: self.root / "submission")


def stage(*, probes: Path, submission: Path, module_name: str, dest: Path, shared: Path | None = None,
          guard: dict | None = None) -> Staged:
    """Copy the allowed parts into ``dest`` (which must be empty or absent); ``shared``: the exercise's shared.py;
    ``guard``: the judge's lists for the runtime guard (``grader.subset.guard``), None for none."""
    stage_base(probes=probes, dest=dest, shared=shared)
    return stage_submission(Staged(dest), submission=submission, module_name=module_name, guard=guard)


def stage_base(*, probes: Path, dest: Path, shared: Path | None = None) -> Staged:
    """Everything a sandbox sees that does not depend on the submission: the worker, its kit, the probes.

    A sandbox started ahead of its submission (``grader.backends.prestart``) mounts this folder; the
    judge adds the submission with :func:`stage_submission` before its first call."""
    dest.mkdir(parents=True, exist_ok=True)
    files = {
        **LIB_FILES,
        "probes/probes.py": probes,
        **({"probes/shared.py": shared} if shared is not None else {}),
    }
    for rel, src in files.items():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if src is None:
            target.write_text("")
        else:
            shutil.copyfile(src, target)
    _readable(dest)
    return Staged(dest)


def stage_submission(staged: Staged, *, submission: Path, module_name: str, guard: dict | None = None) -> Staged:
    """Add the candidate's file (and the judge's loader for it) to a folder :func:`stage_base` made.

    Written by the judge on the host side of the read-only mount: the sandbox cannot change either
    file, whether it was started before they were written or after."""
    source = submission.read_bytes()
    files = {f"submission/{module_name}.py": source}
    if guard is not None:
        files[f"subset/{module_name}.py"] = loader_source(module_name, guard).encode("utf-8")
        rewritten = _rewritten(source, f"{module_name}.py")
        if rewritten is not None:  # a file the judge cannot parse fails its import: nothing unguarded runs
            files[f"subset/{module_name}.json"] = rewritten.encode("utf-8")
    for rel, data in files.items():
        target = staged.root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".partial")  # never half a file under the module's name
        partial.write_bytes(data)
        os.replace(partial, target)
    _readable(staged.root)
    return staged


#: Set (by ``bench/rewrite_overhead.py`` only): the sandbox gets the module as written, not rewritten, so the
#: rewrite's cost can be measured side by side. Reports graded so say so (``WarningCode.BENCH_UNGUARDED``).
BENCH_UNGUARDED_ENV = "GRADER_BENCH_UNGUARDED"


def _rewritten(source: bytes, filename: str) -> str | None:
    import ast

    from grader.subset.rewrite import rewritten_json
    from grader.wire import module_ast

    try:
        if os.environ.get(BENCH_UNGUARDED_ENV):
            return module_ast.encode(ast.parse(source, filename=filename))
        return rewritten_json(source, filename=filename)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _readable(dest: Path) -> None:
    """Readable by the sandbox's unprivileged user, writable by nobody there."""
    for dirpath, dirnames, filenames in os.walk(dest):
        os.chmod(dirpath, 0o755)
        for name in filenames:
            os.chmod(os.path.join(dirpath, name), 0o644)


def loader_source(module_name: str, guard: dict) -> str:
    """The staged ``subset/<module>.py``: the judge's lists as a literal, and the call that loads the file."""
    return ('"""Written by the judge (grader.backends.staging): runs the candidate\'s file under the subset\'s guard."""\n'
            "from grader.sandbox import restricted\n\n"
            f"restricted.load({module_name!r}, __file__, {guard!r})\n")


def worker_argv(python: str, staged_root: str, forbidden: list[str],
                rlimits: dict[str, tuple[int, int]] | None = None,
                kernels: dict[str, list[str]] | None = None, *, greet: bool = False,
                forkserver: bool = False, lifetime_s: int = 0, max_frame_bytes: int = 0,
                one_worker: bool = False) -> list[str]:
    """The worker's command line, with paths as seen from where it runs.

    ``rlimits`` (``RLIMIT_*`` name -> (soft, hard)) are applied by the worker to
    itself before anything else: the local sandbox's way to limit a process
    without a fork hook. Docker passes none; its limits come from the engine.
    """
    argv = [*python_argv(python, "-s", "-B", "-m", "grader.sandbox.worker_server"),
            "--probes", f"{staged_root}/probes/probes.py",
            "--submission-dir", f"{staged_root}/submission"]
    for api in forbidden:
        argv += ["--forbid", api]
    for api, patterns in (kernels or {}).items():  # the operators the worker removes for each API
        argv += [arg for pattern in patterns for arg in ("--kernel", f"{api}={pattern}")]
    for name, (soft, hard) in (rlimits or {}).items():
        argv += ["--rlimit", f"{name}={soft}:{hard}"]
    if greet:
        argv.append("--greet")
    if forkserver:
        argv.append("--forkserver")
    if lifetime_s:
        argv += ["--lifetime-s", str(lifetime_s)]
    if max_frame_bytes:
        argv += ["--max-frame-bytes", str(max_frame_bytes)]
    if one_worker:
        argv.append("--one-worker")
    return argv
