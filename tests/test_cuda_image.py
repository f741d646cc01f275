"""The CUDA runtime image: its name and pins, which gradings pick it, and each way GPU grading fails honestly.

Everything here runs on a machine with no GPU: Docker is faked where its answer matters
(the real ``docker.errors.APIError`` text an engine without the NVIDIA toolkit gives).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import docker.errors
import pytest

from grader.errors import InfraError
from grader.exercise import GpuPolicy, Limits, load_exercise
from grader.build import naming
from grader.build import wheels as build_wheels
from grader.backends.client import Sandbox, SandboxStartError
from grader.backends.docker_backend import docker_starter
from grader.wire.grant import Flavor, flavor_for
from grader.backends.gpu import gpu_skip_reason, gpu_start_error
from grader.wire.grant import GpuRequest
from grader.backends.oci_runtime import require_runtime

SANDBOX = Path(__file__).resolve().parent.parent / "sandbox"
EXERCISES = Path(__file__).resolve().parent.parent / "exercises"

NO_TOOLKIT = docker.errors.APIError(
    "500 Server Error for http+docker://localhost/v1.47/containers/0f3c/start: Internal Server Error",
    explanation='could not select device driver "" with capabilities: [[gpu]]')
NO_GPU_ON_HOST = docker.errors.APIError(
    "500 Server Error for http+docker://localhost/v1.47/containers/0f3c/start: Internal Server Error",
    explanation="failed to create task for container: failed to create shim task: OCI runtime create failed: "
                "runc create failed: unable to start container process: error during container init: error running "
                "hook #0: error running hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\n"
                "nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown")


# ---------------------------------------------------------------- name, pins, wheelhouse


def test_cuda_image_has_its_own_name_and_the_cpu_tag_does_not_depend_on_it(tmp_path):
    cpu, cuda = naming.runtime_image_name(), naming.runtime_image_name(flavor=Flavor.CUDA)
    assert cpu.startswith("grader-runtime:") and cuda.startswith("grader-runtime-cuda:")
    assert cpu.split(":")[1] != cuda.split(":")[1]
    d = tmp_path / "sandbox"
    shutil.copytree(SANDBOX, d)
    (d / "requirements-cuda.txt").write_text((d / "requirements-cuda.txt").read_text() + "# changed\n")
    assert naming.runtime_tag(d) == naming.runtime_tag()  # the CPU image other gradings use stays up to date
    assert naming.runtime_tag(d, Flavor.CUDA) != naming.runtime_tag(flavor=Flavor.CUDA)


def test_cuda_requirements_pin_the_same_torch_and_shared_packages_and_the_nvidia_wheels():
    cpu = build_wheels.read_pins(SANDBOX / "requirements.txt")
    cuda = build_wheels.read_pins(SANDBOX / "requirements-cuda.txt")  # raises on any unpinned line
    assert {name: cuda[name] for name in cpu} == cpu
    assert "+" not in cuda["torch"]
    assert any(name.startswith("nvidia-cuda-runtime") for name in cuda)


def test_cuda_wheelhouse_refuses_a_cpu_build_of_torch_and_says_which_it_found(tmp_path):
    wheels = [tmp_path / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl",
              tmp_path / "numpy-2.4.6-cp311-cp311-manylinux_2_28_x86_64.whl"]
    pins = {"torch": "2.13.0", "numpy": "2.4.6"}
    assert len(build_wheels.select_wheels(wheels, pins)) == 2  # the CPU image takes +cpu, as before
    with pytest.raises(InfraError, match=r"torch==2\.13\.0 \(torch 2\.13\.0\+cpu was found: a local build"):
        build_wheels.select_wheels(wheels, pins, local_builds=False)
    cuda_wheel = tmp_path / "torch-2.13.0-cp311-cp311-manylinux_2_28_x86_64.whl"
    assert cuda_wheel in build_wheels.select_wheels(wheels + [cuda_wheel], pins, local_builds=False)


def test_cuda_download_hides_pips_find_links_and_uses_its_own_wheelhouse(tmp_path, monkeypatch):
    seen = {}

    def fake_step(step, cmd, *, timeout, env=None):
        seen.update(cmd=cmd, env=env)
        dest = Path(cmd[cmd.index("-d") + 1])
        for name, version in build_wheels.read_pins(SANDBOX / "requirements-cuda.txt").items():
            (dest / f"{name.replace('-', '_')}-{version}-py3-none-any.whl").touch()
        return ""

    monkeypatch.setattr(build_wheels, "run_step", fake_step)
    monkeypatch.setenv("PIP_FIND_LINKS", "/opt/wheels")
    wheels = build_wheels.fill_wheelhouse(SANDBOX / "requirements-cuda.txt", arch="x86_64", cache_dir=tmp_path,
                                          log=lambda line: None, flavor=Flavor.CUDA)
    assert {w.parent.name for w in wheels} == {"cp311-x86_64-cuda"}
    links = Path(seen["env"]["PIP_FIND_LINKS"])
    assert links != Path("/opt/wheels") and not links.exists()  # an empty folder, gone after the download


# ---------------------------------------------------------------- which image a grading uses


def test_gpus_pick_the_cuda_image():
    assert flavor_for(None) is Flavor.CPU
    assert flavor_for(GpuRequest(count=-1)) is Flavor.CUDA


class _Images:
    def __init__(self, present):
        self.present, self.asked = set(present), []

    def get(self, name):
        self.asked.append(name)
        if name not in self.present:
            raise docker.errors.ImageNotFound(f"No such image: {name}")
        return type("Image", (), {"id": "sha256:" + "0" * 64})()


class _Client:
    def __init__(self, present=(), runtimes=None):
        self.images = _Images(present)
        self.runtimes = runtimes or {"runc": {"path": "runc"}}

    def info(self):
        return {"Runtimes": self.runtimes}


def _open(monkeypatch, tmp_path, client, gpu):
    from grader.backends import docker_backend, engine
    from grader.backends.factory import open_sandbox

    monkeypatch.setattr(engine, "connect", lambda *a, **k: client)
    monkeypatch.setattr(docker_backend, "reap", lambda *a, **k: 0)
    ex = load_exercise(EXERCISES / "mixed_precision_step")
    return open_sandbox("docker", exercise=ex, submission=ex.root / ex.config.exercise.submission,
                        workdir=tmp_path, grading_id="g", gpu=gpu, runtime="runc")


def test_a_grading_with_gpus_opens_the_cuda_image_and_one_without_the_cpu_image(monkeypatch, tmp_path):
    cuda, cpu = naming.runtime_image_name(flavor=Flavor.CUDA), naming.runtime_image_name()
    client = _Client(present=[cuda, cpu])
    _, info = _open(monkeypatch, tmp_path / "a", client, GpuRequest(count=-1))
    assert info.image == cuda
    _, info = _open(monkeypatch, tmp_path / "b", client, None)
    assert info.image == cpu


def test_no_cuda_image_built_is_not_graded_and_says_how_to_build_it(monkeypatch, tmp_path):
    client = _Client(present=[naming.runtime_image_name()])  # only the CPU image, as on a fresh machine
    with pytest.raises(InfraError, match="grader-runtime-cuda:[0-9a-f]{12}, which is not built") as e:
        _open(monkeypatch, tmp_path, client, GpuRequest(count=1))
    assert "grader sandbox build --cuda" in e.value.hint
    assert e.value.exit_code == 3


def _auto_with(monkeypatch, client, host=(1, "")):
    from grader.backends import choice, engine, gpu_probe

    if client is not None:
        client.close = lambda: None
    monkeypatch.setattr(engine, "engine_available", lambda *a, **k: client is not None)
    monkeypatch.setattr(engine, "connect", lambda *a, **k: client)
    monkeypatch.setattr(gpu_probe, "host_gpus", lambda: host)
    return choice


def test_auto_with_gpus_never_falls_back_and_names_the_cuda_build(monkeypatch):
    """--gpus with --sandbox auto: Docker's CUDA image or "not graded" (exit 3), never the local sandbox unasked."""
    choice = _auto_with(monkeypatch, _Client(present=[naming.runtime_image_name()]))
    assert choice.choose_sandbox("auto").kind == "docker"
    with pytest.raises(InfraError, match="CUDA image grader-runtime-cuda:[0-9a-f]{12}, which is not built") as e:
        choice.choose_sandbox("auto", gpu=GpuRequest(count=-1))
    assert e.value.exit_code == 3
    assert "`grader sandbox build --cuda`" in e.value.hint and "`--sandbox local`" in e.value.hint
    built = _Client(present=[naming.runtime_image_name(), naming.runtime_image_name(flavor=Flavor.CUDA)],
                    runtimes={"runc": {}, "nvidia": {"path": "nvidia-container-runtime"}})
    assert _auto_with(monkeypatch, built).choose_sandbox("auto", gpu=GpuRequest(count=1)).kind == "docker"


