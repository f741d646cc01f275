"""The third round's attacks (issue 36): wrong answers that scored as right ones, or escaped their score.

Each forgery rewrote what the probes kept on the objects they hand the candidate (a call log on the blocks,
a ``watch`` flag on the model, the scaler's event list) or hid what autograd saved behind an inner
``saved_tensors_hooks`` context, and got full marks. The forging files are the exercises' held mutants
(``solutions/<name>/mutants/forges_its_instruments``); beside each, the same mistake without the forgery (a held
mutant, or ``hostile/verdict/``). Graded for real in the local sandbox: the forgery must gain nothing. And a reply that
does not fit its probe's declared shape (a key missing, an unhashable entry in a log) made a check's own code
raise, so the grading was "not graded: a bug in the grader's checks" and the answer escaped its score: it is the
submission's failure on that check now.
"""

import shutil
from pathlib import Path

import pytest

from grader.corpus import SOLUTIONS_DIR
from grader.host.grading import grade

HOSTILE = Path(__file__).parent / "hostile" / "verdict"

#: exercise -> the same mistake, without forging anything: a file here, or a held mutant of the exercise
PLAIN = {
    "gradient_checkpointing": HOSTILE / "checkpointing_plain.py",  # no checkpointing at all
    "evaluate": "no_grad_off_total_loss_tensor",  # autograd on, every graph kept alive
    "mixed_precision_step": "autocast_around_optimizer_step",  # the optimizer's step inside autocast
}


def _mutant(exercise: str, name: str, tmp: Path) -> Path:
    """A held mutant of ``exercise`` as a file ``grade()`` takes (a patch applied to the reference)."""
    from grader.corpus import corpus
    from grader.exercise import load_exercise

    item = next(i for i in corpus(load_exercise(exercise)) if i.kind == "mutant" and i.name == name)
    return item.gradable(tmp)


@pytest.mark.slow
@pytest.mark.parametrize("exercise", sorted(PLAIN))
def test_forging_the_probes_instruments_gains_nothing(exercise, tmp_path):
    forged = grade(exercise, _mutant(exercise, "forges_its_instruments", tmp_path / "forged"), sandbox="local")
    plain_file = PLAIN[exercise]
    plain_file = plain_file if isinstance(plain_file, Path) else _mutant(exercise, plain_file, tmp_path / "plain")
    plain = grade(exercise, plain_file, sandbox="local")
    assert forged.graded and plain.graded
    assert plain.score < plain.max_score
    assert forged.score == plain.score, [(c.name, c.status.value) for c in forged.checks]
    lost = {c.id for c in plain.checks if c.score < c.max_score}
    assert {c.id for c in forged.checks if c.score < c.max_score} == lost


def _sandbox_that_answers(tmp_path: Path, exercise: str, old: str, new: str) -> Path:
    """A copy of ``exercise`` whose probes send ``new`` where they send ``old``: everything in the sandbox is the
    candidate's, so this stands for a reply the candidate's code shaped (the judge's checks are the exercise's own)."""
    from grader.exercise import load_exercise

    copy = tmp_path / exercise
    shutil.copytree(load_exercise(exercise).root, copy)
    probes = copy / "probes.py"
    text = probes.read_text(encoding="utf-8")
    assert old in text
    probes.write_text(text.replace(old, new), encoding="utf-8")
    return copy


@pytest.mark.slow
@pytest.mark.parametrize("exercise, old, new, check", [
    # a reply missing a key
    ("kv_cache_decode", 'return {"outs": outs, "caches": caches}', 'return {"outs": outs}',
     "test_cache_grows_by_one_token"),
    # one unhashable entry in a probe's log
    ("gradient_checkpointing", "alive_after_forward = ledger.alive(collect=collect)",
     "alive_after_forward = [[[index], alive] for index, alive in ledger.alive(collect=collect)]",
     "test_frees_activations_inside_segments"),
])
def test_a_reply_that_does_not_fit_its_shape_is_the_submissions_failure_not_a_check_error(tmp_path, exercise, old,
                                                                                         new, check):
    copy = _sandbox_that_answers(tmp_path, exercise, old, new)
    reference = SOLUTIONS_DIR / exercise / load_reference_name(exercise)
    report = grade(copy, reference, sandbox="local")
    assert report.graded, report.not_graded_reason  # before: "not graded: a bug in the grader's checks"
    assert report.check_errors == [] and report.broken_checks == []
    lost = next(c for c in report.checks if c.id.endswith(f"::{check}"))
    assert lost.score == 0 and lost.status.value == "failed"
    assert "the submission's call returned a reply the judge cannot read" in lost.message


def load_reference_name(exercise: str) -> str:
    from grader.exercise import load_exercise

    return load_exercise(exercise).config.exercise.submission
