"""Shared fixtures. Docker-marked tests skip without an engine, except in CI.

CI sets GRADER_REQUIRE_DOCKER=1: there a missing engine or runtime image is a
failure, never a quiet skip.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
TOY = REPO / "tests" / "fixtures" / "toy"
REQUIRE_DOCKER = os.environ.get("GRADER_REQUIRE_DOCKER") == "1"

# Exercise checks and hostile submissions under tests/ are data for the tests, not tests.
collect_ignore_glob = ["fixtures/*", "hostile/*"]
pytest_plugins = ["pytester", "tests.serve_fixtures"]  # the service's fixtures (tests/serve_fixtures.py)


@pytest.fixture(scope="session", autouse=True)
def _panel_signing_key(tmp_path_factory):
    """One signing key for the whole run, as one panel machine has (a session fixture, so module-scoped
    batches and bundles are signed with it too); never the user's own. Tests of the key's own life
    (made on first use, mode 0600) point ``GRADER_KEY_FILE`` elsewhere or unset it."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GRADER_KEY_FILE", str(tmp_path_factory.mktemp("panel-key") / "signing.key"))
        yield


@pytest.fixture(autouse=True)
def _private_data_dir(tmp_path_factory, monkeypatch):
    """Every test gets its own practice data folder: none reads or writes the user's real history."""
    monkeypatch.setenv("GRADER_DATA_DIR", str(tmp_path_factory.mktemp("grader-data")))


@pytest.fixture(autouse=True)
def container_tag(monkeypatch) -> str:
    """Every test's sandbox containers carry their own ``grader.tag`` label, so a test can tell its
    containers from those of a test running beside it on another xdist worker."""
    tag = f"test-{uuid.uuid4().hex[:12]}"
    monkeypatch.setenv("GRADER_TAG", tag)
    return tag


def tagged_containers(client, tag: str) -> set[str]:
    """Ids of the grader containers, running or not, that carry ``tag``."""
    return {c.id for c in client.containers.list(all=True, filters={"label": ["grader.managed=1",
                                                                              f"grader.tag={tag}"]})}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """On an xdist worker, a test holds the suite's engine lock from setup to teardown (tests/exclusive.py).

    Only the worker itself: a pytest that a test starts inside it is not part of the run."""
    if not hasattr(item.config, "workerinput"):
        yield
        return
    from tests.exclusive import held_for

    with held_for(item):
        yield


def _unavailable(reason: str):
    if REQUIRE_DOCKER:
        pytest.fail(f"GRADER_REQUIRE_DOCKER=1 but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def docker_client():
    """A connected docker client with the runtime image present."""
    from grader.errors import InfraError
    from grader.backends import engine
    from grader.build import naming

    try:
        client = engine.connect(timeout=10)
    except InfraError as e:
        _unavailable(f"no Docker engine ({e})")
    if naming.find_runtime_image(client) is None:
        _unavailable(f"runtime image {naming.runtime_image_name()} not built (run `grader sandbox build`)")
    return client


@pytest.fixture
def gpu_sandbox() -> str:
    """The sandbox a ``gpu``-marked test grades in, whichever this GPU machine has: Docker when an engine answers
    and the CUDA image is built, else the local sandbox when this Python's torch sees a GPU (a machine with a
    GPU and PyTorch but no Docker). Neither: the test fails, saying what to set up."""
    from grader.errors import InfraError
    from grader.backends import engine, gpu_probe
    from grader.build import naming
    from grader.wire.grant import Flavor

    if engine.engine_available():
        try:
            client = engine.connect(timeout=10)
            if naming.find_runtime_image(client, flavor=Flavor.CUDA) is not None:
                return "docker"
        except InfraError:
            pass
    caps = gpu_probe.local_capabilities()
    if caps.cuda_version is not None and caps.devices > 0:
        return "local"
    pytest.fail("a GPU test needs Docker with the CUDA image (`grader sandbox build --cuda`) or a CUDA build of torch "
                f"in this Python (it has torch {caps.torch_version}, CUDA {caps.cuda_version}, {caps.devices} GPUs)")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.get_closest_marker("docker") is not None and "docker_client" not in item.fixturenames:
            item.fixturenames.insert(0, "docker_client")
        if item.get_closest_marker("gpu") is not None:
            item.add_marker(pytest.mark.skipif(not _has_cuda(), reason="needs a CUDA GPU"))


def _has_cuda() -> bool:
    """A GPU this machine can use: the judge's torch sees one, or (the judge's torch being a CPU
    build) ``nvidia-smi`` lists one for the sandbox's CUDA image."""
    try:
        import torch

        if torch.cuda.is_available():
            return True
    except Exception:
        pass
    import subprocess

    try:
        listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return any(line.startswith("GPU ") for line in listed.splitlines())


@pytest.fixture
def toy_workspace(tmp_path, monkeypatch):
    """A toy workspace made by `grader init`'s function, and the test standing inside it."""
    from grader.exercise import load_exercise
    from grader.practice.workspace import init_workspace

    ws = tmp_path / "toy-work"
    init_workspace(load_exercise(TOY), ws)
    monkeypatch.chdir(ws)
    return ws


def toy_with_deadlines(dest: Path, *, call_timeout_s: float, grading_timeout_s: float) -> Path:
    """A copy of the toy exercise at ``dest`` with other deadlines (the toy's own call deadline is 3 s).

    A test that must act while a call is surely still running gives it a deadline longer than the test."""
    import re
    import shutil

    shutil.copytree(TOY, dest)
    toml = dest / "exercise.toml"
    text = re.sub(r"(?m)^call_timeout_s = .*$", f"call_timeout_s = {call_timeout_s}", toml.read_text())
    toml.write_text(re.sub(r"(?m)^grading_timeout_s = .*$", f"grading_timeout_s = {grading_timeout_s}", text))
    return dest


@pytest.fixture
def toy():
    from grader.exercise import load_exercise

    return load_exercise(TOY)


@pytest.fixture
def plant_container(docker_client):
    """Create (not start) a grader-labelled container as a grading owned by ``owner_pid`` would have;
    every one planted is removed when the test ends, whatever reaped it or not."""
    from grader.build import naming
    from grader.backends.docker_backend import labels_for

    planted = []

    def plant(grading_id: str, owner_pid: int):
        labels = dict(labels_for(grading_id), **{"grader.owner_pid": str(owner_pid)})
        planted.append(docker_client.containers.create(naming.runtime_image_name(), ["sleep", "60"], labels=labels))
        return planted[-1]

    yield plant
    for container in planted:
        try:
            container.remove(force=True)
        except Exception:
            pass  # already reaped: what most tests want


@pytest.fixture
def no_leftover_containers(docker_client, container_tag):
    """Asserts a test leaves none of its grader containers behind (those carrying its tag)."""
    yield
    left = tagged_containers(docker_client, container_tag)
    assert not left, f"containers left behind: {sorted(left)}"
