"""Every rule of every prompt names the check that holds it: solutions/<name>/contract.toml, kept true here.

The rules are ``grader/authoring/contract.py``'s (``grader validate`` runs them on any
folder): a paragraph with no row (``contract-row``), a quote in no paragraph or several
(``contract-quote``), a string value that is not "not checked: <why>" or an empty list
(``contract-value``), a check that does not exist or an API exercise.toml does not forbid
(``contract-check``), a check that holds no sentence (``contract-idle-check``), no table
or one that is not TOML (``contract-table``).

A README paragraph that states a rule with no check behind it is a rule a candidate can
break for free (issue 14: "x itself is never modified" held by nothing). The table maps
pieces of the prompt, word for word, to the check ids that hold them; this test fails
when a paragraph of the prompt has no row, a row quotes text the prompt no longer has,
or a row names a check that does not exist. It lives beside the corpus (judge side,
never shipped with the prompt, outside the checks' fingerprint).

The unit is a paragraph of the README (list items and prose alike) outside "Example" and
"Trying it"; a paragraph holding several rules gets one row per rule. Code blocks there
(signatures) may be quoted, for a rule only a signature states (a default), but need no row. A value is a list
of check ids (test function names in checks/), "forbidden:API" (the sandbox's net, for an
API in exercise.toml's forbidden list) and "subset" (the judge's subset check, for the
prompt's "What your file may use"), or the string "not checked: <why>" for what is
not a rule (a definition, advice, a promise about the checks' own inputs).
"""

from __future__ import annotations

import shutil

import pytest

from grader.authoring import Concern, Folder, Rule
from grader.authoring.contract import table_holds
from grader.exercise import load_exercise
from grader.host.validation import all_exercise_names
from tests.authoring_rules import findings, holds

NAMES = all_exercise_names()


@pytest.mark.parametrize("name", NAMES)
def test_every_rule_of_the_prompt_names_the_check_that_holds_it(name):
    holds(findings(name, Concern.CONTRACT))


def test_a_rule_without_a_row_an_unknown_check_and_a_stale_quote_are_each_named(tmp_path):
    readme = ("# T\n\nLevel: mid.\n\n## Contract\n\n- **Forward.** min where x < min.\n"
              "- `x` itself is never modified.\n\n## Example\n\nclamp(x) is shown here.\n")
    table = ('"**Forward.**" = ["test_forward_values", "test_no_such_check"]\n'
             '"a sentence the prompt lost" = "not checked: gone"\n')
    root = tmp_path / "exercises" / "autograd_function"
    shutil.copytree(load_exercise("autograd_function").root, root)
    (root / "README.md").write_text(readme)
    (tmp_path / "solutions" / "autograd_function").mkdir(parents=True)
    (tmp_path / "solutions" / "autograd_function" / "contract.toml").write_text(table)
    found = table_holds(Folder(load_exercise(root), tmp_path / "solutions"))
    said = {(f.rule, f.line): f.message for f in found}
    assert "no check named test_no_such_check" in said[Rule.CONTRACT_CHECK, 1], found
    assert said[Rule.CONTRACT_QUOTE, 2].startswith("'a sentence the prompt lost' is in no paragraph"), found
    rows = [f.message for f in found if f.rule is Rule.CONTRACT_ROW]
    assert rows == ["no row for the prompt's paragraph [Contract] '`x` itself is never modified.' (README.md line 8): "
                    "add one naming the check that holds it, or \"not checked: <why>\" for a definition, advice or a "
                    "promise about the checks' own inputs."]  # and none for Example, which states no rule
