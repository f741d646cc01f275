"""A command that uses Docker first removes containers of gradings that are gone, and says how many."""

import os
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.cli.leftovers import reap_leftovers
from grader.processes import pid_alive
from tests.conftest import tagged_containers

TOY = Path(__file__).parent / "fixtures" / "toy"


class Printed:
    def __init__(self):
        self.lines = []

    def print(self, text, **_):
        self.lines.append(str(text))


def test_without_an_engine_nothing_is_said_and_nothing_fails(monkeypatch, tmp_path):
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/none.sock")
    console = Printed()
    assert reap_leftovers(console) == 0 and console.lines == []


@pytest.mark.docker
@pytest.mark.exclusive  # any grading's reaper would remove the planted container: none may run meanwhile
def test_submit_removes_a_dead_gradings_container_and_says_so(docker_client, no_leftover_containers,
                                                             plant_container, container_tag):
    orphan = plant_container("crashed", owner_pid=999999999)
    running = plant_container("running", owner_pid=os.getpid())
    # A container an earlier test's killed grading left is reaped too: every dead owner's is counted.
    dead = sum(c.labels.get("grader.owner_host") == socket.gethostname() and not pid_alive(int(c.labels["grader.owner_pid"]))
               for c in docker_client.containers.list(all=True, filters={"label": "grader.owner_pid"}))
    assert dead >= 1
    r = CliRunner().invoke(main, ["submit", str(TOY), str(TOY / "solution.py"), "--exercise-root", str(TOY.parent), "--sandbox", "docker",
                                  "--no-history"])
    assert r.exit_code == 0, r.output
    said = f"removed {dead} sandbox container{'s' if dead != 1 else ''} left by gradings that are gone"
    assert said in r.output, r.output
    ids = tagged_containers(docker_client, container_tag)
    assert orphan.id not in ids and running.id in ids  # a live owner's container is left alone
