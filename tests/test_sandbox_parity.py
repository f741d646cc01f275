"""`grader validate --parity`: the local sandbox (what a candidate without Docker gets) scores honest files
as Docker does.

With it, each exercise's reference, stub and first mutant by name (full marks, zero and a mix) are graded
in the local sandbox too, and every check's status and points must match Docker's. CI runs it over every
exercise (`scripts/test.sh`: `grader validate --sandbox docker --parity`), so each Docker grading is done
once, not again here; these tests hold the comparison itself: it passes where the sandboxes agree and
names the file and the check where they do not. `bench/sandbox_parity.py` compares the whole corpus.
"""

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.host.validation import validate_exercise

pytestmark = [pytest.mark.docker]

TOY = Path(__file__).parent / "fixtures" / "toy"
SOLUTIONS = Path(__file__).parent / "fixtures" / "toy_solutions"

#: A probe that answers otherwise outside a container: the staged probes sit under /sandbox only in Docker.
SCORES_OTHERWISE_OUTSIDE_DOCKER = '''

def scale(x, factor):
    from pathlib import Path
    in_docker = Path(__file__).parts[:2] == ("/", "sandbox")
    return toy.scale(x, factor) if in_docker else toy.scale(x, factor) + 1
'''


def test_parity_grades_the_sample_locally_too_and_passes_when_the_sandboxes_agree(docker_client):
    result = validate_exercise(TOY, sandbox="docker", jobs=2, solutions_dir=SOLUTIONS, parity="local")
    assert result.ok, result.problems + result.disagreements
    assert [(v.kind, v.path.name, v.report.environment.sandbox) for v in result.compared] == [
        ("reference", "toy.py", "local"), ("stub", "toy.py", "local"), ("mutant", "uses_mul.py", "local")]
    in_docker = {(v.kind, v.path.name): v.report for v in result.verdicts}
    assert all(in_docker[v.kind, v.path.name].environment.sandbox == "docker" for v in result.compared)
    reference, stub, mutant = (v.report for v in result.compared)
    assert reference.score == reference.max_score > 0 and stub.score == 0 < mutant.score < mutant.max_score


def test_a_file_scored_otherwise_outside_docker_fails_validation_naming_the_file_and_check(docker_client, tmp_path):
    exercise = shutil.copytree(TOY, tmp_path / "toy")
    with (exercise / "probes.py").open("a") as f:
        f.write(SCORES_OTHERWISE_OUTSIDE_DOCKER)
    result = validate_exercise(exercise, sandbox="docker", jobs=2, solutions_dir=SOLUTIONS, parity="local")
    assert all(v.ok for v in result.verdicts), [v.problem for v in result.verdicts]  # Docker alone is content
    assert not result.ok
    assert any(d.startswith("toy.py: local disagrees with docker: Scales a small tensor") for d in result.disagreements), \
        result.disagreements


def test_parity_needs_two_sandboxes():
    with pytest.raises(ValueError, match="compares nothing"):
        validate_exercise(TOY, sandbox="local", solutions_dir=SOLUTIONS, parity="local")
    result = CliRunner().invoke(main, ["validate", str(TOY), "--exercise-root", str(TOY.parent), "--sandbox", "local", "--parity"])
    assert result.exit_code == 2 and "--parity compares the local sandbox with Docker" in result.output
