"""Forbidden APIs are absent from the sandbox (``grader.sandbox.removal``): every route a candidate took raises.

The issue-25 evasions each scored full marks past the old tripwire, which watched calls: the API
called in a new thread, unwrapped through ``__wrapped__``, under ``torch._C.DisableTorchFunction()``,
as a tensor method, through ``torch.ops.aten``, in ``inference_mode``. Here each one is a function of
one submission, called through a real worker (the local transport runs the same worker Docker does)
started with an exercise-like forbidden list. The judge's source check is not involved: these prove
the second net on its own. What a call reaches raises ``ForbiddenAPIError``, and the worker reports
it as an index into the list it was sent, never in its own words.
"""

from __future__ import annotations

import textwrap

import pytest
import torch

from grader.exercise import Limits
from grader.backends.client import Sandbox
from grader.backends.local_backend import local_starter
from grader.backends.staging import stage

#: API -> the operators it stands for, like autograd_function, clip_grad_norm, attention, the toy and
#: gradient_checkpointing/dynamic_batcher forbid them; the index of each is its place in this list.
FORBID = ["torch.clamp", "torch.clip", "torch.nn.functional.hardtanh", "torch.nn.utils.clip_grad_norm_",
          "torch.nn.utils.clip_grad_norm", "torch.nn.utils.get_total_norm", "torch.nn.MultiheadAttention",
          "torch.mul", "torch.utils.checkpoint", "time", "torch.nn.NoSuchLayer"]
KERNELS = {"torch.clamp": ["clamp", "clamp_*", "_foreach_clamp*"], "torch.clip": ["clip", "clip_"],
           "torch.nn.functional.hardtanh": ["hardtanh*", "relu6"]}
CLAMP, CLIP, HARDTANH, CLIP_NORM, CLIP_NORM_OLD, TOTAL_NORM, MHA, MUL, CHECKPOINT, TIME, MISSING = range(11)

PROBES = '''
import cand
from grader.sandbox import probekit


def run(name, *args):
    return getattr(cand, name)(*args)


def _in_rank(scenario, rank, world_size):
    return {"value": probekit.call_candidate(cand, cand.in_rank)}


def ranks(world_size):
    return probekit.run_ranks(world_size, {}, _in_rank)
'''

