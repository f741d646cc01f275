"""Every exercise folder is complete, as issue 6 asks of each: checked from the files, in a second.

Whether the checks tell the corpus apart (reference and variants full marks, stub
zero, every mutant caught) is `grader validate`, which `scripts/test.sh` runs in
Docker after this suite.
"""

import ast
import re

import pytest

from grader.exercise import load_exercise
from grader.validation import all_exercise_names, corpus

NAMES = all_exercise_names()


@pytest.mark.parametrize("name", NAMES)
def test_the_corpus_has_a_reference_two_variants_and_six_mutants_each_saying_its_mistake(name):
    ex = load_exercise(name)
    items = corpus(ex)
    kinds = [kind for kind, _ in items]
    assert items[0][1].is_file(), f"no reference solution at {items[0][1]}"
    assert kinds.count("variant") >= 2 and kinds.count("mutant") >= 6, kinds
    for kind, path in items:
        if path is not None:
            doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
            assert doc and doc.strip(), f"{path} has no docstring saying what it is"


@pytest.mark.parametrize("name", NAMES)
def test_the_prompt_starts_with_the_contract_and_the_candidate_gets_examples(name):
    ex = load_exercise(name)
    meta = ex.config.exercise
    lines = ex.readme.read_text(encoding="utf-8").splitlines()
    first_section = next(i for i, line in enumerate(lines) if line.startswith("## "))
    assert first_section < 15, f"{name}: the first section starts at line {first_section + 1}"
    section = "\n".join(lines[first_section:first_section + 40])
    assert "```" in section or re.search(r"`\w+\(", section), f"{name}: no API in the first section"
    assert re.search(rf"Level: {meta.level}\.", "\n".join(lines[:first_section])), f"{name}: level not stated"
    assert meta.topics and meta.title
    examples = [p.name for p in ex.public_files if p.name.startswith("test_")]
    assert examples == [f"test_{name}_example.py"], examples


@pytest.mark.parametrize("name", NAMES)
def test_the_stub_never_names_a_forbidden_api_in_code(name):
    from grader.judge.forbidden import scan

    ex = load_exercise(name)
    hits = scan(ex.stub.read_text(encoding="utf-8"), ex.config.forbidden.apis, filename=ex.stub.name)
    assert hits == [], hits
