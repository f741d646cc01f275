"""The judge's pytest plugin, driven by pytester on throwaway check files."""

import json
from pathlib import Path

import pytest

TOY = Path(__file__).parent / "fixtures" / "toy"


@pytest.fixture
def run_checks(pytester, tmp_path):
    """Write a checks file, run it against the toy solution (the plugin's default sandbox), return the events by kind."""

    def run(source: str, *extra: str, result_holder: list | None = None):
        pytester.makepyfile(test_checks=source)
        events = tmp_path / f"events{len(list(tmp_path.iterdir()))}.jsonl"
        result = pytester.runpytest_subprocess(
            "-p", "grader.judge.plugin", "--grader-exercise", str(TOY),
            "--grader-submission", str(TOY / "solution.py"), "--grader-events", str(events), *extra)
        if result_holder is not None:
            result_holder.append(result)
        out: dict[str, list] = {}
        for line in (events.read_text().splitlines() if events.exists() else []):
            event = json.loads(line)
            out.setdefault(event.pop("event"), []).append(event)
        return out

    return run


def test_markers_and_docstring_become_the_check_spec(run_checks):
    events = run_checks('''
import pytest

@pytest.mark.points(2.5)
@pytest.mark.visibility("visible")
@pytest.mark.hint("think about it")
def test_a(sandbox):
    """Doubles a tensor

    More text that is not the name.
    """

def test_b_undocumented(sandbox):
    pass
''')
    a, b = events["collected"][0]["checks"]
    assert a == {"id": "test_checks.py::test_a", "name": "Doubles a tensor", "points": 2.5,
                 "visibility": "visible", "hint": "think about it", "documented": True, "gpu": False}
    assert b["name"] == "b undocumented" and b["documented"] is False
    assert b["visibility"] == "visible" and b["points"] == 1.0  # the toy's default visibility
    assert [r["status"] for r in events["result"]] == ["passed", "passed"]
    assert events["finished"]


def test_bad_points_are_an_authoring_error_naming_the_check(run_checks):
    holder = []
    events = run_checks('''
import pytest

@pytest.mark.points(-1)
def test_a(sandbox):
    """x"""
''', result_holder=holder)
    (result,) = holder
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*test_checks.py::test_a: points must be a number >= 0, got -1*"])
    assert "collected" not in events and "result" not in events  # nothing ran, nothing scored


def test_gpu_checks_skip_with_a_reason_without_a_gpu(run_checks):
    events = run_checks('''
import pytest

@pytest.mark.gpu
def test_on_gpu(sandbox):
    """Runs on CUDA"""
    raise AssertionError("must not run")
''')
    (result,) = events["result"]
    assert result["status"] == "skipped" and result["message"].startswith("no GPU in the sandbox")
    assert result["gpu"] is True  # the headline says "GPU checks", from this field, not from the message
    assert result["skipped_for"] == "no_gpu"  # a candidate's copy keeps the judge's words by this, not by them


def test_a_checks_own_skip_is_not_the_judges(run_checks):
    events = run_checks('''
import pytest

def test_own(sandbox):
    """Skips itself"""
    pytest.skip("no GPU in the sandbox, says the check")
''')
    (result,) = events["result"]
    assert result["status"] == "skipped" and result["skipped_for"] is None


