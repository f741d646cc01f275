"""Building the sandbox runtime image, offline when the base is made here (``grader sandbox build``).

1. the base (``grader.build.base``): a debootstrap root made here, or the registry's python image;
2. a wheelhouse filled on the host by ``pip download`` (``grader.build.wheels``);
3. ``docker build`` of ``sandbox/Dockerfile``, which installs from the wheelhouse with ``--no-index``,
   tagged with the name every grading looks up (``grader.build.naming``).

Every failure is an ``InfraError`` that names the step and shows the tail of its output.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from collections import deque
from pathlib import Path

import docker

from grader.build.base import DEBOOTSTRAP_BASE, REGISTRY_BASE, choose_base, make_debootstrap_base
from grader.build.naming import LABEL_HASH, SANDBOX_DIR, SPECS, find_runtime_image, runtime_hash, runtime_image_name
from grader.build.steps import Log, engine_arch, image_exists, tail
from grader.build.wheels import BUILD_DIR, fill_wheelhouse
from grader.errors import InfraError
from grader.wire.grant import Flavor

LABEL_BASE = "grader.runtime.base"


# ---------------------------------------------------------------- requirements


# ---------------------------------------------------------------- helpers


def _link_or_copy(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


#: A classic builder's step line: ``Step 5/12 : RUN pip install ...``.
STEP = re.compile(r"^Step (\d+)/(\d+) : (.*)$")


def _docker_build(
    client: docker.DockerClient, ctx: Path, *, name: str, base_image: str, rhash: str,
    nocache: bool, log: Log, step: Log | None = None, raw: Path | None = None,
):
    """``step``: told each build step in one line (``step 5 of 12: RUN ...``) while every line docker prints goes
    to the file ``raw`` instead of ``log``; without it, ``log`` hears every line as docker prints it."""
    recent: deque[str] = deque(maxlen=40)
    out = open(raw, "w", encoding="utf-8") if raw is not None and step is not None else None

    def said(line: str) -> None:
        recent.append(line)
        if out is None:
            log("  " + line)
            return
        out.write(line + "\n")
        m = STEP.match(line)
        if m:
            step(f"step {m[1]} of {m[2]}: {m[3]}")

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
                        said(line.rstrip())
            elif "status" in chunk:  # pulling a base from a registry
                if "progress" not in chunk:
                    said(f"{chunk.get('id', '')} {chunk['status']}".strip())
            if "error" in chunk:
                errors.append(str(chunk.get("errorDetail", {}).get("message") or chunk["error"]))
            aux = chunk.get("aux")
            if isinstance(aux, dict) and "ID" in aux:
                image_id = aux["ID"]
    except (docker.errors.DockerException, OSError) as exc:
        errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        if out is not None:
            out.close()
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
            f"--- last output ---\n{tail(recent)}",
            hint=hint,
        )
    try:
        return client.images.get(image_id or name)
    except (docker.errors.DockerException, OSError) as exc:
        raise InfraError(f"Step 'docker build' finished but {name} cannot be found: {exc}") from exc


def build_runtime_image(
    client: docker.DockerClient, *, base: str = "auto", log: Log = print, force: bool = False,
    flavor: Flavor = Flavor.CPU, step: Log | None = None,
):
    """Return the up-to-date runtime image, building it (offline when possible) if it is missing.

    ``base``: ``auto`` | ``debootstrap`` | ``registry`` (see :func:`choose_base`).
    ``force``: rebuild without the layer cache even when the image is up to date.
    ``flavor``: the CPU image, or the CUDA one (same Dockerfile, ``requirements-cuda.txt``).
    ``step``: told each ``docker build`` step in one line, docker's own output then going to a file in
    the build folder (named in the log) rather than to ``log``.
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
        have_local_base=base != "registry" and image_exists(client, DEBOOTSTRAP_BASE),
    )
    base_image = make_debootstrap_base(client, log=log) if kind == "debootstrap" else REGISTRY_BASE
    if kind == "registry":
        log(f"base: {REGISTRY_BASE} (from a registry, unless already present)")
    arch = engine_arch(client)
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
        raw = BUILD_DIR / f"docker-build-{flavor.value}.log"
        log(f"build: docker build -> {name} (FROM {base_image})" + (f"; its output: {raw}" if step else ""))
        t0 = time.monotonic()
        img = _docker_build(
            client, ctx, name=name, base_image=base_image, rhash=rhash, nocache=force, log=log, step=step, raw=raw
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