CANDIDATE = '''
import threading

import torch
from torch import mul as imported_mul


def x():
    return torch.linspace(-2, 2, 5, requires_grad=True)


# ---- the removed operator (aten::clamp), every way there is to reach it


def function():
    return torch.clamp(x(), 0, 1)


def method():
    return x().clamp(0, 1)


def aten_op():
    return torch.ops.aten.clamp.default(x(), 0, 1)


def variable_functions():
    return torch._C._VariableFunctions.clamp(x(), 0, 1)


def under_disable_torch_function():
    with torch._C.DisableTorchFunction():
        return torch.clamp(x(), 0, 1)


def in_inference_mode():
    with torch.inference_mode():
        return torch.ops.aten.clamp.default(x().detach(), 0, 1)


def in_no_grad():
    with torch.no_grad():
        return x().clamp_(0, 1)


def below_autograd():
    with torch._C._AutoDispatchBelowAutograd():
        return torch.clamp(x().detach(), 0, 1)


def in_a_thread():
    out = []

    def work():
        try:
            out.append(torch.clamp(x(), 0, 1))
        except Exception as e:
            out.append(type(e).__name__)

    t = threading.Thread(target=work)
    t.start()
    t.join()
    return out[0]


def under_vmap():
    return torch.vmap(lambda row: row.clamp(0, 1))(x().detach().reshape(5, 1))


def clamp_min_pattern():
    return x().clamp_min(0)


def python_dispatcher():
    torch._C._EnablePythonDispatcher()
    try:
        return torch.ops.aten.clamp.default(x(), 0, 1)
    finally:
        torch._C._DisablePythonDispatcher()


def decomposition():
    import torch._decomp

    return torch._decomp.decomposition_table[torch.ops.aten.clamp.default](x(), 0, 1)


def python_reference():
    import torch._refs

    return torch._refs.clamp(x(), 0, 1)


def clip_method():
    return x().clip(0, 1)


def relu6():
    return torch.nn.functional.relu6(x())


def honest():
    y = x()
    return torch.where(y < 0, torch.zeros_like(y), torch.where(y > 1, torch.ones_like(y), y))


def kernels_left():
    """Every kernel still in the computed dispatch table of a removed operator that is not the grader's
    (registered from nowhere, ":0"): a backend fallback or fallthrough only redispatches, a kernel computes."""
    import fnmatch

    left = []
    for op in torch._C._dispatch_get_all_op_names():
        if not fnmatch.fnmatchcase(op.split("::")[1].split(".")[0], "clamp*"):
            continue
        for line in torch._C._dispatch_dump_table(op).splitlines():
            if "[kernel]" in line and "registered at :0" not in line:
                left.append(f"{op} {line}")
    return left


# ---- a removed Python function, and what it wrapped


def _model_with_grads():
    p = torch.nn.Parameter(torch.ones(3))
    p.grad = torch.full((3,), 2.0)
    return [p]


def clip_norm():
    return torch.nn.utils.clip_grad_norm_(_model_with_grads(), 1.0)


def clip_norm_unwrapped():
    fn = torch.nn.utils.clip_grad_norm_
    return getattr(fn, "__wrapped__", fn)(_model_with_grads(), 1.0)


def clip_norm_from_closure():
    fn = torch.nn.utils.clip_grad_norm_
    inner = [c.cell_contents for c in fn.__closure__ or () if callable(c.cell_contents)]
    return inner[0](_model_with_grads(), 1.0) if inner else fn(_model_with_grads(), 1.0)


def clip_norm_deprecated_alias():
    return torch.nn.utils.clip_grad_norm(_model_with_grads(), 1.0)


def total_norm_private_body():
    import torch.nn.utils.clip_grad

    return torch.nn.utils.clip_grad._get_total_norm([p.grad for p in _model_with_grads()])


def clip_norm_kept_defaults():
    fn = torch.nn.utils.clip_grad_norm_
    return [fn.__defaults__, sorted(fn.__kwdefaults__ or {}), fn.__name__]


# ---- a removed class


def build_mha():
    return torch.nn.MultiheadAttention(4, 2)


class MyAttention(torch.nn.MultiheadAttention):
    def __init__(self):
        super().__init__(4, 2)


def subclass_mha():
    return MyAttention()


def mha_without_init():
    m = object.__new__(torch.nn.MultiheadAttention)
    torch.nn.Module.__init__(m)
    q = torch.ones(1, 2, 4)
    return torch.nn.MultiheadAttention.forward(m, q, q, q)


def transformer_layer():
    return torch.nn.TransformerEncoderLayer(4, 2)


def mha_is_still_a_class():
    return isinstance(torch.nn.Linear(2, 2), torch.nn.MultiheadAttention)


# ---- a removed C function with no operator pattern (the toy's torch.mul): the name, not the operator


def mul_function():
    return torch.mul(x(), 2)


def mul_imported_at_module_level():
    return imported_mul(x(), 2)


def mul_unwrapped():
    return getattr(torch.mul, "__wrapped__", torch.mul)(x(), 2)


def mul_operator():
    return x() * 2


# ---- removed packages


def import_time():
    import time

    return time.time()


def import_checkpoint():
    from torch.utils import checkpoint

    return checkpoint


def checkpoint_by_attribute():
    return torch.utils.checkpoint.checkpoint(lambda t: t * 2, x(), use_reentrant=False)


def import_threading_still_works():
    import threading

    return threading.active_count() >= 1


# ---- undoing it


def find_and_undo_the_registrations():
    import gc

    undone = 0
    for obj in gc.get_objects():
        if type(obj).__name__ in ("_DispatchModule", "Library"):
            for method in ("reset", "_destroy"):
                if hasattr(obj, method):
                    getattr(obj, method)()
                    undone += 1
    return torch.clamp(x(), 0, 1)


# ---- other processes


def _clamp_in_child():
    try:
        torch.clamp(torch.ones(2), 0, 1)
    except Exception as e:
        return type(e).__name__
    return "computed"


def in_a_spawned_process():
    import multiprocessing

    process = multiprocessing.get_context("spawn").Process(target=_clamp_in_child)
    process.start()
    process.join(60)
    return "ran" if process.exitcode == 0 else "never ran"  # its exec fails in the forked child


def in_rank():
    return _clamp_in_child()
'''


