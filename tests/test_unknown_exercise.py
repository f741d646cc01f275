"""An exercise name the grader does not know: exit 2, what was not found, the nearest known name, no traceback.

One helper (``grader.unknown_exercise``) answers for every command that takes a name.
"""

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.exercise import load_catalog_exercise
from grader.unknown_exercise import UnknownExercise, nearest

KNOWN = ["attention", "collate_fn", "ddp_step", "mixed_precision_step", "weighted_sharded_sampler"]


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], env={"COLUMNS": "200", "NO_COLOR": "1"})


@pytest.mark.parametrize("spec, meant", [
    ("attentio", "attention"), ("atention", "attention"), ("Attention", "attention"),
    ("exercises/atention", "attention"),  # a path: its last part
    ("mixed", "mixed_precision_step"),  # the only name it begins
    ("ddp-step", "ddp_step"), ("weighted_sampler", "weighted_sharded_sampler"),
    ("zzz", None), ("", None),
])
def test_nearest_is_the_likely_meant_name_or_none(spec, meant):
    assert nearest(spec, KNOWN) == meant


@pytest.mark.parametrize("argv", [
    ["submit", "attentio"],
    ["submit", "attentio", "file.py"],
    ["init", "attentio"],
    ["pack", "attentio"],
    ["show", "attentio"],
    ["start", "attentio"],
    ["history", "attentio"],
])
def test_every_command_taking_a_name_suggests_the_nearest(argv, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = invoke(*argv)
    assert r.exit_code == 2, r.output
    assert "Did you mean attention?" in r.output and "Known exercises:" in r.output
    assert "Traceback" not in r.output
    assert not list(tmp_path.iterdir()), "a failed command wrote something"


@pytest.mark.parametrize("option", ["--only", "--exercises"])  # --exercises: the old spelling, for one release
def test_batch_only_option_suggests_the_nearest(tmp_path, option):
    (tmp_path / "subs" / "ann" / "attention").mkdir(parents=True)
    (tmp_path / "subs" / "ann" / "attention" / "attention.py").write_text("x = 1\n")
    r = invoke("batch", tmp_path / "subs", "--output", tmp_path / "out", option, "attention,colate_fn",
               "--sandbox", "local")
    assert r.exit_code == 2, r.output
    assert "Unknown exercise 'colate_fn' in --only" in r.output and "Did you mean collate_fn?" in r.output
    assert ("deprecated: --exercises is now --only" in r.output) == (option == "--exercises")


def test_a_stored_name_read_back_from_a_report_gets_the_same_answer():
    with pytest.raises(UnknownExercise) as caught:
        load_catalog_exercise("colate_fn")
    assert caught.value.suggestion == "collate_fn" and "Did you mean collate_fn?" in str(caught.value)


def test_no_suggestion_when_nothing_is_close():
    r = invoke("show", "qqqqqqq")
    assert r.exit_code == 2 and "Did you mean" not in r.output and "Known exercises:" in r.output
    assert "No exercise named 'qqqqqqq' in the installed exercises" in r.output
