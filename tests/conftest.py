"""Shared fixtures. Docker-marked tests skip without an engine, except in CI.

CI sets GRADER_REQUIRE_DOCKER=1: there a missing engine or runtime image is a
failure, never a quiet skip.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
TOY = REPO / "tests" / "fixtures" / "toy"
REQUIRE_DOCKER = os.environ.get("GRADER_REQUIRE_DOCKER") == "1"

# Exercise checks and hostile submissions under tests/ are data for the tests, not tests.
collect_ignore_glob = ["fixtures/*", "hostile/*"]
pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True)
def _private_data_dir(tmp_path_factory, monkeypatch):
    """Every test gets its own practice data folder: none reads or writes the user's real history."""
    monkeypatch.setenv("GRADER_DATA_DIR", str(tmp_path_factory.mktemp("grader-data")))


def _unavailable(reason: str):
    if REQUIRE_DOCKER:
        pytest.fail(f"GRADER_REQUIRE_DOCKER=1 but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def docker_client():
    """A connected docker client with the runtime image present."""
    from grader.errors import InfraError
    from grader.sandbox import engine, image

    try:
        client = engine.connect(timeout=10)
    except InfraError as e:
        _unavailable(f"no Docker engine ({e})")
    if image.find_runtime_image(client) is None:
        _unavailable(f"runtime image {image.runtime_image_name()} not built (run `grader sandbox build`)")
    return client


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.get_closest_marker("docker") is not None and "docker_client" not in item.fixturenames:
            item.fixturenames.insert(0, "docker_client")
        if item.get_closest_marker("gpu") is not None:
            item.add_marker(pytest.mark.skipif(not _has_cuda(), reason="needs a CUDA GPU"))


def _has_cuda() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:
        return False


@pytest.fixture
def toy():
    from grader.exercise import load_exercise

    return load_exercise(TOY)


@pytest.fixture
def no_leftover_containers(docker_client):
    """Asserts a test leaves no grader container behind."""
    before = {c.id for c in docker_client.containers.list(all=True, filters={"label": "grader.managed=1"})}
    yield
    after = {c.id for c in docker_client.containers.list(all=True, filters={"label": "grader.managed=1"})}
    assert after <= before, f"containers left behind: {sorted(after - before)}"
