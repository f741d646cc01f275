"""A diagnosis only when the evidence says so: real code graded for real against the stored mistake records.

Hugging Face's warmup-cosine schedule fails the same seven checks as the mutant that computes from each group's
current lr, with other values: it warms up from 0, has no floor and rises after the last step. A newcomer's
clip_grad_norm that leaves eps out fails exactly the checks that clipping each parameter by its own norm fails,
with that mistake's values and not the other's. Matching which checks were lost named the wrong mistake in the
first case and two tied ones in the second; matching what the checks said names only a mistake the file makes.
"""

from pathlib import Path

from grader.host.grading import grade

REAL_CODE = Path(__file__).resolve().parent / "fixtures" / "real_code"


def _named(exercise: str, fixture: str, submission: str, tmp_path: Path) -> list[str]:
    sub = tmp_path / submission
    sub.write_text((REAL_CODE / fixture).read_text())
    report = grade(exercise, sub, sandbox="local")
    assert report.graded and report.score < report.max_score, report.not_graded_reason
    return [d.mutant for d in report.diagnosis if d.kind == "mistake"]


def test_hugging_faces_schedule_is_not_told_it_scales_the_current_lr(tmp_path):
    named = _named("warmup_cosine_scheduler", "warmup_cosine_scheduler_hf.py", "scheduler.py", tmp_path)
    assert "scales_current_lr" not in named
    assert set(named) <= {"warmup_starts_at_zero", "decays_to_zero", "cosine_rises_after_total"}, named


def test_a_clip_without_eps_is_told_that_and_not_a_tied_other_mistake(tmp_path):
    named = _named("clip_grad_norm", "clip_grad_norm_newcomer.py", "clip_grad.py", tmp_path)
    assert named == ["forgets_eps"], named