def test_auto_with_gpus_on_a_machine_without_a_gpu_names_the_missing_gpu_first(monkeypatch):
    choice = _auto_with(monkeypatch, _Client(present=[naming.runtime_image_name()]),
                        host=(0, "`nvidia-smi` is not installed (no NVIDIA driver)"))
    with pytest.raises(InfraError, match="--gpus all asked for a GPU, and this machine has none: `nvidia-smi` is not "
                                         "installed") as e:
        choice.choose_sandbox("auto", gpu=GpuRequest(count=-1))
    assert "nvidia-smi" in e.value.hint


def test_auto_with_gpus_and_no_engine_is_not_graded_not_the_local_sandbox(monkeypatch):
    choice = _auto_with(monkeypatch, None)
    with pytest.raises(InfraError, match="no Docker engine answered") as e:
        choice.choose_sandbox("auto", gpu=GpuRequest(count=-1))
    assert "`--sandbox local`" in e.value.hint and "NOT isolated" in e.value.hint


# ---------------------------------------------------------------- engines that cannot give a GPU


class _Container:
    id = "0f3c"
    removed = False

    def __init__(self, error):
        self.error = error

    def start(self):
        raise self.error

    def remove(self, force=False):
        _Container.removed = True


class _StartingClient:
    def __init__(self, error):
        self.containers = type("C", (), {"create": lambda _, **kw: _Container(error)})()
        self.api = type("A", (), {"attach_socket": lambda _, *a, **k: object()})()


