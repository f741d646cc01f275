"""The sandbox runtime image: its name, whether it is up to date, and building it offline.

The image is ``grader-runtime:<tag>``, where the tag is a short hash of
``sandbox/Dockerfile`` and ``sandbox/requirements.txt``: change either and the old
image no longer counts as up to date. Building never needs a container registry
when the base is made here:

1. base ``debootstrap``: a Debian bookworm ``minbase`` root with python3 and
   python3-venv, made by ``debootstrap`` from the configured apt mirror and
   ``docker import``-ed as ``grader-base:bookworm`` (made once, then reused);
   base ``registry``: ``python:3.11-slim-bookworm`` (what users with a registry use);
2. a wheelhouse filled on the host by ``pip download`` (cp311 wheels for the
   engine's CPU architecture; cached under ``.build/wheels`` in the repository);
3. ``docker build`` of ``sandbox/Dockerfile``, which installs from the wheelhouse
   with ``--no-index``.

Every failure is an ``InfraError`` that names the step and shows the tail of its
output.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import deque
from pathlib import Path
from typing import Callable, Iterable

import docker

from grader.errors import InfraError, UsageError
from grader.sandbox.flavor import SPECS, Flavor

REPO_ROOT = Path(__file__).resolve().parents[2]
SANDBOX_DIR = REPO_ROOT / "sandbox"
BUILD_DIR = REPO_ROOT / ".build"
WHEEL_CACHE = BUILD_DIR / "wheels"

IMAGE_REPO = "grader-runtime"
LABEL_HASH = "grader.runtime.hash"
LABEL_BASE = "grader.runtime.base"
TAG_LENGTH = 12

SUITE = "bookworm"
DEBOOTSTRAP_BASE = "grader-base:bookworm"
REGISTRY_BASE = "python:3.11-slim-bookworm"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
BASE_CHOICES = ("auto", "debootstrap", "registry")

#: The interpreter inside the image (bookworm's python3, and python:3.11-slim's).
TARGET_PYTHON = "3.11"
#: Bookworm's glibc; manylinux wheels up to this level run on it.
TARGET_GLIBC_MINOR = 36
_DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

Log = Callable[[str], None]


# ---------------------------------------------------------------- name and tag


def _runtime_files(sandbox_dir: Path | None, flavor: Flavor = Flavor.CPU) -> tuple[Path, Path]:
    d = Path(sandbox_dir) if sandbox_dir is not None else SANDBOX_DIR
    files = (d / "Dockerfile", d / SPECS[flavor].requirements)
    for f in files:
        if not f.is_file():
            raise InfraError(
                f"The runtime image definition is incomplete: {f} is missing.",
                hint="Run the grader from its source checkout (the sandbox/ folder "
                "ships next to the grader/ package), or restore the file.",
            )
    return files


def runtime_hash(sandbox_dir: Path | None = None, flavor: Flavor = Flavor.CPU) -> str:
    """Full sha256 over the Dockerfile and the flavor's requirements file (contents and name only)."""
    h = hashlib.sha256()
    for f in _runtime_files(sandbox_dir, flavor):
        data = f.read_bytes()
        h.update(f.name.encode() + b"\0" + str(len(data)).encode() + b"\0" + data)
    return h.hexdigest()


def runtime_tag(sandbox_dir: Path | None = None, flavor: Flavor = Flavor.CPU) -> str:
    """The image tag: the first 12 hex digits of :func:`runtime_hash`."""
    return runtime_hash(sandbox_dir, flavor)[:TAG_LENGTH]


def runtime_image_name(sandbox_dir: Path | None = None, flavor: Flavor = Flavor.CPU) -> str:
    """``grader-runtime:<tag>`` (CUDA: ``grader-runtime-cuda:<tag>``), the image that counts as up to date."""
    return f"{SPECS[flavor].repo}:{runtime_tag(sandbox_dir, flavor)}"


