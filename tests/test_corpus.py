"""The corpus an exercise is validated on: reference, stub, variants and mutants, whole files or patches."""

import shutil
from pathlib import Path

import pytest

from grader.corpus import corpus, named_twice
from grader.exercise import load_exercise
from grader.mutant_patch import MutantPatchError

TOY = Path(__file__).parent / "fixtures" / "toy"
SOLUTIONS = Path(__file__).parent / "fixtures" / "toy_solutions"

#: A mistake in the toy's reference, as a patch: the factor applied twice.
TWICE = """\
Mutant: multiplies by the factor twice.

--- toy.py
+++ toy.py
@@ -7 +7 @@
-    return x * factor
+    return x * factor * factor
"""


@pytest.fixture
def solutions(tmp_path):
    shutil.copytree(SOLUTIONS, tmp_path / "solutions")
    return tmp_path / "solutions"


def test_corpus_lists_reference_stub_variants_and_mutants():
    items = corpus(load_exercise(TOY), SOLUTIONS)
    assert [(item.kind, item.path.name) for item in items] == [
        ("reference", "toy.py"), ("stub", "toy.py"), ("variant", "loop.py"),
        ("mutant", "uses_mul.py"), ("mutant", "wrong_for_long.py")]
    assert items[1].path == load_exercise(TOY).stub


def test_more_mutants_join_only_when_asked(solutions):
    (solutions / "toy" / "more_mutants").mkdir()
    (solutions / "toy" / "more_mutants" / "extra.py").write_text("def scale(x, factor):\n    return x\n")
    ex = load_exercise(TOY)
    assert "extra.py" not in [item.path.name for item in corpus(ex, solutions)]
    assert ("mutant", solutions / "toy" / "more_mutants" / "extra.py") in [
        (item.kind, item.path) for item in corpus(ex, solutions, more=True)]


def test_a_patch_mutant_is_listed_by_name_and_stands_for_the_patched_reference(solutions, tmp_path):
    (solutions / "toy" / "mutants" / "twice.diff").write_text(TWICE)
    items = corpus(load_exercise(TOY), solutions)
    assert [item.name for item in items if item.kind == "mutant"] == ["twice", "uses_mul", "wrong_for_long"]
    twice = next(item for item in items if item.name == "twice")
    assert twice.is_patch and twice.description() == "Mutant: multiplies by the factor twice."
    reference = (solutions / "toy" / "toy.py").read_text()
    assert twice.source() == reference.replace("return x * factor\n", "return x * factor * factor\n")
    graded = twice.gradable(tmp_path / "applied")
    assert graded == tmp_path / "applied" / "mutants" / "twice.py" and graded.read_text() == twice.source()
    whole = next(item for item in items if item.name == "uses_mul")
    assert whole.gradable(tmp_path / "applied") == whole.path  # a whole file is graded where it is


def test_a_patch_that_no_longer_fits_the_reference_says_so_when_read(solutions):
    (solutions / "toy" / "mutants" / "twice.diff").write_text(TWICE.replace("x * factor\n+", "x * k\n+"))
    twice = next(item for item in corpus(load_exercise(TOY), solutions) if item.name == "twice")
    with pytest.raises(MutantPatchError, match=r"hunk 1 .* line 7 is '    return x \* factor', the patch expects"):
        twice.source()


def test_a_whole_file_and_a_patch_of_one_name_are_named_twice(solutions):
    (solutions / "toy" / "mutants" / "uses_mul.diff").write_text(TWICE)
    assert named_twice(corpus(load_exercise(TOY), solutions)) == [
        "mutants/uses_mul.diff and uses_mul.py share the name 'uses_mul'"]