@pytest.mark.parametrize("error, says", [
    (NO_TOOLKIT, "NVIDIA Container Toolkit is not installed"),
    (NO_GPU_ON_HOST, "is there an NVIDIA GPU and driver on this host"),
])
def test_an_engine_that_cannot_give_a_gpu_is_infrastructure_in_plain_words(error, says):
    start = docker_starter(_StartingClient(error), {"image": "i", "device_requests": [GpuRequest(-1).to_docker()]})
    with pytest.raises(InfraError, match=says) as e:
        start()
    assert _Container.removed
    assert "Docker said:" in str(e.value) and "\n" not in str(e.value)
    box = Sandbox(start, call_timeout_s=5)
    with pytest.raises(SandboxStartError, match=says):  # what the judge records as "not graded"
        box.ensure_started()


def test_a_start_error_without_gpus_is_left_as_docker_said_it():
    start = docker_starter(_StartingClient(NO_TOOLKIT), {"image": "i"})
    with pytest.raises(docker.errors.APIError):
        start()
    assert gpu_start_error(docker.errors.APIError("500 Server Error: no space left on device")) is None


def test_runsc_without_nvproxy_refuses_gpus_and_says_how_to_turn_it_on():
    bare = _Client(runtimes={"runc": {}, "runsc": {"path": "/usr/bin/runsc"}})
    require_runtime(bare, "runsc")  # no GPU asked for: fine
    with pytest.raises(InfraError, match="without --nvproxy") as e:
        require_runtime(bare, "runsc", gpu=True)
    assert '"runtimeArgs": ["--nvproxy"]' in e.value.hint
    off = _Client(runtimes={"runsc": {"path": "/usr/bin/runsc", "runtimeArgs": ["--nvproxy=false"]}})
    with pytest.raises(InfraError, match="without --nvproxy"):
        require_runtime(off, "runsc", gpu=True)
    for args in (["--nvproxy"], ["--platform=systrap", "--nvproxy=true"]):
        require_runtime(_Client(runtimes={"runsc": {"path": "/usr/bin/runsc", "runtimeArgs": args}}), "runsc",
                        gpu=True)


def test_skip_reason_tells_a_cpu_torch_from_a_cuda_torch_without_a_device():
    cpu = gpu_skip_reason(GpuPolicy.OPTIONAL, 0, cuda_version=None, torch_version="2.13.0+cpu")
    assert "2.13.0+cpu is a CPU build" in cpu
    cuda = gpu_skip_reason(GpuPolicy.OPTIONAL, 0, cuda_version="13.0", torch_version="2.13.0")
    assert "built for CUDA 13.0, but no device reached it" in cuda
    with pytest.raises(InfraError, match="sees none .*CUDA 13.0"):
        gpu_skip_reason(GpuPolicy.REQUIRED, 0, cuda_version="13.0", torch_version="2.13.0")


# ---------------------------------------------------------------- whole gradings, no GPU needed


def _with_policy(tmp_path: Path, policy: str) -> Path:
    root = tmp_path / "mixed_precision_step"
    shutil.copytree(EXERCISES / "mixed_precision_step", root)
    toml = root / "exercise.toml"
    toml.write_text(toml.read_text().replace('gpu = "optional"', f'gpu = "{policy}"'))
    return root


