"""A check holds its own rule: a mistake another check covers must not crash it or cost it too.

Each case grades a correct solution with one rule broken (in the local sandbox) and asserts
the check covering that rule fails while the named neighbour passes.
"""

from pathlib import Path

from grader.corpus import corpus
from grader.exercise import load_exercise
from grader.host.grading import grade
from grader.reports.model import Status

SOLUTIONS = Path(__file__).resolve().parent.parent / "solutions"


def _mutant(exercise: str, name: str) -> str:
    """The source of the mutant ``name`` of ``exercise`` (a whole file, or a patch applied to the reference)."""
    (item,) = [m for m in corpus(load_exercise(exercise)) if m.kind == "mutant" and m.name == name]
    return item.source()


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
    source = _mutant("warmup_cosine_scheduler", "validates_after_touching_optimizer")
    statuses = _statuses("warmup_cosine_scheduler", source, tmp_path, "scheduler.py")
    assert statuses["test_rejects_bad_arguments"] is Status.FAILED
    assert {s for name, s in statuses.items() if name != "test_rejects_bad_arguments"} == {Status.PASSED}


def test_a_clamp_that_changes_its_input_loses_the_input_check(tmp_path):
    """autograd_function: "x itself is never modified" had no check of its own (gradcheck only tripped on it)."""
    source = _mutant("autograd_function", "clamps_x_in_place")
    statuses = _statuses("autograd_function", source, tmp_path, "clamp_function.py")
    assert statuses["test_input_left_unchanged"] is Status.FAILED
    assert statuses["test_forward_values"] is statuses["test_gradient_at_the_bounds"] is Status.PASSED


def test_adapters_in_the_default_dtype_lose_the_dtype_check(tmp_path):
    """lora_linear: "with the base weight's dtype" had no check of its own (float64 precision only tripped on it)."""
    source = _mutant("lora_linear", "adapters_in_default_dtype")
    statuses = _statuses("lora_linear", source, tmp_path, "lora.py")
    assert statuses["test_adapters_take_the_base_dtype"] is Status.FAILED
    assert statuses["test_forward_with_scaling"] is statuses["test_adapter_shapes_and_init"] is Status.PASSED


def _only_failure(exercise: str, mutant: str, submission: str, check: str, tmp_path: Path,
                  failed=(Status.FAILED,)) -> None:
    """Grading the mutant fails ``check`` (with a status in ``failed``) and passes every other check."""
    source = _mutant(exercise, mutant.removesuffix(".py"))
    statuses = _statuses(exercise, source, tmp_path, submission)
    assert statuses[check] in failed, statuses
    assert {s for name, s in statuses.items() if name != check} <= {Status.PASSED, Status.SKIPPED}, statuses


def test_a_loop_that_reads_batches_before_refusing_loses_the_rejection_check_only(tmp_path):
    """grad_accumulation: "before touching the model, the optimizer or batches" was never checked."""
    _only_failure("grad_accumulation", "reads_batches_before_validating.py", "grad_accum.py",
                  "test_rejects_bad_accumulation_steps", tmp_path)


def test_a_step_that_refuses_at_the_clipping_loses_the_rejection_check_only(tmp_path):
    """mixed_precision_step: "both before anything else happens" was never checked."""
    _only_failure("mixed_precision_step", "validates_max_grad_norm_when_clipping.py", "amp_step.py",
                  "test_rejects_bad_arguments", tmp_path)


def test_a_layer_that_refuses_an_int_alpha_loses_the_int_alpha_check_only(tmp_path):
    """lora_linear: "alpha may come as an int" was never checked (every check drew a float alpha)."""
    _only_failure("lora_linear", "alpha_must_be_a_float.py", "lora.py", "test_alpha_may_be_an_int", tmp_path)


def test_a_merge_in_the_default_dtype_loses_the_merge_dtype_check_only(tmp_path):
    """lora_linear: merge()'s "same dtype" was only seen with a float32 base, where the default is right."""
    _only_failure("lora_linear", "merge_in_default_dtype.py", "lora.py", "test_merge_keeps_the_base_dtype", tmp_path)


def test_a_merge_that_needs_no_grad_loses_the_autograd_on_check_only(tmp_path):
    """lora_linear: every probe called merge() under no_grad, so one that raises with autograd on (as the README's
    example calls it) got full marks (mutation run, drop_decorator@32:5)."""
    _only_failure("lora_linear", "merge_outside_no_grad_fails.py", "lora.py", "test_merge_works_with_autograd_on",
                  tmp_path)