@pytest.fixture(scope="module")
def box(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("removal")
    (tmp / "probes.py").write_text(textwrap.dedent(PROBES))
    (tmp / "cand.py").write_text(textwrap.dedent(CANDIDATE))
    staged = stage(probes=tmp / "probes.py", submission=tmp / "cand.py", module_name="cand", dest=tmp / "stage")
    sandbox = Sandbox(local_starter(staged, FORBID, Limits(memory_mb=2048, forkserver=True), kernels=KERNELS),
                      call_timeout_s=60.0)
    yield sandbox
    sandbox.close()


def _raises(box, name: str, index: int, error: str = "ForbiddenAPIError"):
    result = box.call("run", [name])
    assert result.error is not None, f"{name} computed {result.value!r}"
    assert result.error.type == error, (name, result.error.type, result.error.message)
    assert result.forbidden == [index], (name, result.forbidden)
    return result


@pytest.mark.parametrize("name", [
    "function", "method", "aten_op", "variable_functions", "under_disable_torch_function", "in_inference_mode",
    "in_no_grad", "below_autograd", "under_vmap", "clamp_min_pattern", "python_dispatcher", "decomposition",
    "python_reference",
])
def test_every_route_to_a_removed_operator_raises(box, name):
    _raises(box, name, CLAMP)


def test_no_dispatch_key_keeps_a_kernel_of_a_removed_operator(box):
    """Keys torch's Python enum does not name (MkldnnCPU, Tracer, Batched) included."""
    assert box.call("run", ["kernels_left"]).value == []


def test_a_new_thread_meets_the_same_dispatcher(box):
    result = box.call("run", ["in_a_thread"])
    assert result.value == "ForbiddenAPIError" and result.forbidden == [CLAMP]


@pytest.mark.parametrize("name, index", [("clip_method", CLIP), ("relu6", HARDTANH)])
def test_each_api_is_named_by_its_own_index(box, name, index):
    _raises(box, name, index)


def test_honest_code_and_the_operator_the_api_does_not_stand_for_still_work(box):
    honest = box.call("run", ["honest"])
    assert honest.ok and honest.forbidden == [] and torch.equal(honest.value, torch.tensor([0.0, 0.0, 0.0, 1.0, 1.0]))
    times = box.call("run", ["mul_operator"])  # torch.mul has no [forbidden.kernels]: the * operator is not it
    assert times.ok and times.forbidden == []
    assert box.call("run", ["import_threading_still_works"]).value is True


@pytest.mark.parametrize("name, index", [
    ("clip_norm", CLIP_NORM), ("clip_norm_unwrapped", CLIP_NORM), ("clip_norm_from_closure", CLIP_NORM),
    ("clip_norm_deprecated_alias", CLIP_NORM_OLD), ("total_norm_private_body", TOTAL_NORM),
])
def test_a_removed_python_function_leaves_nothing_of_the_original_reachable(box, name, index):
    _raises(box, name, index)


def test_a_removed_function_keeps_its_name_and_nothing_else(box):
    defaults, kwdefaults, name = box.call("run", ["clip_norm_kept_defaults"]).value
    assert defaults is None and kwdefaults == ["_grader_removed"] and name == "clip_grad_norm_"


@pytest.mark.parametrize("name", ["build_mha", "subclass_mha", "mha_without_init", "transformer_layer"])
def test_a_removed_class_can_be_neither_built_nor_used(box, name):
    _raises(box, name, MHA)


def test_a_removed_class_is_still_a_class(box):
    assert box.call("run", ["mha_is_still_a_class"]).value is False


@pytest.mark.parametrize("name", ["mul_function", "mul_imported_at_module_level", "mul_unwrapped"])
def test_a_c_function_is_replaced_wherever_torch_names_it(box, name):
    _raises(box, name, MUL)


def test_the_candidates_import_of_a_forbidden_package_fails(box):
    result = _raises(box, "import_time", TIME, error="ForbiddenImportError")
    assert "ImportError" in result.error.qualnames  # `except ImportError` in the candidate's code sees it as one
    _raises(box, "import_checkpoint", CHECKPOINT, error="ForbiddenImportError")
    _raises(box, "checkpoint_by_attribute", CHECKPOINT)


def test_the_hello_says_which_apis_are_packages_and_which_are_missing_as_indices(box):
    box.ensure_started()
    assert box.hello.forbidden_packages == [CHECKPOINT, TIME]
    assert box.hello.forbidden_missing == [MISSING]


@pytest.mark.slow
def test_a_process_multiprocessing_would_spawn_never_starts(box):
    """A spawned interpreter would import torch with nothing removed: no new program may start in the sandbox."""
    result = box.call("run", ["in_a_spawned_process"])
    assert result.value == "never ran", result


@pytest.mark.slow
def test_a_ddp_rank_removes_them_and_its_hits_come_back_with_the_call(box):
    result = box.call("ranks", [2])
    assert [r["value"] for r in result.value["ranks"]] == ["ForbiddenAPIError"] * 2, result.value
    assert result.forbidden == [CLAMP]


def test_the_registrations_cannot_be_found_or_undone(box):
    """Nothing in Python refers to the dispatcher libraries: gc finds none of ours to reset() or
    _destroy() (torch's own it does find are undone, so this runs last on the shared worker)."""
    _raises(box, "find_and_undo_the_registrations", CLAMP)