def find_runtime_image(client: docker.DockerClient, sandbox_dir: Path | None = None,
                       flavor: Flavor = Flavor.CPU):
    """The up-to-date runtime image (exact tag present), or None when it has not been built."""
    name = runtime_image_name(sandbox_dir, flavor)
    try:
        return client.images.get(name)
    except docker.errors.ImageNotFound:
        return None
    except (docker.errors.DockerException, OSError) as exc:
        raise InfraError(f"Could not ask the Docker engine for image {name}: {exc}") from exc


def image_info(image) -> dict:
    """What a report records about the image: its id and tags."""
    return {"id": image.id, "tags": list(image.tags)}


# ---------------------------------------------------------------- requirements


_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9.+!_-]+)$")


def normalize_name(name: str) -> str:
    """PEP 503 normalisation: ``Typing_Extensions`` -> ``typing-extensions``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def read_pins(path: Path) -> dict[str, str]:
    """``{normalized name: version}`` from a requirements file where every line is ``name==version``."""
    pins: dict[str, str] = {}
    for n, raw in enumerate(Path(path).read_text().splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = _PIN.match(line)
        if not m:
            raise InfraError(
                f"{path}:{n}: {raw.strip()!r} is not pinned as name==version.",
                hint="Pin every package exactly; regenerate the file with `pip download` "
                "as its header describes.",
            )
        pins[normalize_name(m.group(1))] = m.group(2)
    return pins


def _public_version(version: str) -> str:
    return version.split("+", 1)[0]


def select_wheels(wheels: Iterable[Path], pins: dict[str, str], *, local_builds: bool = True) -> list[Path]:
    """The wheel files that satisfy ``pins`` (``==2.13.0`` matches ``2.13.0+cpu`` when ``local_builds``).

    Raises ``InfraError`` naming every pinned package with no wheel, and for a
    package met only by a local build that is not allowed, the build it found.
    """
    chosen: list[Path] = []
    found: set[str] = set()
    refused: dict[str, str] = {}
    for w in sorted(Path(p) for p in wheels):
        parts = w.name[: -len(".whl")].split("-") if w.name.endswith(".whl") else []
        if len(parts) < 5:
            continue
        name, version = normalize_name(parts[0]), parts[1]
        want = pins.get(name)
        if want is None:
            continue
        if version == want:
            chosen.append(w)
            found.add(name)
        elif _public_version(version) == want and "+" not in want:
            if local_builds:
                chosen.append(w)
                found.add(name)
            else:
                refused[name] = version
    missing = sorted(set(pins) - found)
    if missing:
        also = "".join(f" ({m} {refused[m]} was found: a local build, not the index's wheel)"
                       for m in missing if m in refused)
        raise InfraError(
            "The wheelhouse has no wheel for: "
            + ", ".join(f"{m}=={pins[m]}" for m in missing) + also,
            hint="Check that pip can reach its index or find-links (pip config list), "
            "then run the build again.",
        )
    return chosen


# ---------------------------------------------------------------- base selection


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


def _deb822_paragraphs(text: str) -> list[dict[str, str]]:
    paras: list[dict[str, str]] = []
    cur: dict[str, str] = {}
    key = None
    for raw in text.splitlines():
        if raw.startswith("#"):
            continue
        if not raw.strip():
            if cur:
                paras.append(cur)
            cur, key = {}, None
            continue
        if raw[0] in " \t" and key is not None:
            cur[key] += " " + raw.strip()
            continue
        if ":" in raw:
            key, _, value = raw.partition(":")
            key = key.strip().lower()
            cur[key] = value.strip()
    if cur:
        paras.append(cur)
    return paras


def apt_mirror(
    sources_dir: Path = Path("/etc/apt/sources.list.d"),
    sources_list: Path = Path("/etc/apt/sources.list"),
    suite: str = SUITE,
) -> str:
    """The apt mirror this machine uses for ``suite`` (deb822 ``*.sources`` first, then sources.list).

    Falls back to ``http://deb.debian.org/debian``.
    """
    sources = sorted(Path(sources_dir).glob("*.sources")) if Path(sources_dir).is_dir() else []
    for f in sources:
        try:
            text = f.read_text()
        except OSError:
            continue
        for p in _deb822_paragraphs(text):
            if p.get("enabled", "yes").lower() == "no":
                continue
            if "deb" not in p.get("types", "").split():
                continue
            if suite not in p.get("suites", "").split():
                continue
            uris = p.get("uris", "").split()
            if uris:
                return uris[0].rstrip("/")
    try:
        lines = Path(sources_list).read_text().splitlines()
    except OSError:
        lines = []
    for raw in lines:
        words = raw.split("#", 1)[0].split()
        if not words or words[0] != "deb":
            continue
        words = words[1:]
        if words and words[0].startswith("["):  # [arch=amd64 signed-by=...]
            while words and not words[0].endswith("]"):
                words = words[1:]
            words = words[1:]
        if len(words) >= 2 and words[1] == suite:
            return words[0].rstrip("/")
    return DEFAULT_MIRROR


# ---------------------------------------------------------------- helpers


def _tail(lines: Iterable[str], n: int = 25) -> str:
    return "\n".join(list(lines)[-n:])


def _run_step(step: str, cmd: list[str], *, timeout: float, log: Log, env: dict[str, str] | None = None) -> str:
    """Run ``cmd``; on failure raise InfraError naming ``step`` with the tail of its output."""
    try:
        proc = subprocess.run(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout, env=env
        )
    except FileNotFoundError as exc:
        raise InfraError(f"Step '{step}' failed: {cmd[0]} is not installed ({exc}).") from exc
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout if isinstance(exc.stdout, str) else (exc.stdout or b"").decode(errors="replace")
        raise InfraError(
            f"Step '{step}' did not finish within {timeout:.0f} s.\n"
            f"--- last output ---\n{_tail(out.splitlines())}"
        ) from exc
    if proc.returncode != 0:
        raise InfraError(
            f"Step '{step}' failed (exit status {proc.returncode}): {' '.join(cmd)}\n"
            f"--- last output ---\n{_tail(proc.stdout.splitlines())}"
        )
    return proc.stdout


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


def _engine_arch(client: docker.DockerClient) -> str:
    """The engine's CPU architecture, in wheel-tag spelling (x86_64, aarch64)."""
    try:
        arch = client.version().get("Arch", "")
    except (docker.errors.DockerException, OSError) as exc:
        raise InfraError(f"Could not ask the Docker engine for its version: {exc}") from exc
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(arch, arch or os.uname().machine)


