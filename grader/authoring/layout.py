"""The folders' layout: one public example beside the stub; a reference; every corpus file says what it is.

A candidate receives the README, the stub and the root-level ``test_*.py`` files
(``Exercise.public_files``), so exactly one of those is a test: ``test_<name>_example.py``.
``solutions/<name>/`` holds the reference (the exercise's submission file name); every
variant and mutant has a docstring (a patch: a description) saying what it is, which the
panel reads when a grading "looks like" it; and every patch applies to the reference as it
is now, and every file parses, since ``grader validate`` grades each.
"""

from __future__ import annotations

import ast

from grader.authoring.findings import Finding, Rule
from grader.authoring.folder import Folder
from grader.mutant_patch import MutantPatchError


def one_public_example(folder: Folder) -> list[Finding]:
    ex = folder.exercise
    want = f"test_{ex.name}_example.py"
    examples = [p for p in ex.public_files if p.name.startswith("test_")]
    names = [p.name for p in examples]
    if names == [want]:
        return []
    if not names:
        return [Finding(Rule.LAYOUT_EXAMPLE, ex.root / want, f"no public example: write {want} beside the stub, a "
                        "few plain pytest tests a candidate runs while working (the README's example, one edge "
                        "case).")]
    return [Finding(Rule.LAYOUT_EXAMPLE, p, f"{p.name} would be shipped to candidates as a public example; an "
                    f"exercise ships exactly one, {want}: rename it to that, merge it into it, or move it out of the "
                    "exercise's top folder.") for p in examples if p.name != want] + (
        [] if want in names else [Finding(Rule.LAYOUT_EXAMPLE, ex.root / want, f"{want} is missing: the public "
                                          "example is named after the exercise.")])


def reference_exists(folder: Folder) -> list[Finding]:
    reference = folder.corpus[0].path
    if reference.is_file():
        return []
    return [Finding(Rule.LAYOUT_REFERENCE, reference, f"no reference solution: write {folder.relative(reference)}, "
                    "the one full answer (exercise.toml's [exercise] submission names the file).")]


def each_says_what_it_is(folder: Folder) -> list[Finding]:
    """Every variant and mutant has a docstring (a patch: a description above its diff) saying what it is."""
    out = []
    for item in folder.corpus:
        if item.kind not in ("variant", "mutant"):
            continue
        try:
            if not item.is_patch:
                ast.parse(item.source())
            doc = item.description()
        except (MutantPatchError, SyntaxError, ValueError, OSError):
            continue  # sources_parse names it
        if not (doc and doc.strip()):
            how = ("a description above its first `--- ` line (`Mutant: what is wrong, in words.`)" if item.is_patch
                   else "a module docstring")
            out.append(Finding(Rule.LAYOUT_DESCRIPTION, item.path, f"this {item.kind} does not say what it is: give "
                               f"it {how}; a mutant's first paragraph is what the panel reads when a grading looks "
                               "like it, a variant's says how it differs from the reference.", line=1))
    return out


def sources_parse(folder: Folder) -> list[Finding]:
    """Each variant and mutant is Python that parses, a patch one that applies to today's reference."""
    out = []
    reference = folder.corpus[0]
    for item in folder.corpus:
        if item.kind == "stub" or (item.kind == "reference" and not item.path.is_file()):
            continue
        if item.is_patch and not reference.path.is_file():
            continue  # reference_exists says so
        try:
            ast.parse(item.source(), filename=item.path.name)
        except MutantPatchError as e:
            out.append(Finding(Rule.LAYOUT_SOURCE, item.path, f"{e} Make the patch again against today's "
                               "reference (AUTHORING.md, section 6)."))
        except SyntaxError as e:
            out.append(Finding(Rule.LAYOUT_SOURCE, item.path, f"does not parse ({e.msg}): a {item.kind} is graded "
                               "as a file, so it must be Python.", line=e.lineno))
        except (UnicodeDecodeError, ValueError) as e:
            out.append(Finding(Rule.LAYOUT_SOURCE, item.path, f"cannot be read as Python source ({e}): write it "
                               "as UTF-8 text."))
    return out


RULES = (one_public_example, reference_exists, each_says_what_it_is, sources_parse)
