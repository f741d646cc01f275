"""A check holds its own rule: a mistake another check covers must not crash it or cost it too.

Each case grades a correct solution with one rule broken (in the local sandbox) and asserts
the check covering that rule fails while the named neighbour passes.
"""

from pathlib import Path

from grader.grading import grade
from grader.reports.model import Status

SOLUTIONS = Path(__file__).resolve().parent.parent / "solutions"


def _statuses(exercise: str, source: str, tmp_path: Path, name: str) -> dict[str, Status]:
    sub = tmp_path / name
    sub.write_text(source)
    report = grade(exercise, sub, sandbox="local")
    assert report.graded, report.not_graded_reason
    return {c.id.split("::")[-1]: c.status for c in report.checks}


def test_a_forward_outside_autocast_costs_the_autocast_check_not_zero_grads(tmp_path):
    """mixed_precision_step: zero_grad's check crashed ("'forward:bfloat16' is not in list") on a float32 forward."""
    reference = (SOLUTIONS / "mixed_precision_step" / "amp_step.py").read_text()
    autocast = "    with torch.autocast(device_type=device_type, dtype=_AUTOCAST_DTYPES[device_type]):\n" \
               "        loss = loss_fn(model(inputs), targets)\n"
    assert autocast in reference
    source = reference.replace(autocast, "    loss = loss_fn(model(inputs), targets)\n")
    statuses = _statuses("mixed_precision_step", source, tmp_path, "amp_step.py")
    assert statuses["test_autocast_covers_forward_and_loss_only"] is Status.FAILED
    assert statuses["test_zero_grad_first"] is Status.PASSED


def test_a_scheduler_that_refuses_too_late_loses_the_rejection_check_only(tmp_path):
    """warmup_cosine_scheduler: "raise them before touching the optimizer" was never checked (16/16)."""
    source = (SOLUTIONS / "warmup_cosine_scheduler" / "mutants" / "validates_after_touching_optimizer.py").read_text()
    statuses = _statuses("warmup_cosine_scheduler", source, tmp_path, "scheduler.py")
    assert statuses["test_rejects_bad_arguments"] is Status.FAILED
    assert {s for name, s in statuses.items() if name != "test_rejects_bad_arguments"} == {Status.PASSED}
