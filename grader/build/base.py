"""The image's base: a Debian root made here by debootstrap, or the registry's python image.

1. ``debootstrap``: a Debian bookworm ``minbase`` root with python3 and python3-venv, made by
   ``debootstrap`` from the machine's apt mirror (``grader.build.apt_sources``) and
   ``docker import``-ed as ``grader-base:bookworm`` (made once, then reused): no registry needed;
2. ``registry``: ``python:3.11-slim-bookworm`` (what users with a registry use).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import docker

from grader.build.apt_sources import SUITE, apt_mirror
from grader.build.steps import Log, image_exists, run_step, tail
from grader.errors import InfraError, UsageError

DEBOOTSTRAP_BASE = "grader-base:bookworm"
REGISTRY_BASE = "python:3.11-slim-bookworm"
BASE_CHOICES = ("auto", "debootstrap", "registry")
_DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def choose_base(
    requested: str, *, have_debootstrap: bool, is_root: bool, have_local_base: bool = False
) -> str:
    """``"debootstrap"`` or ``"registry"`` for a ``--base`` value.

    ``auto``: the local ``grader-base:bookworm`` if it was made before, else
    debootstrap when the binary exists and we are root, else the registry image.
    An explicit ``debootstrap`` without the means to run it is an error (unless
    the base image already exists).
    """
    if requested not in BASE_CHOICES:
        raise UsageError(
            f"Unknown base {requested!r}.", hint=f"Use one of: {', '.join(BASE_CHOICES)}."
        )
    if requested == "registry":
        return "registry"
    if have_local_base:
        return "debootstrap"
    can = have_debootstrap and is_root
    if requested == "auto":
        return "debootstrap" if can else "registry"
    if not have_debootstrap:
        raise InfraError(
            "--base debootstrap needs the debootstrap program, which is not installed.",
            hint="Install it (`apt-get install -y debootstrap`, as root) or use --base registry.",
        )
    if not is_root:
        raise InfraError(
            "--base debootstrap must run as root (debootstrap creates a root filesystem).",
            hint="Run `sudo bash sandbox/bootstrap.sh`, or use --base registry.",
        )
    return "debootstrap"


def _mounts_under(root: Path) -> list[str]:
    prefix = str(root.resolve()).rstrip("/") + "/"
    found = []
    try:
        for line in Path("/proc/self/mounts").read_text().splitlines():
            fields = line.split()
            if len(fields) > 1:
                mp = fields[1].replace("\\040", " ")
                if mp.startswith(prefix):
                    found.append(mp)
    except OSError:
        pass
    return found


def _remove_rootfs(root: Path, log: Log) -> None:
    """Delete a debootstrap root, first unmounting anything a failed run left mounted in it."""
    for mp in sorted(_mounts_under(root), key=len, reverse=True):
        subprocess.run(["umount", "-l", mp], capture_output=True)
    left = _mounts_under(root)
    if left:
        log(f"warning: not deleting {root}: still mounted there: {', '.join(left)}")
        return
    shutil.rmtree(root, ignore_errors=True)


def make_debootstrap_base(
    client: docker.DockerClient, *, log: Log = print, mirror: str | None = None
) -> str:
    """Make ``grader-base:bookworm`` with debootstrap + docker import (reused when present)."""
    if image_exists(client, DEBOOTSTRAP_BASE):
        log(f"base: reusing {DEBOOTSTRAP_BASE}")
        return DEBOOTSTRAP_BASE
    mirror = mirror or apt_mirror()
    tmp_parent = Path(os.environ.get("GRADER_ROOTFS_TMP", "/var/tmp"))
    work = Path(tempfile.mkdtemp(prefix="grader-rootfs-", dir=tmp_parent))
    root = work / "root"
    tarball = work / "rootfs.tar"
    try:
        log(f"base: debootstrap {SUITE} (minbase + python3, python3-venv) from {mirror} ...")
        t0 = time.monotonic()
        run_step(
            "debootstrap",
            ["debootstrap", "--variant=minbase", "--include=python3,python3-venv",
             SUITE, str(root), mirror],
            timeout=1800,
        )
        # Nothing that a runtime needs: downloaded .debs and apt lists.
        for sub in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for f in (root / sub).glob("*"):
                if f.is_file():
                    f.unlink()
        log(f"base: debootstrap done in {time.monotonic() - t0:.0f} s; importing as {DEBOOTSTRAP_BASE}")
        run_step(
            "tar the debootstrap root",
            ["tar", "--numeric-owner", "-C", str(root), "-cf", str(tarball),
             "--exclude=./dev/*", "--exclude=./proc/*", "--exclude=./sys/*", "."],
            timeout=600,
        )
        repo, _, tag = DEBOOTSTRAP_BASE.partition(":")
        try:
            with open(tarball, "rb") as fh:
                out = client.api.import_image(
                    src=fh, repository=repo, tag=tag,
                    changes=[f"ENV PATH={_DEFAULT_PATH}", 'CMD ["/bin/bash"]'],
                )
        except (docker.errors.DockerException, OSError) as exc:
            raise InfraError(f"Step 'docker import' of the debootstrap root failed: {exc}") from exc
        if not image_exists(client, DEBOOTSTRAP_BASE):
            raise InfraError(
                f"Step 'docker import' did not produce {DEBOOTSTRAP_BASE}.\n"
                f"--- engine said ---\n{tail(str(out).splitlines())}"
            )
        return DEBOOTSTRAP_BASE
    finally:
        _remove_rootfs(work, log)