def test_only_an_assertion_about_the_answer_fails_a_check_anything_else_is_a_check_error(run_checks):
    """A mistyped key, a TypeError in a helper, a broken fixture, one bad example among hypothesis's: the check's
    own bug (check_error), never the candidate's failure. An assertion, pytest.fail and assert_close fail it."""
    events = run_checks('''
import pytest
import torch
from hypothesis import given, strategies as st

@pytest.fixture
def broken_fixture():
    return {}["missing"]

def test_mistyped_key(sandbox):
    """Reads a key the probe never sends"""
    out = {"scaled": sandbox.call("scale", torch.ones(1), 2.0)}
    assert out["scaled_x"].item() == 2.0

def test_helper_type_error(sandbox):
    """A helper called wrongly"""
    torch.testing.assert_close(sandbox.call("scale", torch.ones(1), 2.0), [2.0])

def test_fixture(sandbox, broken_fixture):
    """Its fixture breaks"""

@given(n=st.integers(0, 3))
def test_some_examples_break(sandbox, n):
    """One example in four breaks the check"""
    out = sandbox.call("scale", torch.ones(1), 2.0)
    if n == 3:
        raise TypeError("the check's own arithmetic")
    assert out.item() == 2.0

def test_assertion(sandbox):
    """A wrong answer"""
    torch.testing.assert_close(sandbox.call("scale", torch.ones(1), 2.0), torch.full((1,), 3.0))

def test_explicit_fail(sandbox):
    """The author's pytest.fail"""
    pytest.fail("the answer is wrong")
''')
    got = {r["id"].split("::")[-1]: r for r in events["result"]}
    for name in ("test_mistyped_key", "test_helper_type_error", "test_fixture", "test_some_examples_break"):
        assert got[name]["status"] == "check_error", (name, got[name])
        assert got[name]["message"].startswith("the check's own code raised "), got[name]["message"]
    assert got["test_mistyped_key"]["message"] == "the check's own code raised KeyError: 'scaled_x'"
    assert got["test_some_examples_break"]["message"].endswith("TypeError: the check's own arithmetic")
    assert got["test_assertion"]["status"] == got["test_explicit_fail"]["status"] == "failed"


def test_failed_assertion_and_candidate_error_statuses(run_checks):
    events = run_checks('''
import torch

def test_wrong(sandbox):
    """Wrong answer"""
    assert sandbox.call("scale", torch.ones(1), 2.0).item() == 3.0, "expected 3"

def test_raises(sandbox):
    """Candidate raises"""
    sandbox.call("scale", torch.ones(1), float("inf"))
''')
    wrong, raises = events["result"]
    assert wrong["status"] == "failed" and wrong["message"].startswith("expected 3")
    assert raises["status"] == "error" and raises["message"] == (
        'your code raised ValueError at line 6 (`raise ValueError(f"factor must be finite, got {factor}")`): '
        "factor must be finite, got inf")
    assert raises["raised"] == "ValueError" and wrong["raised"] is None  # what diagnosis compares, as a field
    assert 'raise ValueError(f"factor must be finite' in raises["details"]  # the candidate's own line


def test_exercise_seed_applies_when_none_is_given(run_checks, tmp_path):
    source = f'''
from hypothesis import given, strategies as st

@given(st.integers(0, 10**9))
def test_draws(sandbox, n):
    """Draws"""
    with open({str(tmp_path / "draws.txt")!r}, "a") as f:
        f.write(f"{{n}}\\n")
'''
    run_checks(source)
    first = (tmp_path / "draws.txt").read_text()
    (tmp_path / "draws.txt").unlink()
    run_checks(source)
    assert (tmp_path / "draws.txt").read_text() == first and len(first.splitlines()) >= 5


def test_visible_checks_run_before_hidden_ones_whatever_the_fixtures_group(run_checks):
    """pytest groups checks by module-scoped parametrized fixtures; the judge still runs every visible check
    first (a submission cannot carry a hidden input into one) and reports them in the author's order."""
    events = run_checks('''
import pytest

@pytest.fixture(scope="module", params=[1, 2])
def size(request):
    return request.param

@pytest.mark.visibility("hidden")
def test_hidden(sandbox, size):
    """Hidden"""

def test_visible(sandbox, size):
    """Visible"""

@pytest.mark.visibility("hidden")
def test_hidden_plain(sandbox):
    """Hidden, no fixture"""

def test_visible_plain(sandbox):
    """Visible, no fixture"""
''')
    ran = [r["visibility"] for r in events["result"]]
    assert ran == ["visible"] * 3 + ["hidden"] * 3
    assert [c["id"].split("::")[-1] for c in events["collected"][0]["checks"]] == [
        "test_hidden[1]", "test_visible[1]", "test_hidden[2]", "test_visible[2]", "test_hidden_plain",
        "test_visible_plain"]


