"""GPU policy, device requests and the plan for each backend's capabilities, decided without a GPU."""

import pytest

from grader.errors import InfraError, UsageError
from grader.exercise import GpuPolicy
from grader.backends.gpu import DockerGpuCapabilities, LocalGpuCapabilities, LocalGpuSetup, gpu_request, gpu_skip_reason, plan_gpus
from grader.wire.grant import GpuRequest, parse_gpus
from grader.backends.gpu_probe import read_answer
from grader.reports.warning import WarningCode


@pytest.mark.parametrize("spec, request_", [
    ("all", GpuRequest(count=-1)), ("1", GpuRequest(count=1)), ("2", GpuRequest(count=2)),
    ("device=0,1", GpuRequest(device_ids=("0", "1"))), ("device=3", GpuRequest(device_ids=("3",))),
])
def test_parse_gpus_and_back(spec, request_):
    assert parse_gpus(spec) == request_
    assert str(request_) == spec


@pytest.mark.parametrize("bad", ["0", "-1", "many", "device=", "device=a", ""])
def test_bad_gpus_spec_names_the_value(bad):
    with pytest.raises(UsageError, match=f"Invalid --gpus {bad!r}"):
        parse_gpus(bad)


def test_device_request_matches_docker_run_gpus():
    all_ = GpuRequest(count=-1).to_docker()
    assert all_["Count"] == -1 and all_["Capabilities"] == [["gpu"]]
    ids = GpuRequest(device_ids=("0", "1")).to_docker()
    assert ids["DeviceIDs"] == ["0", "1"] and ids["Capabilities"] == [["gpu"]]


# ---------------------------------------------------------------- the policy (no machine looked at)


def test_policy_none_never_requests_and_says_so():
    assert gpu_request(GpuPolicy.NONE, None) == (None, None)
    request, warning = gpu_request(GpuPolicy.NONE, GpuRequest(count=-1))
    assert request is None and warning.code is WarningCode.GPUS_IGNORED and "ignored" in warning.message
    assert plan_gpus(GpuPolicy.NONE, GpuRequest(count=-1), None).request is None


def test_policy_optional_requests_when_asked_and_warns_otherwise():
    assert gpu_request(GpuPolicy.OPTIONAL, GpuRequest(count=1)) == (GpuRequest(count=1), None)
    request, warning = gpu_request(GpuPolicy.OPTIONAL, None)
    assert request is None and warning.code is WarningCode.NO_GPUS and "skipped" in warning.message
    assert plan_gpus(GpuPolicy.OPTIONAL, None, None).request is None


def test_policy_required_refuses_without_gpus_naming_the_gpu():
    with pytest.raises(UsageError, match="needs a GPU") as e:
        gpu_request(GpuPolicy.REQUIRED, None)
    assert e.value.exit_code == 2 and "--gpus all" in e.value.hint
    with pytest.raises(UsageError, match="needs a GPU"):
        plan_gpus(GpuPolicy.REQUIRED, None, None)
    assert gpu_request(GpuPolicy.REQUIRED, GpuRequest(count=-1)) == (GpuRequest(count=-1), None)


def test_a_request_without_capabilities_is_a_bug_not_a_dropped_gpu():
    with pytest.raises(TypeError, match="capabilities"):
        plan_gpus(GpuPolicy.OPTIONAL, GpuRequest(count=1), None)


# ---------------------------------------------------------------- Docker's capabilities


def _docker(**kw) -> DockerGpuCapabilities:
    base = dict(engine=True, cuda_image="grader-runtime-cuda:abc", cuda_image_built=True, host_gpus=1,
                nvidia_runtime=True)
    return DockerGpuCapabilities(**{**base, **kw})


def test_docker_that_can_give_a_gpu_plans_the_request_as_asked():
    plan = plan_gpus(GpuPolicy.REQUIRED, GpuRequest(count=-1), _docker())
    assert plan.request == GpuRequest(count=-1) and plan.local is None
    assert plan_gpus(GpuPolicy.OPTIONAL, GpuRequest(count=1), _docker(nvidia_runtime=None, host_gpus=None)).request


@pytest.mark.parametrize("policy", [GpuPolicy.OPTIONAL, GpuPolicy.REQUIRED])
@pytest.mark.parametrize("caps, says, hint", [
    (_docker(host_gpus=0, host_note="`nvidia-smi` is not installed (no NVIDIA driver)", engine=False,
             cuda_image_built=False),
     "--gpus all asked for a GPU, and this machine has none: `nvidia-smi` is not installed", "nvidia-smi"),
    (_docker(engine=False), "no Docker engine answered", "grader sandbox build --cuda"),
    (_docker(cuda_image_built=False), "CUDA image grader-runtime-cuda:abc, which is not built",
     "grader sandbox build --cuda"),
    (_docker(nvidia_runtime=False), "NVIDIA Container Toolkit", "nvidia-ctk runtime configure"),
])
def test_docker_that_cannot_give_a_gpu_is_refused_before_grading(policy, caps, says, hint):
    """Whatever the policy: a request is met or refused (not graded, exit 3), the missing GPU named first."""
    with pytest.raises(InfraError, match=says.replace("(", r"\(").replace(")", r"\)")) as e:
        plan_gpus(policy, GpuRequest(count=-1), caps)
    assert e.value.exit_code == 3 and hint in e.value.hint
    assert "--sandbox local" not in e.value.hint  # the user chose Docker: no other isolation is offered


# ---------------------------------------------------------------- the local sandbox's capabilities


