"""``--engine ray``: the same scores as the local engine, against a Ray head the suite starts on loopback."""

from __future__ import annotations

import csv
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from grader.cli import main
from tests.test_batch_cli import ROOT, make_submissions


NO_TOKEN = {"RAY_AUTH_MODE": "disabled"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def ray_head():
    """A one-node Ray cluster on loopback, as `ray start --head` makes one on a real head node.

    Token authentication is off, said explicitly: otherwise the head turns it on
    whenever a token file exists (a local ``ray.init()`` elsewhere writes one) and
    the driver, given an explicit address, does not.
    """
    pytest.importorskip("ray")
    ray_cli = shutil.which("ray", path=str(Path(sys.executable).parent))
    port = free_port()
    start = [ray_cli, "start", "--head", "--node-ip-address", "127.0.0.1", "--port", str(port), "--num-cpus", "2",
             "--include-dashboard", "false", "--disable-usage-stats", "--object-store-memory", str(200 * 2**20)]
    subprocess.run(start, check=True, capture_output=True, timeout=120, env={**os.environ, **NO_TOKEN})
    yield f"127.0.0.1:{port}"
    subprocess.run([ray_cli, "stop", "--force"], capture_output=True, timeout=120)


def summary(out: Path) -> list[dict]:
    with open(out / "summary.csv", newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.docker
def test_ray_engine_scores_equal_the_local_engine(tmp_path, ray_head, no_leftover_containers, monkeypatch):
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    subs = make_submissions(tmp_path / "subs")
    runner = CliRunner()
    local = runner.invoke(main, ["batch", str(subs), "--output", str(tmp_path / "local"), "--jobs", "2",
                                 "--exercise-root", str(ROOT)], catch_exceptions=False)
    viaray = runner.invoke(main, ["batch", str(subs), "--output", str(tmp_path / "ray"), "--engine", "ray",
                                  "--ray-address", ray_head, "--exercise-root", str(ROOT)], catch_exceptions=False)
    assert local.exit_code == 0, local.output
    assert viaray.exit_code == 0, viaray.output
    assert summary(tmp_path / "ray") == summary(tmp_path / "local")
    assert any(r["status"] == "graded" for r in summary(tmp_path / "ray"))


def test_without_ray_the_engine_says_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    result = CliRunner().invoke(main, ["batch", str(make_submissions(tmp_path / "subs")), "--output",
                                       str(tmp_path / "out"), "--engine", "ray", "--exercise-root", str(ROOT)])
    assert result.exit_code == 2 and "grader[ray]" in result.output


def test_a_cluster_that_refuses_us_is_not_graded_with_what_to_check(tmp_path, monkeypatch):
    """Ray's own refusal of a driver without the cluster's token, as the CLI reports it: exit 3, no traceback."""
    def refuse(**_):
        try:
            raise RuntimeError("Failed to connect to GCS. ray.exceptions.AuthenticationError: RPC error: "
                               "InvalidAuthToken: Authentication token is missing or incorrect.")
        except RuntimeError as e:
            raise ConnectionError("Failed to connect to Ray cluster at 127.0.0.1:6379") from e

    monkeypatch.setitem(sys.modules, "ray", SimpleNamespace(is_initialized=lambda: False, init=refuse))
    result = CliRunner().invoke(main, ["batch", str(make_submissions(tmp_path / "subs")), "--output",
                                       str(tmp_path / "out"), "--engine", "ray", "--ray-address", "127.0.0.1:6379",
                                       "--exercise-root", str(ROOT)])
    assert result.exit_code == 3, result.output
    assert "Could not connect to the Ray cluster at 127.0.0.1:6379" in result.output
    assert "RAY_AUTH_MODE=token" in result.output and "Traceback" not in result.output
