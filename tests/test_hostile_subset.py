"""The second round's attacks (issue 25): each one gave full marks with no flag before the language subset.

Every attack class of the issue is a fast test on the judge's decision (the subset check on the real
exercise's policy, then the credit rules, with a sandbox whose nets saw nothing: the worst case), and
the thread, pickle and computed-dunder cases are also real gradings (``tests/hostile/subset/``).
"""

from pathlib import Path

import pytest

from grader.exercise import load_exercise
from grader.host.grading import grade
from grader.host import decision
from grader.subset.audit import audit_exercise_file
from grader.reports.model import CheckResult, Report, Status, ViolationCode as V, Visibility, total

HOSTILE = Path(__file__).parent / "hostile" / "subset"
TOY = Path(__file__).parent / "fixtures" / "toy"


def decided(exercise: str, source: str):
    """The audit of ``source`` as a submission to ``exercise``, and the report the judge makes of it when every
    check passed in a sandbox whose nets saw nothing."""
    audit = audit_exercise_file(load_exercise(exercise), source)
    checks = [CheckResult(id=f"test_x.py::c{i}", name=f"c{i}", status=Status.PASSED, score=1.0, max_score=1.0,
                          visibility=Visibility.HIDDEN) for i in range(3)]
    report = Report(exercise=exercise, graded=True, checks=checks)
    report = decision.apply(report, audit)
    score, max_score = total(report.checks)
    return audit, report.model_copy(update={"score": score, "max_score": max_score})


