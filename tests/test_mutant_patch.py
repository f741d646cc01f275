"""A mutant as a patch: read as written by hand or by `diff -u`, applied strictly, refused with the hunk named."""

import subprocess
import shutil

import pytest

from grader.mutant_patch import MutantPatchError, make_patch, parse_patch, read_patch

REFERENCE = """\
\"\"\"Reference: scale a tensor.\"\"\"

import math


def scale(x, factor):
    if not math.isfinite(factor):
        raise ValueError(f"factor must be finite, got {factor}")
    return x * factor


def shift(x, by):
    return x + by
"""

PATCH = """\
Mutant: multiplies by the factor twice.

Caught by the values check.

--- toy.py
+++ toy.py
@@ -7,3 +7,3 @@
     if not math.isfinite(factor):
         raise ValueError(f"factor must be finite, got {factor}")
-    return x * factor
+    return x * factor * factor
"""


@pytest.fixture
def reference(tmp_path):
    path = tmp_path / "toy.py"
    path.write_text(REFERENCE)
    return path


def _patch(tmp_path, text, name="twice.diff"):
    path = tmp_path / "mutants" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return path


def test_the_description_is_everything_above_the_diff_and_the_hunk_applies(tmp_path, reference):
    patch = read_patch(_patch(tmp_path, PATCH))
    assert patch.description == "Mutant: multiplies by the factor twice.\n\nCaught by the values check."
    assert patch.apply_to(reference) == REFERENCE.replace("return x * factor\n", "return x * factor * factor\n")


def test_a_hunk_moved_by_lines_added_above_still_applies_at_its_exact_match(tmp_path, reference):
    """As git apply: no fuzz, but an offset when the reference gained lines above the hunk."""
    reference.write_text(REFERENCE.replace("import math\n", "import math\nimport os\nimport sys\n"))
    applied = read_patch(_patch(tmp_path, PATCH)).apply_to(reference)
    assert "return x * factor * factor\n" in applied and applied.count("factor * factor") == 1


def test_a_changed_context_line_is_refused_naming_the_patch_hunk_and_line(tmp_path, reference):
    reference.write_text(REFERENCE.replace('got {factor}")', 'got {factor!r}")'))
    with pytest.raises(MutantPatchError) as e:
        read_patch(_patch(tmp_path, PATCH)).apply_to(reference)
    message = str(e.value)
    assert "/mutants/twice.diff: hunk 1 (@@ -7,3 +7,3 @@, line 7 of the patch) does not apply to toy.py" in message
    assert "line 8 is '        raise ValueError(f\"factor must be finite, got {factor!r}\")'" in message


def test_a_hunk_past_the_end_of_the_reference_is_refused(tmp_path, reference):
    text = PATCH.replace("@@ -7,3 +7,3 @@", "@@ -70,3 +70,3 @@")
    reference.write_text("def scale(x, factor):\n    return x\n")
    with pytest.raises(MutantPatchError, match=r"hunk 1 .* the reference ends at line 2"):
        read_patch(_patch(tmp_path, text)).apply_to(reference)


def test_a_diff_against_another_file_is_refused(tmp_path, reference):
    path = _patch(tmp_path, PATCH.replace("toy.py", "other.py"))
    with pytest.raises(MutantPatchError, match="the diff is against 'other.py', not the reference 'toy.py'"):
        read_patch(path).apply_to(reference)


def test_a_diff_of_the_reference_against_a_copy_by_another_name_applies(tmp_path, reference):
    """The workflow the error's hint gives: copy the reference anywhere, make the mistake, `diff -u REF COPY`."""
    copy = tmp_path / "scratch.py"
    copy.write_text(REFERENCE.replace("return x + by", "return x - by"))
    diff = (f"--- {reference}\t2026-11-25 09:00:00\n+++ {copy}\t2026-11-25 09:01:00\n"
            "@@ -12,2 +12,2 @@\n def shift(x, by):\n-    return x + by\n+    return x - by\n")
    if shutil.which("diff"):
        diff = subprocess.run(["diff", "-u", str(reference), str(copy)], capture_output=True, text=True).stdout
    path = _patch(tmp_path, "Mutant: shifts the wrong way.\n\n" + diff)
    assert read_patch(path).apply_to(reference) == copy.read_text()


@pytest.mark.parametrize("text, why", [
    (PATCH.split("--- ")[0], "no diff in it"),
    (PATCH[PATCH.index("--- "):], "no description"),
    (PATCH.replace("@@ -7,3 +7,3 @@", "@@ -7,4 +7,3 @@"), "not a unified diff"),
    (PATCH + "-- \nsigned, an author\n", "line 12: text after the last hunk"),
    (PATCH + PATCH[PATCH.index("--- "):].replace("toy.py", "other.py"), "one text file"),
])
def test_a_malformed_patch_is_refused_saying_why(tmp_path, text, why):
    with pytest.raises(MutantPatchError, match=why):
        parse_patch(text, tmp_path / "mutants" / "bad.diff")


def test_make_patch_round_trips_and_writes_what_diff_would(tmp_path, reference):
    """What `grader new` writes (make_patch) is a patch `patch` itself applies the same way."""
    mutant = REFERENCE.replace("return x + by", "return x - by")
    text = make_patch(REFERENCE, mutant, name="toy.py", description="Mutant: shifts the wrong way.")
    path = _patch(tmp_path, text, "wrong_way.diff")
    assert read_patch(path).apply_to(reference) == mutant
    if shutil.which("patch"):
        out = tmp_path / "out.py"
        subprocess.run(["patch", "-s", "-o", str(out), str(reference), str(path)], check=True)
        assert out.read_text() == mutant


def test_a_missing_final_newline_survives_the_round_trip(tmp_path, reference):
    mutant = REFERENCE.rstrip("\n")
    text = make_patch(REFERENCE, mutant, name="toy.py", description="Mutant: no final newline.")
    assert "\\ No newline at end of file" in text
    assert read_patch(_patch(tmp_path, text, "eof.diff")).apply_to(reference) == mutant


def test_make_patch_refuses_no_mistake_and_a_description_that_would_read_as_a_diff():
    with pytest.raises(ValueError, match="no mistake"):
        make_patch(REFERENCE, REFERENCE, name="toy.py", description="Mutant: nothing.")
    with pytest.raises(ValueError, match="description"):
        make_patch(REFERENCE, REFERENCE + "x = 1\n", name="toy.py", description="Mutant:\n--- a rule")