def _image_exists(client: docker.DockerClient, name: str) -> bool:
    try:
        client.images.get(name)
        return True
    except docker.errors.ImageNotFound:
        return False
    except (docker.errors.DockerException, OSError) as exc:
        raise InfraError(f"Could not ask the Docker engine for image {name}: {exc}") from exc


# ---------------------------------------------------------------- steps


def make_debootstrap_base(
    client: docker.DockerClient, *, log: Log = print, mirror: str | None = None
) -> str:
    """Make ``grader-base:bookworm`` with debootstrap + docker import (reused when present)."""
    if _image_exists(client, DEBOOTSTRAP_BASE):
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
        _run_step(
            "debootstrap",
            ["debootstrap", "--variant=minbase", "--include=python3,python3-venv",
             SUITE, str(root), mirror],
            timeout=1800,
            log=log,
        )
        # Nothing that a runtime needs: downloaded .debs and apt lists.
        for sub in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for f in (root / sub).glob("*"):
                if f.is_file():
                    f.unlink()
        log(f"base: debootstrap done in {time.monotonic() - t0:.0f} s; importing as {DEBOOTSTRAP_BASE}")
        _run_step(
            "tar the debootstrap root",
            ["tar", "--numeric-owner", "-C", str(root), "-cf", str(tarball),
             "--exclude=./dev/*", "--exclude=./proc/*", "--exclude=./sys/*", "."],
            timeout=600,
            log=log,
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
        if not _image_exists(client, DEBOOTSTRAP_BASE):
            raise InfraError(
                f"Step 'docker import' did not produce {DEBOOTSTRAP_BASE}.\n"
                f"--- engine said ---\n{_tail(str(out).splitlines())}"
            )
        return DEBOOTSTRAP_BASE
    finally:
        _remove_rootfs(work, log)


def _platform_args(arch: str) -> list[str]:
    args = ["--python-version", TARGET_PYTHON, "--implementation", "cp",
            "--abi", "cp" + TARGET_PYTHON.replace(".", "")]
    plats = [f"manylinux_2_{m}_{arch}" for m in range(TARGET_GLIBC_MINOR, 4, -1)]
    if arch in ("x86_64", "i686"):
        plats += [f"manylinux2014_{arch}"]  # pip adds manylinux2010/manylinux1
    elif arch in ("aarch64", "ppc64le", "s390x", "armv7l"):
        plats += [f"manylinux2014_{arch}"]
    for p in plats:
        args += ["--platform", p]
    return args


def wheelhouse_dir(arch: str, flavor: Flavor = Flavor.CPU, cache_dir: Path = WHEEL_CACHE) -> Path:
    """Where the flavor's wheels are cached: the two torch builds never share a folder."""
    return Path(cache_dir) / f"cp{TARGET_PYTHON.replace('.', '')}-{arch}{SPECS[flavor].wheel_dir_suffix}"


def pip_env(flavor: Flavor, no_links: Path) -> dict[str, str]:
    """pip's environment for the flavor's download: the CUDA one points find-links at the empty
    folder ``no_links``, so a ``+cpu`` torch that pip's configured find-links offer is never taken
    (an empty ``PIP_FIND_LINKS`` does not override pip.conf; a folder does)."""
    env = dict(os.environ)
    if not SPECS[flavor].local_builds_allowed:
        env["PIP_FIND_LINKS"] = str(no_links)
    return env


def fill_wheelhouse(
    requirements: Path, *, arch: str, cache_dir: Path = WHEEL_CACHE, log: Log = print,
    flavor: Flavor = Flavor.CPU,
) -> list[Path]:
    """``pip download`` every pinned package (cp311, ``arch``) into the cache; the wheels to use."""
    pins = read_pins(requirements)
    dest = wheelhouse_dir(arch, flavor, cache_dir)
    dest.mkdir(parents=True, exist_ok=True)
    log(f"wheels: pip download -r {requirements.name} into {dest} (cached between builds) ...")
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="no-find-links-") as no_links:
        _run_step(
            "pip download (wheelhouse)",
            [sys.executable, "-m", "pip", "download", "--disable-pip-version-check",
             "-r", str(requirements), "-d", str(dest), "--only-binary=:all:",
             *_platform_args(arch)],
            timeout=3600,
            log=log,
            env=pip_env(flavor, Path(no_links)),
        )
    wheels = select_wheels(dest.glob("*.whl"), pins, local_builds=SPECS[flavor].local_builds_allowed)
    size = sum(w.stat().st_size for w in wheels) / 2**20
    log(f"wheels: {len(wheels)} wheels, {size:.0f} MiB, ready in {time.monotonic() - t0:.0f} s")
    return wheels


