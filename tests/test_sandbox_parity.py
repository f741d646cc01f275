"""The local sandbox (what a candidate without Docker gets) scores honest files as Docker does.

For each exercise, a sample of the held-in corpus (the reference, the stub and the
first mutant by name: full marks, zero, and a mix) is graded in both sandboxes,
and every check's status and points must match. `bench/sandbox_parity.py`
compares the whole corpus, variants and every mutant included (about 15 minutes). That every exercise validates in Docker (reference and
variants full marks, stub zero, every mutant caught) is `grader validate`, which
`scripts/test.sh` runs after this suite, so CI proves it.
"""

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from grader.exercise import load_exercise
from grader.grading import grade
from grader.reports.compare import outcome_differences
from grader.validation import all_exercise_names, corpus

pytestmark = [pytest.mark.docker, pytest.mark.slow]

#: Mutants per exercise graded both ways here; the bench script grades them all.
PARITY_MUTANTS = 1


def parity_sample(ex, folder: Path) -> list[Path]:
    """The reference, the stub and the first mutants by name: full marks, zero, and a mix (a patch applied
    under ``folder``)."""
    items = corpus(ex)
    mutants = [item for item in items if item.kind == "mutant"][:PARITY_MUTANTS]
    return [item.gradable(folder) for item in items if item.kind in ("reference", "stub")] + \
        [item.gradable(folder) for item in mutants]


@pytest.mark.parametrize("name", all_exercise_names())
def test_local_sandbox_scores_honest_files_as_docker_does(name, docker_client, tmp_path):
    ex = load_exercise(name)
    files = parity_sample(ex, tmp_path)

    jobs = [(path, kind) for path in files for kind in ("docker", "local")]  # six gradings share two cores
    with ThreadPoolExecutor(max_workers=2) as pool:
        reports = dict(zip(jobs, pool.map(lambda job: grade(ex, job[0], sandbox=job[1]), jobs)))
    pairs = [(path, reports[path, "docker"], reports[path, "local"]) for path in files]
    problems = [f"{path.name}: {d}" for path, a, b in pairs for d in outcome_differences(a, b)]
    assert not problems, "local and Docker disagree:\n" + "\n".join(problems)
    assert all(a.graded and a.environment.sandbox == "docker" and b.environment.sandbox == "local"
               for _, a, b in pairs)
    assert len(pairs) == 2 + PARITY_MUTANTS
    reference, stub = pairs[0][1], pairs[1][1]
    assert reference.score == reference.max_score > 0 and stub.score == 0  # the sample spans the range
