"""Reading a SUBMISSIONS folder: every problem lands on a row (or the problems list), none stops the batch."""

from __future__ import annotations

import os

import pytest

from grader.batch.layout import discover
from grader.batch.model import RowStatus

KNOWN = {"attention": "attention.py", "collate_fn": "collate.py"}
GOOD = "def f(x):\n    return x\n"


def put(root, rel, text=GOOD):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def by_key(layout):
    return {(f.candidate, f.exercise): f for f in layout.found}


def test_every_candidate_gets_a_row_per_exercise_with_the_reason_when_it_cannot_be_graded(tmp_path):
    put(tmp_path, "ann/attention/attention.py")
    put(tmp_path, "ann/collate_fn/whatever_name.py")  # the only .py file: taken whatever its name
    put(tmp_path, "ben/attention/attention.py", "")  # empty
    put(tmp_path, "ben/collate_fn/collate.py", "def f(:\n")  # not Python
    put(tmp_path, "cid/attention/a.py")
    put(tmp_path, "cid/attention/b.py")  # two files, neither named attention.py
    put(tmp_path, "cid/atention/attention.py")  # a typo: unknown exercise
    (tmp_path / "dee" / "collate_fn").mkdir(parents=True)  # folder with no file; attention folder missing
    put(tmp_path, "notes.txt", "panel notes")  # stray file at the top
    put(tmp_path, "dee/readme.md", "stray")  # stray file in a candidate folder

    layout = discover(tmp_path, known=KNOWN)
    rows = by_key(layout)

    assert layout.exercises == ["attention", "collate_fn"]
    assert rows["ann", "attention"].problem is None and rows["ann", "attention"].sha256
    assert rows["ann", "collate_fn"].path.name == "whatever_name.py"
    assert rows["ben", "attention"].problem is RowStatus.EMPTY
    assert rows["ben", "collate_fn"].problem is RowStatus.INVALID and "line 1" in rows["ben", "collate_fn"].reason
    assert rows["cid", "attention"].problem is RowStatus.AMBIGUOUS and "a.py, b.py" in rows["cid", "attention"].reason
    assert rows["cid", "atention"].problem is RowStatus.UNKNOWN_EXERCISE and "attention" in rows["cid", "atention"].reason
    assert rows["cid", "collate_fn"].problem is RowStatus.MISSING
    assert rows["dee", "attention"].problem is RowStatus.MISSING and "dee/attention/" in rows["dee", "attention"].reason
    assert rows["dee", "collate_fn"].problem is RowStatus.MISSING and "no .py file" in rows["dee", "collate_fn"].reason
    # Notes beside the folders are not submissions: ignored, and named as that (never "expected
    # dee/<exercise>/readme.md", which would tell the panel to move a README into an exercise folder).
    assert layout.ignored == ["dee/readme.md: not a submission (only <candidate>/<exercise>/<file>.py is read)",
                              "notes.txt: not a submission (only <candidate>/<exercise>/<file>.py is read)"]
    assert not any("notes.txt" in p or "readme.md" in p for p in layout.problems)
    # empty and unparsable files are still graded (their scorecard shows why they score 0)
    assert {(f.candidate, f.exercise) for f in layout.gradable} == {
        ("ann", "attention"), ("ann", "collate_fn"), ("ben", "attention"), ("ben", "collate_fn")}


def test_a_python_file_outside_an_exercise_folder_is_a_layout_problem_saying_where_it_goes(tmp_path):
    put(tmp_path, "alice/toy.py", "def scale(x, f):\n    return x * f\n")
    put(tmp_path, "alice/helper.py", "x = 1\n")
    put(tmp_path, "alice/toy/toy.py", "def scale(x, f):\n    return x * f\n")
    put(tmp_path, "alice/README.txt", "my notes")
    layout = discover(tmp_path, known={"toy": "toy.py"})
    assert layout.problems == [
        "alice/helper.py: a Python file outside any exercise folder is not graded; to grade it, move it to "
        "alice/<exercise>/helper.py",
        "alice/toy.py: a Python file outside any exercise folder is not graded; to grade it, move it to "
        "alice/toy/toy.py"]
    assert layout.ignored == ["alice/README.txt: not a submission (only <candidate>/<exercise>/<file>.py is read)"]
    assert [(f.candidate, f.exercise, f.problem) for f in layout.found] == [("alice", "toy", None)]


def test_the_exercise_file_name_wins_over_other_py_files(tmp_path):
    put(tmp_path, "ann/attention/attention.py")
    put(tmp_path, "ann/attention/scratch.py")
    assert by_key(discover(tmp_path, known=KNOWN))["ann", "attention"].path.name == "attention.py"


def test_unreadable_entries_are_reported_not_raised(tmp_path):
    (tmp_path / "ann" / "attention").mkdir(parents=True)
    os.symlink(tmp_path / "nowhere.py", tmp_path / "ann" / "attention" / "attention.py")  # dangling link
    (tmp_path / "ben" / "attention" / "attention.py").mkdir(parents=True)  # a folder named like the file
    rows = by_key(discover(tmp_path, known=KNOWN))
    assert rows["ann", "attention"].problem is RowStatus.UNREADABLE and "symbolic link" in rows["ann", "attention"].reason
    assert rows["ben", "attention"].problem is RowStatus.UNREADABLE and "folder" in rows["ben", "attention"].reason


def test_only_restricts_the_batch_and_expects_each_listed_exercise(tmp_path):
    put(tmp_path, "ann/attention/attention.py")
    put(tmp_path, "ann/mystery/x.py")
    layout = discover(tmp_path, known=KNOWN, only=["collate_fn"])
    assert [(f.candidate, f.exercise, f.problem) for f in layout.found] == [("ann", "collate_fn", RowStatus.MISSING)]


def test_a_candidate_may_have_the_name_of_an_output_file(tmp_path):
    """Per-candidate outputs live under candidates/, so no name is reserved (tests/test_hostile_folders.py)."""
    put(tmp_path, "index.html/attention/attention.py")
    layout = discover(tmp_path, known=KNOWN)
    assert [(f.candidate, f.problem) for f in layout.found] == [("index.html", None)] and not layout.problems


@pytest.mark.parametrize("text", ["\n\n   \n", "\t"])
def test_whitespace_only_is_empty(tmp_path, text):
    put(tmp_path, "ann/attention/attention.py", text)
    assert by_key(discover(tmp_path, known=KNOWN))["ann", "attention"].problem is RowStatus.EMPTY
