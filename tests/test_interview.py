"""The interview guide: every exercise's questions tied to checks and mutants that exist, never shipped to a
candidate, read with clear errors, and suggested in a fixed order (issue 17, part 3)."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest

from grader.authoring import Concern, Folder, Rule
from grader.authoring.interview import guide_ties
from grader.corpus import SOLUTIONS_DIR
from grader.errors import ExerciseError, GraderError
from grader.exercise import Exercise, load_exercise
from grader.hindsight.interview import (GUIDE_FILE, Guide, Question, because, load_guide, suggest)
from grader.reports.model import check_function
from grader.practice.pack import pack_exercise
from grader.practice.workspace import init_workspace
from grader.host.validation import all_exercise_names
from tests.authoring_rules import findings, holds

NAMES = all_exercise_names()


# --- every exercise's guide: the rules of grader/authoring/interview.py ---------------------------------------
# Before they were a library: every name a question is tied to is a check or a mutant (guide-ties); the guide
# exists (guide-missing), reads (guide-invalid), has 5 to 8 questions (guide-size), a "failed" one and three
# "passed" (guide-kinds), each ask a question and each answer 40 to 600 characters (guide-spoken); a failed
# question about a mutant asks about a check that mutant fails (guide-mutant-check). That load_guide names the
# exercise (``guide.exercise == name``) is load_guide's own, below.

@pytest.mark.parametrize("name", NAMES)
def test_every_exercise_has_a_spoken_guide_tied_to_checks_and_mutants_that_exist(name):
    holds(findings(name, Concern.INTERVIEW))


def test_the_tie_rule_finds_a_check_and_a_mutant_that_do_not_exist(scratch):
    write_guide(scratch, GOOD.replace('checks = ["test_a"]', f'checks = ["{sorted(_checks(scratch))[0]}"]')
                .replace('mutants = ["m"]', 'mutants = ["log_mask_tiny_weights", "fill_minus_1e9"]'))
    assert guide_ties(Folder(scratch, SOLUTIONS_DIR)) == []
    path = write_guide(scratch, GOOD.replace('mutants = ["m"]', 'mutants = ["no_such_mutant"]')
                       .replace('checks = ["test_a"]', 'checks = ["test_no_such_check"]'))
    found = guide_ties(Folder(scratch, SOLUTIONS_DIR))
    assert [(f.rule, f.file, f.line) for f in found] == [(Rule.GUIDE_TIES, path, 3), (Rule.GUIDE_TIES, path, 9)]  # the asks
    assert "no check 'test_no_such_check' in checks/" in found[0].message
    assert "no mutant 'no_such_mutant' in solutions/attention/mutants|more_mutants" in found[1].message


def _checks(ex: Exercise) -> set[str]:
    return set(Folder(ex, SOLUTIONS_DIR).check_functions)


# --- hidden from candidates --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_the_guide_never_reaches_a_candidate_pack_or_workspace(name, tmp_path):
    ex = load_exercise(name)
    assert GUIDE_FILE not in [p.name for p in ex.public_files]
    out = tmp_path / f"{name}.zip"
    names = pack_exercise(ex, out)
    assert not [n for n in names if n.endswith(GUIDE_FILE)], names
    with zipfile.ZipFile(out) as zf:
        text = b"".join(zf.read(n) for n in zf.namelist())
    for q in load_guide(ex).questions:  # not even copied into another file
        assert q.answer[:60].encode() not in text, q.ask
    init_workspace(ex, tmp_path / "ws")
    assert not list((tmp_path / "ws").rglob(GUIDE_FILE))


def test_the_pack_check_would_see_a_guide_made_public(tmp_path, monkeypatch):
    """The allowlist is what keeps the guide out: widen it and the file is in the pack."""
    ex = load_exercise("attention")
    widened = [*ex.public_files, ex.root / GUIDE_FILE]
    monkeypatch.setattr(Exercise, "public_files", property(lambda self: widened))
    names = pack_exercise(ex, tmp_path / "a.zip")
    assert "attention/interview.toml" in names


# --- load_guide ----------------------------------------------------------------------------------------------

@pytest.fixture
def scratch(tmp_path) -> Exercise:
    """A copy of the attention exercise whose guide a test may rewrite."""
    root = tmp_path / "attention"
    shutil.copytree(load_exercise("attention").root, root, ignore=shutil.ignore_patterns("__pycache__"))
    return load_exercise(root)


def write_guide(ex: Exercise, text: str) -> Path:
    path = ex.root / GUIDE_FILE
    path.write_text(text, encoding="utf-8")
    return path


GOOD = '''
[[question]]
ask = "Why -inf and not -1e9?"
answer = "Because exp(-inf) is exactly 0."
checks = ["test_a"]
when = "failed"

[[question]]
ask = "What else?"
answer = "Something deeper."
mutants = ["m"]
when = "passed"
'''


def test_no_file_is_an_empty_guide(scratch):
    (scratch.root / GUIDE_FILE).unlink(missing_ok=True)
    assert load_guide(scratch) == Guide(exercise="attention", questions=[])


def test_a_good_file_loads_in_order(scratch):
    write_guide(scratch, GOOD)
    guide = load_guide(scratch)
    assert [q.ask for q in guide.questions] == ["Why -inf and not -1e9?", "What else?"]
    assert guide.questions[0].mutants == [] and guide.questions[1].checks == [] and guide.questions[1].when == "passed"


@pytest.mark.parametrize("change, field, words", [
    (('when = "failed"', 'when = "fail"'), "question 1 ('Why -inf and not -1e9?'), field when", "'failed' or"),
    (('answer = "Something deeper."\n', ''), "question 2 ('What else?'), field answer", "Field required"),
    (('mutants = ["m"]', 'mutant = ["m"]'), "question 2 ('What else?'), field mutant", "Extra inputs"),
    (('mutants = ["m"]', 'mutants = []'), "question 2 ('What else?'), field (the question)", "at least one check"),
    (('checks = ["test_a"]', 'checks = ["checks/test_x.py::test_a"]'), "field checks", "names only"),
    (('checks = ["test_a"]', 'checks = ["test_a", "test_a"]'), "field checks", "listed twice"),
    (('answer = "Because exp(-inf) is exactly 0."', 'answer = "  "'), "field answer", "must not be empty"),
    (('ask = "What else?"', 'ask = "Why -inf and not -1e9?"'), "(document)", "asked twice"),
    (('[[question]]\nask = "Why', 'title = "x"\n[[question]]\nask = "Why'), "[title]", "Extra inputs"),
])
def test_a_bad_file_names_the_file_the_question_and_the_field(scratch, change, field, words):
    path = write_guide(scratch, GOOD.replace(*change, 1))
    with pytest.raises(ExerciseError) as e:
        load_guide(scratch)
    message = str(e.value)
    assert str(path) in message and field in message and words in message, message
    assert isinstance(e.value, GraderError) and e.value.hint and "AUTHORING.md" in e.value.hint


def test_a_file_that_is_not_toml_names_the_file(scratch):
    path = write_guide(scratch, "[[question]]\nask = 'unterminated\n")
    with pytest.raises(ExerciseError, match="is not valid TOML") as e:
        load_guide(scratch)
    assert str(path) in str(e.value)


# --- suggest -------------------------------------------------------------------------------------------------

def q(name: str, when: str, checks=(), mutants=()) -> Question:
    return Question(ask=f"{name}?", answer=f"answer {name}", checks=list(checks), mutants=list(mutants), when=when)


GUIDE = Guide(exercise="x", questions=[
    q("deep_a", "passed", checks=["test_a"]),
    q("about_b", "failed", checks=["test_b"]),
    q("about_a", "failed", checks=["test_a"], mutants=["m1"]),
    q("about_m2", "failed", mutants=["m2"]),
    q("deep_b", "passed", checks=["test_b"], mutants=["m2"]),
    q("about_a_and_b", "failed", checks=["test_b", "test_a"]),
    q("deep_c", "passed", checks=["test_c"]),
])


def asks(questions: list[Question]) -> list[str]:
    return [x.ask.rstrip("?") for x in questions]


def test_everything_passed_gives_the_deeper_questions_in_the_guides_order():
    assert asks(suggest(GUIDE, [], [])) == ["deep_a", "deep_b", "deep_c"]
    assert asks(suggest(GUIDE, [], [], k=2)) == ["deep_a", "deep_b"]


def test_failures_come_first_in_the_order_the_checks_failed_then_deeper_ones_not_about_a_failure():
    assert asks(suggest(GUIDE, ["test_a", "test_b"], [], k=5)) == ["about_a", "about_a_and_b", "about_b", "deep_c"]
    assert asks(suggest(GUIDE, ["test_b", "test_a"], [], k=5)) == ["about_b", "about_a_and_b", "about_a", "deep_c"]


def test_a_question_tied_to_two_failures_is_asked_once():
    got = suggest(GUIDE, ["test_b", "test_a"], ["m1"], k=10)
    assert len(got) == len({x.ask for x in got}) == 4


def test_diagnosed_mutants_come_after_failed_checks_and_rule_out_their_deeper_questions():
    assert asks(suggest(GUIDE, ["test_c"], ["m2"], k=5)) == ["about_m2", "deep_a"]
    assert asks(suggest(GUIDE, [], ["m1", "m2"], k=5)) == ["about_a", "about_m2", "deep_a", "deep_c"]


def test_k_caps_the_list_and_mistakes_win_over_deeper_questions():
    assert asks(suggest(GUIDE, ["test_a"], [], k=1)) == ["about_a"]
    assert suggest(GUIDE, ["test_a"], [], k=0) == []
    assert asks(suggest(GUIDE, ["test_b"], [], k=3)) == ["about_b", "about_a_and_b", "deep_a"]


def test_check_ids_are_reduced_to_function_names():
    assert check_function("test_sdpa.py::test_mask[3-float64]") == "test_mask"
    assert check_function("test_mask") == "test_mask"
    assert asks(suggest(GUIDE, ["test_x.py::test_b[1]"], [], k=1)) == ["about_b"]


def test_an_unknown_failure_or_an_empty_guide_still_answers():
    assert asks(suggest(GUIDE, ["test_zzz"], ["nope"])) == ["deep_a", "deep_b", "deep_c"]
    assert suggest(Guide(exercise="x"), ["test_a"], ["m1"]) == []


def test_the_same_inputs_suggest_the_same_questions():
    runs = {tuple(asks(suggest(GUIDE, ["test_b", "test_a"], ["m2"], k=4))) for _ in range(5)}
    assert runs == {("about_b", "about_a_and_b", "about_a", "about_m2")}


def test_because_says_why_each_was_chosen():
    failed, diagnosed = ["test_x.py::test_b", "test_a"], ["m2"]
    reasons = {x.ask: because(x, failed, diagnosed) for x in suggest(GUIDE, failed, diagnosed, k=5)}
    assert reasons == {"about_b?": "check test_b failed", "about_a_and_b?": "check test_b failed",
                       "about_a?": "check test_a failed", "about_m2?": "looks like mutant m2",
                       "deep_c?": "everything it is tied to passed"}


