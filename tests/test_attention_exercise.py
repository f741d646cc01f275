"""The attention exercise's checks, proven on its corpus in real Docker.

Any file meeting the contract gets full marks (the reference and differently
written variants); the untouched stub gets zero; every mutant loses points.
"""

from pathlib import Path

import pytest

from grader.grading import grade

REPO = Path(__file__).resolve().parent.parent
SOLUTIONS = REPO / "solutions" / "attention"
MUTANTS = sorted((SOLUTIONS / "mutants").glob("*.py"))
CORRECT = [SOLUTIONS / "attention.py", *sorted((SOLUTIONS / "variants").glob("*.py"))]

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_corpus_has_what_the_issue_asks_for():
    assert len(MUTANTS) >= 8 and len(CORRECT) >= 3


@pytest.mark.parametrize("path", CORRECT, ids=lambda p: p.stem)
def test_correct_solutions_get_full_marks(path, docker_client):
    report = grade("attention", path, sandbox="docker")
    lost = [(c.id, c.status.value, c.message) for c in report.checks if c.score < c.max_score]
    assert report.graded and report.score == report.max_score > 0, lost
    assert report.forbidden == []


def test_untouched_stub_gets_zero(docker_client):
    report = grade("attention", None, sandbox="docker")
    assert report.graded and report.score == 0 and report.max_score > 0
    assert report.forbidden == []  # its docstrings and messages name APIs; it uses none


@pytest.mark.parametrize("path", MUTANTS, ids=lambda p: p.stem)
def test_every_mutant_loses_points(path, docker_client):
    report = grade("attention", path, sandbox="docker")
    assert report.graded, report.not_graded_reason
    assert report.score < report.max_score, f"{path.name} was not caught by any check"