def _link_or_copy(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _docker_build(
    client: docker.DockerClient, ctx: Path, *, name: str, base_image: str, rhash: str,
    nocache: bool, log: Log,
):
    recent: deque[str] = deque(maxlen=40)
    errors: list[str] = []
    image_id = None
    try:
        stream = client.api.build(
            path=str(ctx), tag=name, rm=True, forcerm=True, decode=True, nocache=nocache,
            buildargs={"BASE": base_image, "RUNTIME_HASH": rhash},
            labels={LABEL_HASH: rhash, LABEL_BASE: base_image},
            timeout=3600,
        )
        for chunk in stream:
            if "stream" in chunk:
                for line in chunk["stream"].splitlines():
                    if line.strip():
                        recent.append(line.rstrip())
                        log("  " + line.rstrip())
            elif "status" in chunk:  # pulling a base from a registry
                if "progress" not in chunk:
                    line = f"{chunk.get('id', '')} {chunk['status']}".strip()
                    recent.append(line)
                    log("  " + line)
            if "error" in chunk:
                errors.append(str(chunk.get("errorDetail", {}).get("message") or chunk["error"]))
            aux = chunk.get("aux")
            if isinstance(aux, dict) and "ID" in aux:
                image_id = aux["ID"]
    except (docker.errors.DockerException, OSError) as exc:
        errors.append(f"{type(exc).__name__}: {exc}")
    if errors:
        hint = None
        if base_image == REGISTRY_BASE and any(
            w in " ".join(errors) for w in ("pull", "registry", "dial tcp", "lookup", "manifest")
        ):
            hint = (
                f"The registry base {REGISTRY_BASE} could not be pulled. Without a registry, "
                "build the base offline as root: `python -m grader sandbox build --base debootstrap`."
            )
        raise InfraError(
            f"Step 'docker build' failed: {errors[-1].strip()}\n"
            f"--- last output ---\n{_tail(recent)}",
            hint=hint,
        )
    try:
        return client.images.get(image_id or name)
    except (docker.errors.DockerException, OSError) as exc:
        raise InfraError(f"Step 'docker build' finished but {name} cannot be found: {exc}") from exc


def build_runtime_image(
    client: docker.DockerClient, *, base: str = "auto", log: Log = print, force: bool = False,
    flavor: Flavor = Flavor.CPU,
):
    """Return the up-to-date runtime image, building it (offline when possible) if it is missing.

    ``base``: ``auto`` | ``debootstrap`` | ``registry`` (see :func:`choose_base`).
    ``force``: rebuild without the layer cache even when the image is up to date.
    ``flavor``: the CPU image, or the CUDA one (same Dockerfile, ``requirements-cuda.txt``).
    """
    name = runtime_image_name(flavor=flavor)
    found = find_runtime_image(client, flavor=flavor)
    if found is not None and not force:
        log(f"{name} is up to date: id {found.id}")
        return found
    kind = choose_base(
        base,
        have_debootstrap=shutil.which("debootstrap") is not None,
        is_root=hasattr(os, "geteuid") and os.geteuid() == 0,
        have_local_base=base != "registry" and _image_exists(client, DEBOOTSTRAP_BASE),
    )
    base_image = make_debootstrap_base(client, log=log) if kind == "debootstrap" else REGISTRY_BASE
    if kind == "registry":
        log(f"base: {REGISTRY_BASE} (from a registry, unless already present)")
    arch = _engine_arch(client)
    requirements = SANDBOX_DIR / SPECS[flavor].requirements
    wheels = fill_wheelhouse(requirements, arch=arch, log=log, flavor=flavor)

    BUILD_DIR.mkdir(parents=True, exist_ok=True)
    ctx = Path(tempfile.mkdtemp(prefix="context-", dir=BUILD_DIR))
    try:
        shutil.copy2(SANDBOX_DIR / "Dockerfile", ctx / "Dockerfile")
        shutil.copy2(requirements, ctx / "requirements.txt")  # the Dockerfile installs this name
        (ctx / "wheels").mkdir()
        for w in wheels:
            _link_or_copy(w, ctx / "wheels" / w.name)
        rhash = runtime_hash(flavor=flavor)
        log(f"build: docker build -> {name} (FROM {base_image})")
        t0 = time.monotonic()
        img = _docker_build(
            client, ctx, name=name, base_image=base_image, rhash=rhash, nocache=force, log=log
        )
        log(f"build: done in {time.monotonic() - t0:.0f} s")
        _remove_install_stage(client, rhash, log)
        if found is not None and found.id != img.id:  # --force: the old image lost its tag
            try:
                client.images.remove(found.id)
            except (docker.errors.DockerException, OSError):
                pass  # still used by a container, or already gone
        return img
    finally:
        shutil.rmtree(ctx, ignore_errors=True)


def _remove_install_stage(client: docker.DockerClient, rhash: str, log: Log) -> None:
    """Delete this build's untagged install-stage image (the venv plus the wheels).

    Only images labelled by this Dockerfile's first stage with this hash are touched.
    """
    try:
        stages = client.images.list(
            filters={
                "dangling": True,
                "label": ["grader.runtime.stage=install", f"{LABEL_HASH}={rhash}"],
            }
        )
        for stage in stages:
            client.images.remove(stage.id, force=False)
    except (docker.errors.DockerException, OSError) as exc:
        log(f"warning: could not delete the build's install stage image: {exc}")
