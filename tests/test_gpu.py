"""GPU policy and device requests, decided without a GPU."""

import pytest

from grader.errors import InfraError, UsageError
from grader.exercise import GpuPolicy
from grader.sandbox.gpu import GpuRequest, gpu_skip_reason, parse_gpus, plan_gpus


@pytest.mark.parametrize("spec, request_", [
    ("all", GpuRequest(count=-1)), ("1", GpuRequest(count=1)), ("2", GpuRequest(count=2)),
    ("device=0,1", GpuRequest(device_ids=("0", "1"))), ("device=3", GpuRequest(device_ids=("3",))),
])
def test_parse_gpus(spec, request_):
    assert parse_gpus(spec) == request_


@pytest.mark.parametrize("bad", ["0", "-1", "many", "device=", "device=a", ""])
def test_bad_gpus_spec_names_the_value(bad):
    with pytest.raises(UsageError, match=f"Invalid --gpus {bad!r}"):
        parse_gpus(bad)


def test_device_request_matches_docker_run_gpus():
    all_ = GpuRequest(count=-1).to_docker()
    assert all_["Count"] == -1 and all_["Capabilities"] == [["gpu"]]
    ids = GpuRequest(device_ids=("0", "1")).to_docker()
    assert ids["DeviceIDs"] == ["0", "1"] and ids["Capabilities"] == [["gpu"]]


def test_policy_none_never_requests_and_says_so():
    assert plan_gpus(GpuPolicy.NONE, None).request is None
    plan = plan_gpus(GpuPolicy.NONE, "all")
    assert plan.request is None and "ignored" in plan.warning


def test_policy_optional_requests_when_asked_and_warns_otherwise():
    assert plan_gpus(GpuPolicy.OPTIONAL, "1").request == GpuRequest(count=1)
    plan = plan_gpus(GpuPolicy.OPTIONAL, None)
    assert plan.request is None and "skipped" in plan.warning


def test_policy_required_refuses_without_gpus():
    with pytest.raises(UsageError, match="needs a GPU"):
        plan_gpus(GpuPolicy.REQUIRED, None)
    assert plan_gpus(GpuPolicy.REQUIRED, "all").request == GpuRequest(count=-1)


def test_gpu_checks_skip_or_fail_by_policy_when_sandbox_sees_none():
    assert gpu_skip_reason(GpuPolicy.OPTIONAL, 0) == "no GPU in the sandbox"
    assert gpu_skip_reason(GpuPolicy.OPTIONAL, 1) is None
    with pytest.raises(InfraError, match="sees none"):
        gpu_skip_reason(GpuPolicy.REQUIRED, 0)