@pytest.mark.slow
def test_optional_gpu_checks_skip_without_gpus_and_a_gpu_asked_for_is_never_skipped(tmp_path):
    """The local sandbox runs the judge's CPU torch. Without --gpus, an optional exercise's GPU checks skip with the
    reason; with --gpus, the request cannot be met, and neither an optional nor a required exercise is graded."""
    from grader.host.grading import grade

    # The reference, not the stub: the untouched stub is answered by the judge alone, in no sandbox.
    reference = EXERCISES.parent / "solutions" / "mixed_precision_step" / "amp_step.py"
    optional = grade(_with_policy(tmp_path / "o", "optional"), reference, sandbox="local")
    assert optional.graded
    skipped = [c for c in optional.checks if c.status.value == "skipped"]
    assert skipped and all("no GPU in the sandbox" in c.message for c in skipped)
    assert optional.environment.gpus is None and optional.environment.sandbox_gpus == 0
    for policy in ("optional", "required"):
        asked = grade(_with_policy(tmp_path / policy[0] / "g", policy), reference, sandbox="local", gpus=GpuRequest(count=-1))
        assert not asked.graded and asked.score == 0 and asked.checks == []
        assert "a CPU build: no GPU can reach it" in asked.not_graded_reason
        assert asked.environment.gpus == "all"


@pytest.mark.docker
def test_gpus_on_an_engine_without_the_nvidia_toolkit_is_not_graded(docker_client, tmp_path):
    """Real Docker, real answer: on this (GPU-less, toolkit-less) engine a GPU grading is "not graded", refused
    before a container starts (no GPU on the host) or by the engine's own error."""
    from grader.host.grading import grade

    if "nvidia" in (docker_client.info().get("Runtimes") or {}):
        pytest.skip("this engine has the NVIDIA runtime: the GPU smoke script covers it")
    report = grade(EXERCISES / "mixed_precision_step", sandbox="docker", gpus=GpuRequest(count=-1),
                   image=naming.runtime_image_name())
    assert not report.graded and report.score == 0
    reason = report.not_graded_reason
    assert any(said in reason for said in ("NVIDIA Container Toolkit", "NVIDIA GPU and driver", "this machine has none",
                                           "which is not built")), reason


@pytest.mark.gpu
def test_on_a_gpu_host_the_cuda_checks_run(gpu_sandbox):
    """What scripts/gpu-smoke.sh checks, for a GPU machine's test run, in whichever sandbox it has: Docker's CUDA
    image, or the local sandbox (its own CUDA torch, the memory watchdog instead of the address-space limit)."""
    from grader.host.grading import grade

    report = grade(EXERCISES / "mixed_precision_step", Path(__file__).parent.parent / "solutions" /
                   "mixed_precision_step" / "amp_step.py", sandbox=gpu_sandbox, gpus=GpuRequest(count=-1))
    assert report.graded, report.not_graded_reason
    env = report.environment
    assert env.cuda_version and env.sandbox_gpus
    if gpu_sandbox == "docker":
        assert env.image == naming.runtime_image_name(flavor=Flavor.CUDA)
    else:
        assert env.local_gpu_env and "CUDA_VISIBLE_DEVICES" in env.local_gpu_env
    cuda = [c for c in report.checks if "cuda" in c.id]
    assert cuda and all(c.status.value == "passed" for c in cuda), [(c.name, c.status, c.message) for c in cuda]


@pytest.mark.gpu
def test_on_a_gpu_host_checkpoint_resume_holds_the_cuda_generators(gpu_sandbox, tmp_path):
    """checkpoint_resume's CUDA check: the reference passes it, and the survivors recorded as "observable only on a
    GPU" (solutions/checkpoint_resume/equivalent_mutants.toml) fail it; on the CPU they cannot be told apart."""
    from grader.host.grading import grade

    reference = Path(__file__).parent.parent / "solutions" / "checkpoint_resume" / "checkpoint.py"
    source = reference.read_text(encoding="utf-8")
    saved = '        state["cuda"] = torch.cuda.get_rng_state_all()\n'
    restored = '    if "cuda" in state and torch.cuda.is_available():\n'
    assert saved in source and restored in source, "the reference's CUDA lines moved: update this test"
    mutants = {"no CUDA state saved": source.replace(saved, "        pass\n"),
               "CUDA state never restored": source.replace(restored, restored.replace(" in state", " not in state"))}

    def cuda_check(path):
        report = grade(EXERCISES / "checkpoint_resume", path, sandbox=gpu_sandbox, gpus=GpuRequest(count=-1))
        assert report.graded, report.not_graded_reason
        assert report.environment.sandbox_gpus
        return next(c for c in report.checks if c.id.endswith("test_cuda_rng_state"))

    check = cuda_check(reference)
    assert check.status.value == "passed", (check.status, check.message)
    for what, text in mutants.items():
        path = tmp_path / what.replace(" ", "_") / "checkpoint.py"
        path.parent.mkdir()
        path.write_text(text, encoding="utf-8")
        check = cuda_check(path)
        assert check.status.value == "failed", (what, check.status, check.message)
