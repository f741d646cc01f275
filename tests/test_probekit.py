"""The probe kit and an exercise's shared.py: staged into the sandbox, and what the judge gets from them.

The kit (``grader/sandbox/probekit.py``) is the probes' common code; ``shared.py`` is code an
exercise's probes and checks both use. Both run in the sandbox, so these tests go through a
real local worker: what matters is what crosses the protocol, never what the kit returns
in-process.
"""

import sys
import textwrap
from pathlib import Path

import pytest

from grader.wire import protocol
from grader.exercise import Limits
from grader.judge.plugin import importable
from grader.wire.protocol import Opaque
from grader.sandbox import probekit
from grader.backends.client import Sandbox
from grader.backends.local_backend import local_starter
from grader.backends.staging import LIB_FILES, stage

PROBES = '''
import torch

import cand
import shared
from grader.sandbox import probekit


def described(name):
    return {"value": probekit.opaque(getattr(cand, name)), "tensor": probekit.tensor(getattr(cand, name))}


def pair():
    result = cand.pair()
    if not (isinstance(result, tuple) and len(result) == 2):
        return probekit.returned_instead(result)
    return {"a": result[0]}


def caught():
    try:
        cand.fails()
    except Exception as e:
        return {"raised": probekit.raised(e)}
    return {"raised": None}


def from_shared():
    return shared.ANSWER


def _in_rank(scenario, rank, world_size):
    import torch.distributed as dist

    t = torch.tensor([float(rank + 1)])
    probekit.call_candidate(cand, cand.in_rank, rank, t)
    dist.all_reduce(t)
    return {"sum": t}


def ranks(world_size):
    return probekit.run_ranks(world_size, {}, _in_rank)
'''

CANDIDATE = '''
import numpy


class AlwaysEqual:
    def __eq__(self, other):
        return True

    def __repr__(self):
        return "AlwaysEqual()"


thing = AlwaysEqual()
number = numpy.float64(0.5)
records = {"tensor": 1, "requires_grad": False}


def pair():
    return (1, 2, 3)


def fails():
    raise KeyError("no such layer: 'head'")


def in_rank(rank, t):
    if rank == 1:
        raise ValueError("rank one refuses")
'''


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def test_the_staged_layout_is_exactly_the_worker_its_kit_the_removal_the_protocol_the_probes_and_the_submission(
        tmp_path):
    probes, sub = tmp_path / "probes.py", tmp_path / "mine.py"
    probes.write_text("")
    sub.write_text("")
    staged = stage(probes=probes, submission=sub, module_name="mine", dest=tmp_path / "stage", guard={"open": False})
    assert _files(staged.root) == sorted([*LIB_FILES, "probes/probes.py", "submission/mine.py",
                                          "subset/mine.json", "subset/mine.py"])
    assert [rel for rel in LIB_FILES if rel.startswith("lib/grader/") and "/" in rel[len("lib/grader/"):]
            and not rel.endswith("__init__.py")] == [
        "lib/grader/wire/protocol.py", "lib/grader/wire/module_ast.py", "lib/grader/wire/guarded.py",
        "lib/grader/sandbox/worker.py", "lib/grader/sandbox/worker_server.py", "lib/grader/sandbox/removal.py",
        "lib/grader/sandbox/absent_ops.py", "lib/grader/sandbox/absent_imports.py", "lib/grader/sandbox/probekit.py",
        "lib/grader/sandbox/instruments.py", "lib/grader/sandbox/restricted.py", "lib/grader/sandbox/runtime_subset.py",
        "lib/grader/sandbox/guard_ops.py", "lib/grader/sandbox/no_exec.py", "lib/grader/sandbox/sealed.py",
        "lib/grader/sandbox/forkserver.py"]
    assert (staged.lib / "grader/wire/__init__.py").read_text() == ""  # the worker imports the protocol alone
    assert "restricted.load('mine', __file__, {'open': False})" in (staged.root / "subset/mine.py").read_text()
    assert (staged.lib / "grader/sandbox/probekit.py").read_bytes() == Path(probekit.__file__).read_bytes()


def test_an_exercise_s_shared_py_is_staged_beside_the_probes_and_nothing_else_of_its_folder(tmp_path):
    from grader.exercise import load_exercise

    ex = load_exercise("ddp_step")
    assert ex.shared == ex.root / "shared.py"
    staged = stage(probes=ex.probes, submission=ex.stub, module_name=ex.module_name, dest=tmp_path / "s",
                   shared=ex.shared)
    assert [f for f in _files(staged.root) if not f.startswith("lib/")] == [
        "probes/probes.py", "probes/shared.py", "submission/ddp_step.py"]
    assert (staged.root / "probes/shared.py").read_bytes() == ex.shared.read_bytes()
    assert load_exercise("clip_grad_norm").shared is None  # optional


def test_shared_py_is_part_of_the_exercise_fingerprint(tmp_path):
    import shutil

    from grader.exercise import load_exercise

    copy = tmp_path / "running_stats"
    shutil.copytree(load_exercise("running_stats").root, copy)
    before = load_exercise(copy).fingerprint
    (copy / "shared.py").write_text((copy / "shared.py").read_text() + "\n# changed\n")
    assert load_exercise(copy).fingerprint != before


