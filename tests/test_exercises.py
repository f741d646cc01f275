"""Every exercise proves itself in real Docker, as `grader validate` does in CI.

For each: the reference and its variants earn full marks, the untouched stub
earns zero (and no forbidden-API hit for the names in its docstrings), and
every mutant loses points.
"""

import pytest

from grader.validation import all_exercise_names, validate_exercise

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@pytest.mark.parametrize("name", all_exercise_names())
def test_exercise_validates(name, docker_client):
    result = validate_exercise(name, sandbox="docker", jobs=2)
    failures = [f"{v.kind} {v.path.name}: {v.problem}" for v in result.verdicts if not v.ok]
    assert result.ok, "\n".join(result.problems + failures)
    kinds = [v.kind for v in result.verdicts]
    assert kinds.count("mutant") >= 6 and kinds.count("variant") >= 2
    stub = next(v for v in result.verdicts if v.kind == "stub")
    assert stub.report.forbidden == []
