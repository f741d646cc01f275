"""The container's lock-down, decided by a pure function, then seen in a real engine."""

import os
from pathlib import Path

import pytest

from grader.exercise import Limits
from grader.backends.docker_backend import LABEL, container_kwargs, reap
from grader.wire.grant import GpuRequest
from grader.backends.staging import Staged
from tests.conftest import tagged_containers


def kwargs(**over):
    limits = Limits(memory_mb=512, cpus=1.5, pids=64, nofile=128, fsize_mb=8, tmpfs_mb=32, grading_timeout_s=100)
    return container_kwargs(image="img", staged=Staged(Path("/stage")),
                            forbidden=["torch.mul"], limits=limits, grading_id="g1", **over)


def test_lockdown_defaults():
    k = kwargs()
    assert k["log_config"]["Type"] == "none"  # nothing it writes is kept on the host
    assert k["network_mode"] == "none" and k["read_only"] is True
    assert k["user"] == "65534:65534" and k["cap_drop"] == ["ALL"]
    assert k["security_opt"] == ["no-new-privileges"]
    assert k["mem_limit"] == k["memswap_limit"] == 512 * 2**20  # no extra swap
    assert k["pids_limit"] == 64 and k["nano_cpus"] == 1_500_000_000
    assert {u["Name"]: u["Hard"] for u in k["ulimits"]} == {"nofile": 128, "fsize": 8 * 2**20}
    assert "size=32m" in k["tmpfs"]["/tmp"] and "noexec" in k["tmpfs"]["/tmp"]
    assert k["volumes"] == {"/stage": {"bind": "/sandbox", "mode": "ro"}}
    assert k["labels"][LABEL] == "1" and k["labels"]["grader.grading"] == "g1"
    assert "device_requests" not in k


def test_a_tag_names_the_runs_containers_and_is_absent_unless_set(monkeypatch):
    monkeypatch.setenv("GRADER_TAG", "spring-panel")
    assert kwargs()["labels"]["grader.tag"] == "spring-panel"
    monkeypatch.delenv("GRADER_TAG")
    assert "grader.tag" not in kwargs()["labels"]


def test_pid1_is_the_worker_server_bounding_its_own_lifetime():
    cmd = kwargs()["command"]
    assert cmd == ["python3", "-P", "-s", "-B", "-m", "grader.sandbox.worker_server", "--probes",
                   "/sandbox/probes/probes.py", "--submission-dir", "/sandbox/submission", "--forbid", "torch.mul",
                   "--lifetime-s", "160", "--max-frame-bytes", str(16 * 1024 * 1024)]


def test_gpu_request_becomes_a_device_request():
    k = kwargs(gpu=GpuRequest(count=-1))
    assert k["device_requests"][0]["Capabilities"] == [["gpu"]] and k["device_requests"][0]["Count"] == -1


@pytest.mark.docker
def test_engine_applies_the_lockdown(docker_client, tmp_path):
    from grader.build import naming

    k = kwargs()
    k.update(image=naming.runtime_image_name(), volumes={str(tmp_path): {"bind": "/sandbox", "mode": "ro"}},
             command=["true"])
    container = docker_client.containers.create(**k)
    try:
        host = container.attrs["HostConfig"]
        assert host["NetworkMode"] == "none" and host["ReadonlyRootfs"] is True
        assert host["CapDrop"] == ["ALL"] and host["SecurityOpt"] == ["no-new-privileges"]
        assert host["Memory"] == host["MemorySwap"] == 512 * 2**20 and host["PidsLimit"] == 64
        assert container.attrs["Config"]["User"] == "65534:65534"
    finally:
        container.remove(force=True)


@pytest.mark.docker
def test_reap_removes_containers_of_a_dead_owner(docker_client, plant_container, container_tag):
    orphan = plant_container("orphan", owner_pid=999999999)
    mine = plant_container("alive", owner_pid=os.getpid())
    reap(docker_client)
    names = tagged_containers(docker_client, container_tag)
    assert orphan.id not in names and mine.id in names
    reap(docker_client, grading_id="alive")
    assert mine.id not in tagged_containers(docker_client, container_tag)


@pytest.mark.gpu
@pytest.mark.docker
def test_device_request_exposes_a_gpu_in_the_container(docker_client, tmp_path):
    """On a GPU machine with the NVIDIA container runtime: --gpus all reaches the container."""
    from grader.build import naming

    k = kwargs(gpu=GpuRequest(count=-1))
    k.pop("log_config")  # a sandbox logs nothing; this probe's output is the diagnosis when it fails
    k.update(image=naming.runtime_image_name(), volumes={str(tmp_path): {"bind": "/sandbox", "mode": "ro"}},
             command=["sh", "-c", "ls /dev/nvidia0 /dev/nvidiactl"], detach=True)
    container = docker_client.containers.run(**k)
    try:
        assert container.wait(timeout=60)["StatusCode"] == 0, container.logs().decode()
    finally:
        container.remove(force=True)


def test_closing_a_docker_sandbox_removes_any_container_of_its_grading_left_behind(docker_client, tmp_path,
                                                                                    container_tag):
    """A worker the engine refused to remove (a fork bomb on a loaded machine: a fresh-clone run found one
    left behind) or one created and never started carries its grading's label: the sandbox's close finds
    it by that label and removes it, so no container outlives the grading that made it."""
    from grader.exercise import load_exercise
    from grader.build import naming
    from grader.backends.docker_backend import labels_for
    from grader.backends.factory import open_sandbox

    ex = load_exercise(Path(__file__).parent / "fixtures" / "toy")
    sandbox, _ = open_sandbox("docker", exercise=ex, submission=ex.stub, workdir=tmp_path, grading_id="swept-1")
    stray = docker_client.containers.create(naming.runtime_image_name(), ["sleep", "60"],
                                            labels=labels_for("swept-1"))
    other = docker_client.containers.create(naming.runtime_image_name(), ["sleep", "60"],
                                            labels=labels_for("another-grading"))
    try:
        assert tagged_containers(docker_client, container_tag) == {stray.id, other.id}
        sandbox.close()
        assert tagged_containers(docker_client, container_tag) == {other.id}  # only its own grading's
    finally:
        for c in (stray, other):
            try:
                c.remove(force=True)
            except Exception:
                pass
