"""How many variants and mutants: enough to prove the checks, few enough for CI to grade on every run.

At least two variants (other correct answers, written differently) prove the checks do not
demand the reference's way. Six to eight mutants in ``mutants/``: CI grades every one of
them for every exercise on every run, so that folder holds a covering set (every check
catching one, the forbidden-API mistake, a NaN where numbers come back) and every other
mistake goes to ``more_mutants/`` (``grader validate --more``).
"""

from __future__ import annotations

from grader.authoring.findings import Finding, Rule
from grader.authoring.folder import Folder

MIN_VARIANTS = 2
MIN_HELD_IN_MUTANTS = 6
#: CI grades every mutant in mutants/ on every run, for every exercise: a covering set belongs there, the rest in
#: more_mutants/ (`grader validate --more`).
MAX_HELD_IN_MUTANTS = 8


def variants(folder: Folder) -> list[Finding]:
    n = sum(1 for item in folder.corpus if item.kind == "variant")
    if n >= MIN_VARIANTS:
        return []
    return [Finding(Rule.COUNT_VARIANTS, folder.solutions / "variants", f"{n} variant{'s' * (n != 1)}, at least "
                    f"{MIN_VARIANTS} needed: add other correct answers, written differently (another algorithm, a "
                    "loop for a vectorised op), each with a docstring saying what differs; they prove the checks "
                    "do not demand the reference's way.")]


def held_in_mutants(folder: Folder) -> list[Finding]:
    n = sum(1 for item in folder.held_in if item.kind == "mutant")
    where = folder.solutions / "mutants"
    if n < MIN_HELD_IN_MUTANTS:
        return [Finding(Rule.COUNT_MUTANTS, where, f"{n} mutant{'s' * (n != 1)} in mutants/, at least "
                        f"{MIN_HELD_IN_MUTANTS} needed: add plausible mistakes, chosen so that every check catches "
                        "one, with the forbidden-API mistake and, where numbers come back, one that returns NaN.")]
    if n > MAX_HELD_IN_MUTANTS:
        return [Finding(Rule.COUNT_MUTANTS, where, f"{n} mutants in mutants/, which CI grades on every run: keep a "
                        f"set in which every check catches one (at most {MAX_HELD_IN_MUTANTS}) and move the rest to "
                        "more_mutants/ (graded with `grader validate --more`).")]
    return []


RULES = (variants, held_in_mutants)
