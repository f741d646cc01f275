"""Every exercise folder is complete, as issue 6 asks of each: checked from the files, in a second.

The rules live in ``grader.authoring`` (``grader validate`` runs the same on any folder);
this file holds every exercise of the repository to them, one concern per test, and
``tests/test_authoring.py`` shows each rule failing on a small bad folder. Whether the
checks tell the corpus apart (reference and variants full marks, stub zero, every mutant
caught) is ``grader validate``, which ``scripts/test.sh`` runs in Docker after this suite.

What the tests here held before the rules became a library, and the rule holding each now:

- a reference solution exists: ``layout-reference``; every variant and mutant (more_mutants/
  too) has a docstring or a patch description: ``layout-description``; parses, and a patch
  applies to today's reference: ``layout-source``;
- at least two variants: ``count-variants``; six to eight mutants in mutants/: ``count-mutants``;
- the first ``## `` section starts within 15 lines: ``prompt-first-section``; shows the API:
  ``prompt-api``; ``Level: X.`` above it: ``prompt-level``; exercise.toml has a title and
  topics: ``prompt-topics``; exactly one public example, ``test_<name>_example.py``:
  ``layout-example``;
- the stub parses, holds no forbidden API, stays in the subset: ``subset-stub``; the public
  examples stay in the subset widened by pytest, the candidate's module and their harness
  (a dict in this file before, an ``# example harness:`` line in the example now): ``subset-example``;
- reference and variants: no forbidden API, no violation: ``subset-correct``; exactly the
  mutants that say "forbidden" use a forbidden API: ``subset-mutant``;
- no ``assert`` anywhere in checks/: ``checks-assert``;
- the prompt's "What your file may use" section exists and names every [subset] entry:
  ``prompt-subset``.
"""

import pytest

from grader.authoring import Concern
from grader.host.validation import all_exercise_names
from tests.authoring_rules import findings, holds

NAMES = all_exercise_names()


@pytest.mark.parametrize("name", NAMES)
def test_the_corpus_has_a_reference_two_variants_and_six_mutants_each_saying_its_mistake(name):
    holds(findings(name, Concern.LAYOUT, Concern.COUNTS))


@pytest.mark.parametrize("name", NAMES)
def test_the_prompt_starts_with_the_contract_and_states_the_level_and_the_subset(name):
    holds(findings(name, Concern.PROMPT))


@pytest.mark.parametrize("name", NAMES)
def test_the_stub_examples_and_corpus_are_audited_as_they_say(name):
    """No false alarm of the subset on the stub, examples, reference or variants; every forbidden mutant caught."""
    holds(findings(name, Concern.SUBSET))


@pytest.mark.parametrize("name", NAMES)
def test_checks_parse_and_fail_by_raising_assertion_error_never_by_assert(name):
    holds(findings(name, Concern.CHECKS))


@pytest.mark.parametrize("name", NAMES)
def test_probes_measure_out_of_the_candidates_reach_and_a_mutant_forges_them(name):
    """No hook, log or counter on an object a probe hands the candidate; instruments come with a forging mutant."""
    holds(findings(name, Concern.INSTRUMENTS))


@pytest.mark.parametrize("name", NAMES)
def test_every_probe_declares_the_shape_of_its_reply(name):
    holds(findings(name, Concern.REPLIES))
