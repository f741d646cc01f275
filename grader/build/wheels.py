"""The wheelhouse a runtime image installs from: every pinned package, downloaded on the host.

``pip download`` fills it (cp311 wheels for the engine's CPU architecture, cached under
``.build/wheels`` in the repository); the Dockerfile then installs with ``--no-index``, so
the build itself reaches no package index.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterable

from grader.build.naming import REPO_ROOT, SPECS
from grader.build.steps import Log, run_step
from grader.errors import InfraError
from grader.wire.grant import Flavor

BUILD_DIR = REPO_ROOT / ".build"
WHEEL_CACHE = BUILD_DIR / "wheels"

#: The interpreter inside the image (bookworm's python3, and python:3.11-slim's).
TARGET_PYTHON = "3.11"
#: Bookworm's glibc; manylinux wheels up to this level run on it.
TARGET_GLIBC_MINOR = 36

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
        run_step(
            "pip download (wheelhouse)",
            [sys.executable, "-m", "pip", "download", "--disable-pip-version-check",
             "-r", str(requirements), "-d", str(dest), "--only-binary=:all:",
             *_platform_args(arch)],
            timeout=3600,
            env=pip_env(flavor, Path(no_links)),
        )
    wheels = select_wheels(dest.glob("*.whl"), pins, local_builds=SPECS[flavor].local_builds_allowed)
    size = sum(w.stat().st_size for w in wheels) / 2**20
    log(f"wheels: {len(wheels)} wheels, {size:.0f} MiB, ready in {time.monotonic() - t0:.0f} s")
    return wheels
