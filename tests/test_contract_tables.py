"""Every rule of every prompt names the check that holds it: solutions/<name>/contract.toml, kept true here.

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

import ast
import re
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from grader.exercise import Exercise, load_exercise
from grader.validation import SOLUTIONS_DIR, all_exercise_names

NAMES = all_exercise_names()
NOT_CHECKED = "not checked: "
#: The holder of the prompt's language-subset paragraph: the judge's subset check (grader.judge.audit).
SUBSET = "subset"
#: Sections of a prompt that show or explain, and state no rule of their own.
NO_RULES = re.compile(r"(Example|Trying it)")


@dataclass(frozen=True)
class Paragraph:
    section: str
    text: str  # whitespace collapsed
    needs_a_row: bool = True  # False for a code block (a signature): quotable, not required


def _flat(text: str) -> str:
    return " ".join(text.split())


def prompt_paragraphs(readme: str) -> list[Paragraph]:
    """The README's paragraphs (prose and list items) under a level-2 heading that states rules."""
    tokens = MarkdownIt("commonmark").parse(readme)
    section, out = None, []
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag == "h2":
            section = tokens[i + 1].content
        elif section and not NO_RULES.match(section):
            if token.type == "inline" and tokens[i - 1].type == "paragraph_open":
                out.append(Paragraph(section, _flat(token.content)))
            elif token.type == "fence":
                out.append(Paragraph(section, _flat(token.content), needs_a_row=False))
    return out


def check_ids(checks_dir: Path) -> set[str]:
    """Names of the test functions in checks/test_*.py (what a scorecard's check id ends with)."""
    return {node.name for path in checks_dir.glob("test_*.py")
            for node in ast.parse(path.read_text(encoding="utf-8")).body
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test")}


def table_problems(ex: Exercise, path: Path) -> list[str]:
    """Everything wrong with one exercise's table (at ``path``), as sentences; [] when it holds."""
    if not path.is_file():
        return [f"no table at {path}"]
    rows = tomllib.loads(path.read_text(encoding="utf-8"))
    paragraphs = prompt_paragraphs(ex.readme.read_text(encoding="utf-8"))
    known, forbidden = check_ids(ex.checks_dir), set(ex.config.forbidden.apis)
    problems, covered = [], set()
    for quote, held_by in rows.items():
        found = [p for p in paragraphs if _flat(quote) in p.text]
        if len(found) != 1:
            problems.append(f"{quote!r} is in {len(found)} paragraphs of the prompt, not exactly one")
        covered.update(found)
        if isinstance(held_by, str):
            if not held_by.startswith(NOT_CHECKED) or not held_by[len(NOT_CHECKED):].strip():
                problems.append(f"{quote!r}: a string value must read 'not checked: <why>', got {held_by!r}")
        elif not held_by:
            problems.append(f"{quote!r}: no check named")
        for check in held_by if isinstance(held_by, list) else []:
            api = check.removeprefix("forbidden:")
            if check.startswith("forbidden:") and api not in forbidden:
                problems.append(f"{quote!r}: {api} is not in exercise.toml's forbidden list")
            elif not check.startswith("forbidden:") and check != SUBSET and check not in known:
                problems.append(f"{quote!r}: no check named {check} in {ex.checks_dir}")
    problems += [f"no row for: [{p.section}] {p.text[:100]}" for p in paragraphs
                 if p.needs_a_row and p not in covered]
    named = {c for held_by in rows.values() if isinstance(held_by, list) for c in held_by}
    problems += [f"{check} holds no sentence of the prompt" for check in sorted(known - named)]
    return problems


@pytest.mark.parametrize("name", NAMES)
def test_every_rule_of_the_prompt_names_the_check_that_holds_it(name):
    assert table_problems(load_exercise(name), SOLUTIONS_DIR / name / "contract.toml") == []


def test_a_rule_without_a_row_an_unknown_check_and_a_stale_quote_are_each_named(tmp_path):
    readme = ("# T\n\nLevel: mid.\n\n## Contract\n\n- **Forward.** min where x < min.\n"
              "- `x` itself is never modified.\n\n## Example\n\nclamp(x) is shown here.\n")
    table = ('"**Forward.**" = ["test_forward_values", "test_no_such_check"]\n'
             '"a sentence the prompt lost" = "not checked: gone"\n')
    root = tmp_path / "autograd_function"
    shutil.copytree(load_exercise("autograd_function").root, root)
    (root / "README.md").write_text(readme)
    (tmp_path / "contract.toml").write_text(table)
    problems = table_problems(load_exercise(root), tmp_path / "contract.toml")
    assert any("no check named test_no_such_check" in p for p in problems), problems
    assert any("'a sentence the prompt lost' is in 0 paragraphs" in p for p in problems), problems
    assert any(p.startswith("no row for: [Contract] `x` itself is never modified") for p in problems), problems
    assert not any("shown here" in p for p in problems), problems  # Example states no rule