def test_checks_import_the_helpers_beside_them_in_any_import_mode(pytester, tmp_path):
    """No exercise needs a conftest.py to import its ``_<name>_helpers.py``: the plugin puts the folder on sys.path."""
    import shutil

    exercise = tmp_path / "toy"
    shutil.copytree(TOY, exercise)
    checks = exercise / "checks"
    (checks / "_toy_helpers.py").write_text("FACTOR = 3.0\n")
    (checks / "test_toy.py").write_text('''
import torch

from _toy_helpers import FACTOR


def test_helper_imported(sandbox):
    """Uses the helper module beside it"""
    torch.testing.assert_close(sandbox.call("scale", torch.ones(2), FACTOR), torch.full((2,), FACTOR))
''')
    events = tmp_path / "events.jsonl"
    pytester.runpytest_subprocess(
        str(checks), "--import-mode=importlib", "-p", "grader.judge.plugin", "--grader-exercise", str(exercise),
        "--grader-submission", str(exercise / "solution.py"), "--grader-events", str(events))
    kinds = [json.loads(line) for line in events.read_text().splitlines()]
    assert [e for e in kinds if e["event"] == "infra"] == []
    assert [(e["name"], e["status"]) for e in kinds if e["event"] == "result"] == [
        ("Uses the helper module beside it", "passed")]


def test_a_bare_plugin_run_runs_the_candidate_in_another_process_than_the_judge(pytester, tmp_path):
    """No --grader-sandbox: an author's plain pytest run gets the worker over a pipe, as a candidate does,
    never the candidate's code imported into the judge (the old in-process default)."""
    import shutil

    exercise = tmp_path / "toy"
    shutil.copytree(TOY, exercise)
    (exercise / "solution.py").write_text(
        "import os\n\nimport torch\n\n\ndef scale(x, factor):\n    return torch.tensor(os.getpid())\n")
    with (exercise / "exercise.toml").open("a") as toml:  # os.getpid in the subset: the sandbox's guard lets it import
        toml.write('\n[subset]\nmodules = ["os.getpid"]\n')
    pids = tmp_path / "pids.json"
    pytester.makepyfile(test_checks=f'''
import json
import os

import torch


def test_where(sandbox):
    """Where the candidate runs"""
    candidate = int(sandbox.call("scale", torch.ones(1), 1.0))
    with open({str(pids)!r}, "w") as f:
        json.dump({{"judge": os.getpid(), "candidate": candidate}}, f)
''')
    events = tmp_path / "events.jsonl"
    pytester.runpytest_subprocess("-p", "grader.judge.plugin", "--grader-exercise", str(exercise),
                                  "--grader-submission", str(exercise / "solution.py"), "--grader-events", str(events))
    seen = [json.loads(line) for line in events.read_text().splitlines()]
    assert [(e["name"], e["status"]) for e in seen if e["event"] == "result"] == [("Where the candidate runs", "passed")]
    where = json.loads(pids.read_text())
    assert where["candidate"] > 0 and where["candidate"] != where["judge"]
    assert [e["sandbox"] for e in seen if e["event"] == "sandbox"] == ["local"]


def test_the_in_process_sandbox_is_gone(run_checks):
    """Asking for it by its old name is "not graded" with the choices named, and no check runs."""
    events = run_checks('''
def test_a(sandbox):
    """x"""
''', "--grader-sandbox", "inprocess")
    assert [e["reason"] for e in events["infra"]] == ["Unknown sandbox 'inprocess': choose one of docker, local."]
    assert "result" not in events