#: (exercise, source, violations it must have as (code, line), forbidden APIs it must name)
ATTACKS = {
    "the listed function called in a new thread": (
        "attention",
        "import threading\nimport torch.nn.functional as F\n\n\ndef scaled_dot_product_attention(q, k, v, mask=None):\n"
        "    out = {}\n    t = threading.Thread(target=lambda: out.update(r=F.scaled_dot_product_attention(q, k, v)))\n"
        "    t.start()\n    t.join()\n    return out['r']\n",
        {(V.IMPORT, 1)}, {"torch.nn.functional.scaled_dot_product_attention"}),
    "fetched with functools.reduce(getattr, ...)": (
        "attention",
        "import functools\nimport torch\n\n_SDPA = functools.reduce(getattr, ['nn', 'functional', "
        "'scaled_dot_product_attention'], torch)\n",
        {(V.ATTRIBUTE_BUILTIN, 4), (V.MODULE_VALUE, 4)}, set()),
    "through a list element": (
        "label_smoothing_ce",
        "import torch\n\n_MODULES = [torch.nn.functional]\n\n\ndef label_smoothing_cross_entropy(logits, target, "
        "smoothing=0.0, ignore_index=-100):\n    return _MODULES[0].cross_entropy(logits, target)\n",
        {(V.MODULE_VALUE, 3)}, {"torch.nn.functional.cross_entropy"}),
    "a function's default argument": (
        "rmsnorm_rope",
        "import torch\nfrom torch import nn\n\n\nclass RMSNorm(nn.Module):\n"
        "    def forward(self, x, _f=torch.nn.functional):\n        return _f.rms_norm(x, x.shape[-1:])\n",
        {(V.MODULE_VALUE, 6)}, {"torch.nn.functional.rms_norm"}),
    "a parameter": (
        "custom_layer",
        "import torch.nn.functional as F\n\n\ndef _project(mod, x, w, b):\n    return mod.linear(x, w, b)\n\n\n"
        "def forward(x, w, b):\n    return _project(F, x, w, b)\n",
        {(V.MODULE_VALUE, 9)}, {"torch.nn.functional.linear"}),
    "unwrapped through __wrapped__": (
        "clip_grad_norm",
        "import torch\n\n\ndef clip_grad_norm(parameters, max_norm):\n"
        "    return torch.nn.utils.clip_grad_norm_.__wrapped__(parameters, max_norm)\n",
        {(V.DUNDER, 5)}, {"torch.nn.utils.clip_grad_norm_"}),
    "called under torch._C.DisableTorchFunction()": (
        "running_stats",
        "import torch\nimport torch.nn.functional as F\n\n\ndef normalise(x, mean, var):\n"
        "    with torch._C.DisableTorchFunction():\n        return F.batch_norm(x, mean, var)\n",
        {(V.PRIVATE, 6)}, {"torch.nn.functional.batch_norm"}),
    "a pickle GLOBAL/REDUCE switching the sandbox's net off": (
        "autograd_function",
        "import pickle\n\npickle.loads(b'cbuiltins\\nexec\\n(Vimport sys\\ntR.')\n",
        {(V.IMPORT, 1)}, set()),
    "torch.load(..., weights_only=False) of a pickle that does the same": (
        "checkpoint_resume",
        "import io\nimport torch\n\n_NET = torch.load(io.BytesIO(b'...'), weights_only=False)\n",
        {(V.UNSAFE_LOAD, 4)}, set()),
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_every_attack_class_is_refused_by_the_judge_from_the_source(attack):
    exercise, source, violations, apis = ATTACKS[attack]
    audit, report = decided(exercise, source)
    assert violations <= {(v.code, v.line) for v in audit.violations}, audit.violations
    assert apis <= {h.api for h in audit.forbidden}, audit.forbidden
    assert audit.blocking and report.score == 0 and all(c.not_run for c in report.checks)


@pytest.mark.parametrize("method", ["x.clamp(min, max)", "x.clip(min, max)", "x.clamp_min(min).clamp_max(max)",
                                    "torch.Tensor.clamp(x, min, max)"])
def test_a_tensor_method_is_the_forbidden_api_and_costs_all_credit_when_no_check_saw_it(method):
    """autograd_function forbids torch.clamp and its Tensor methods; the candidate's own `clamp` is a function."""
    source = (f"import torch\n\n\ndef clamp(x, min=None, max=None):\n    return {method}\n")
    audit, report = decided("autograd_function", source)
    assert {h.api for h in audit.forbidden} <= {"torch.clamp", "torch.clip"} and audit.forbidden
    assert not audit.blocking  # a public API: the file runs, and the sandbox says which checks it cost
    assert report.score == 0 and "no check saw called" in report.checks[0].message


# ------------------------------------------------------------------ real gradings


@pytest.mark.slow
@pytest.mark.parametrize("name, line", [("thread_call.py", 5), ("pickle_global.py", 6)])
def test_the_thread_and_the_pickle_are_refused_before_anything_runs(name, line):
    report = grade(TOY, HOSTILE / name, sandbox="local")
    assert report.graded and report.score == 0 and report.checks and all(c.not_run for c in report.checks)
    assert (V.IMPORT, line) in {(v.code, v.line) for v in report.violations}


@pytest.mark.slow
def test_a_dunder_fetched_by_a_computed_name_is_refused_by_the_sandboxs_guard():
    """The file stays in the subset (getattr with a computed name is allowed), runs, and the guard refuses the
    name: a violation in the judge's words, and no check keeps its credit."""
    report = grade(TOY, HOSTILE / "computed_dunder.py", sandbox="local")
    _refused_at_run_time(report)


@pytest.mark.docker
@pytest.mark.slow
def test_the_guard_holds_in_docker_too(no_leftover_containers):
    _refused_at_run_time(grade(TOY, HOSTILE / "computed_dunder.py", sandbox="docker"))


def _refused_at_run_time(report):
    assert report.graded, report.not_graded_reason
    [v] = report.violations
    assert (v.code, v.how, v.text.startswith(decision.GUARD_TEXT)) == (V.GUARD, "runtime", True)
    assert report.score == 0 and all(c.status is Status.FAILED and decision.GUARD_TEXT in c.message
                                     for c in report.checks if c.status is not Status.SKIPPED)