def test_the_checks_import_shared_py_from_its_file_without_the_exercise_folder_on_sys_path(tmp_path, monkeypatch):
    exercise = tmp_path / "ex"
    (exercise / "checks").mkdir(parents=True)
    (exercise / "shared.py").write_text("ANSWER = 42\n")
    (exercise / "ex.py").write_text("raise SystemExit('the stub must never be imported by the judge')\n")
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, "shared", raising=False)
    importable(exercise / "checks", exercise / "shared.py")
    import shared

    assert shared.ANSWER == 42 and Path(shared.__file__) == (exercise / "shared.py").resolve()
    assert str(exercise.resolve()) not in sys.path and str((exercise / "checks").resolve()) in sys.path


@pytest.fixture
def box(tmp_path):
    (tmp_path / "probes.py").write_text(textwrap.dedent(PROBES))
    (tmp_path / "cand.py").write_text(textwrap.dedent(CANDIDATE))
    (tmp_path / "shared.py").write_text("ANSWER = [1, 2]\n")
    staged = stage(probes=tmp_path / "probes.py", submission=tmp_path / "cand.py", module_name="cand",
                   dest=tmp_path / "stage", shared=tmp_path / "shared.py")
    sandbox = Sandbox(local_starter(staged, [], Limits(memory_mb=4096, forkserver=True)), call_timeout_s=60.0)
    yield sandbox
    sandbox.close()


def _value(result):
    assert result.ok, result.error or result.failure_message
    return result.value


def test_what_the_contract_did_not_promise_reaches_the_judge_as_an_opaque_naming_it(box):
    got = _value(box.call("described", ["thing"]))
    assert isinstance(got["value"], Opaque) and got["value"].type_name == "AlwaysEqual"
    assert got["value"].repr == "AlwaysEqual()" and got["value"] != got["value"]
    assert isinstance(got["tensor"], Opaque) and got["tensor"].type_name == "AlwaysEqual"
    number = _value(box.call("described", ["number"]))["value"]
    assert isinstance(number, Opaque) and number.type_name == "float64"
    # a plain dict shaped like a probe's own record still arrives as a description, never as the record
    records = _value(box.call("described", ["records"]))["value"]
    assert isinstance(records, Opaque) and records.type_name == "dict"


def test_a_result_the_probe_cannot_use_is_described_for_expect_returned(box):
    from grader.judge import expect_returned

    got = _value(box.call("pair"))
    assert got == {"returned": "a tuple of length 3"}
    with pytest.raises(AssertionError, match=r"^pair\(\) must return a pair; it returned a tuple of length 3$"):
        expect_returned(got, function="pair()", returns="a pair")


def test_a_caught_exception_is_the_record_expect_raised_reads(box):
    from grader.judge import expect_raised

    raised = _value(box.call("caught"))["raised"]
    assert raised["type"] == "KeyError" and "LookupError" in raised["qualnames"]
    expect_raised(raised, "LookupError", what="caught()", match="head")


def test_the_probes_import_shared_py_in_the_sandbox(box):
    assert _value(box.call("from_shared")) == [1, 2]


def test_ranks_run_a_gloo_group_and_a_candidate_error_comes_back_as_the_worker_s_record(box):
    one = _value(box.call("ranks", [1]))
    assert [r["sum"].item() for r in one["ranks"]] == [1.0]
    two = _value(box.call("ranks", [2]))["ranks"]
    error = two[1]["candidate_error"]
    assert error["type"] == "ValueError" and error["message"] == "rank one refuses" and error["builtin"] is True
    files = [f["file"] for f in error["trace"]["frames"]]
    assert files[-1].endswith("cand.py") and not any("probekit" in f for f in files)
    # rank 0's all_reduce has no peer: it fails (the peer closed) or is stopped, never left to hang
    assert {"stopped", "error"} & set(two[0]) and "sum" not in two[0]


def test_an_opaque_a_probe_builds_crosses_as_itself_and_caps_its_text():
    frame = protocol.encode({"type": "result", "v": Opaque("x" * 500, "y" * 500)}, strict=False)
    back = protocol.decode(frame[protocol.FRAME_HEADER_BYTES:])["v"]
    assert isinstance(back, Opaque) and back.type_name == "x" * 200 and back.repr == "y" * 200


def test_recording_sgd_updates_like_torch_sgd_and_logs_its_calls():
    import torch

    torch.manual_seed(0)
    mine, theirs = torch.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    theirs.load_state_dict(mine.state_dict())
    ledger = probekit.Ledger()
    opt = probekit.RecordingSGD(mine, 0.1, 0.9, ledger=ledger, step_event=lambda: "step:off")
    ref = torch.optim.SGD(theirs.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(4, 3)
    for _ in range(3):
        for model, o in ((mine, opt), (theirs, ref)):
            o.zero_grad()
            model(x).pow(2).sum().backward()
            o.step()
    assert ledger.events == ["zero_grad", "step:off"] * 3 and len(ledger.kept["step_grads"]) == 3
    assert set(vars(opt)) == {"_named", "param_groups", "state"}  # what an optimizer has: nothing recorded on it
    for name, p in probekit.parameters(mine).items():
        assert torch.allclose(p, dict(theirs.named_parameters())[name].detach())