def _local(**kw) -> LocalGpuCapabilities:
    base = dict(torch_version="2.11.0+cu130", cuda_version="13.0", devices=2, visible=None,
                ld_library_path="/usr/local/nvidia/lib64")
    return LocalGpuCapabilities(**{**base, **kw})


@pytest.mark.parametrize("spec, caps, env", [
    ("all", _local(), {"CUDA_VISIBLE_DEVICES": "0,1", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}),
    ("1", _local(), {"CUDA_VISIBLE_DEVICES": "0", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}),
    ("device=1", _local(), {"CUDA_VISIBLE_DEVICES": "1", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}),
    # The grader itself runs with CUDA_VISIBLE_DEVICES: counts are taken within it, in its order.
    ("all", _local(visible="2,3"), {"CUDA_VISIBLE_DEVICES": "2,3"}),
    ("1", _local(visible="3,2"), {"CUDA_VISIBLE_DEVICES": "3"}),
    ("device=2", _local(visible="2,3"), {"CUDA_VISIBLE_DEVICES": "2"}),
    ("device=3", _local(visible="2,3", device_order="PCI_BUS_ID"), {"CUDA_VISIBLE_DEVICES": "3",
                                                                    "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}),
])
def test_local_gpu_plan_passes_on_the_devices_asked_for_and_the_drivers_path(spec, caps, env):
    plan = plan_gpus(GpuPolicy.REQUIRED, parse_gpus(spec), caps)
    assert plan.request == parse_gpus(spec)
    assert plan.local == LocalGpuSetup(env={**env, "LD_LIBRARY_PATH": "/usr/local/nvidia/lib64",
                                            "CUDA_CACHE_DISABLE": "1"})


def test_local_gpu_plan_without_ld_library_path_passes_none():
    plan = plan_gpus(GpuPolicy.OPTIONAL, GpuRequest(count=1), _local(ld_library_path=None))
    assert "LD_LIBRARY_PATH" not in plan.local.env


@pytest.mark.parametrize("spec, caps, says", [
    ("all", _local(cuda_version=None, torch_version="2.13.0+cpu", devices=0),
     "runs this Python's torch 2.13.0+cpu, a CPU build: no GPU can reach it"),
    ("all", _local(devices=0), "torch 2.11.0+cu130 (CUDA 13.0) sees none"),
    ("all", _local(devices=0, visible=""), "sees none (CUDA_VISIBLE_DEVICES='')"),
    ("all", _local(torch_version=None, cuda_version=None, devices=0, error="ModuleNotFoundError: torch"),
     "cannot import torch: ModuleNotFoundError: torch"),
    ("3", _local(), "asked for 3 GPUs, and the local sandbox sees 2"),
    ("device=2", _local(), "sees 2 GPU"),
    ("device=1", _local(visible="2,3"), "does not include device 1"),
])
def test_local_sandbox_that_cannot_give_what_was_asked_is_refused(spec, caps, says):
    with pytest.raises(InfraError, match=says.replace("(", r"\(").replace(")", r"\)").replace("+", r"\+")) as e:
        plan_gpus(GpuPolicy.OPTIONAL, parse_gpus(spec), caps)
    assert e.value.exit_code == 3


def test_the_report_line_says_which_limit_applies_and_what_is_passed_on():
    setup = plan_gpus(GpuPolicy.REQUIRED, GpuRequest(count=1), _local()).local
    line = setup.describe(4096)
    assert "RLIMIT_AS" in line and "is off" in line and "watchdog on resident memory holds the 4096 MB" in line
    assert "CUDA_VISIBLE_DEVICES=0" in line and "CUDA_DEVICE_ORDER=PCI_BUS_ID" in line
    assert "LD_LIBRARY_PATH" in line and "/usr/local/nvidia" not in line  # named, its value kept for the JSON


def test_what_the_local_probe_child_says_is_read_as_data_only():
    said = read_answer('noise\n{"torch": "2.11.0", "cuda": "13.0", "devices": 1}\n', 0, visible=None,
                       ld_library_path=None)
    assert (said.torch_version, said.cuda_version, said.devices) == ("2.11.0", "13.0", 1)
    cpu = read_answer('{"torch": "2.13.0+cpu", "cuda": null, "devices": 0}', 0, visible="", ld_library_path=None)
    assert cpu.cuda_version is None and cpu.visible == ""
    broken = read_answer("Segmentation fault\n", -11, visible=None, ld_library_path=None)
    assert broken.torch_version is None and "status -11" in broken.error
    odd = read_answer('{"torch": 3, "cuda": ["x"], "devices": "8"}', 0, visible=None, ld_library_path=None)
    assert (odd.torch_version, odd.cuda_version, odd.devices) == (None, None, 0)


# ---------------------------------------------------------------- once the sandbox runs


def test_gpu_checks_skip_only_where_no_gpu_was_asked_for():
    assert gpu_skip_reason(GpuPolicy.OPTIONAL, 0) == "no GPU in the sandbox"
    assert gpu_skip_reason(GpuPolicy.OPTIONAL, 1) is None
    assert gpu_skip_reason(GpuPolicy.REQUIRED, 1, requested=True) is None
    with pytest.raises(InfraError, match="sees none"):
        gpu_skip_reason(GpuPolicy.REQUIRED, 0)
    with pytest.raises(InfraError, match="sees none"):  # asked for, not there: never a quiet skip
        gpu_skip_reason(GpuPolicy.OPTIONAL, 0, requested=True)
