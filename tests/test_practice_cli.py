"""``grader list`` and ``grader show`` in process: 80 columns, no colour, best scores, escaped text."""

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.exercise import load_exercise
from grader.practice import history
from grader.practice.catalog import CACHE_FOLDER, catalog, describe
from grader.reports.model import CheckResult, Environment, Report, Status, Visibility

ENV = {"COLUMNS": "80", "NO_COLOR": "1"}
NAMES = ["attention", "collate_fn", "custom_layer", "ddp_step", "early_stopping"]
TOY = Path(__file__).parent / "fixtures" / "toy"


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    """The catalog's cache, filled once for this module (collecting five exercises takes seconds)."""
    folder = tmp_path_factory.mktemp("catalog-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GRADER_DATA_DIR", str(folder))
        catalog()
    return folder / CACHE_FOLDER


@pytest.fixture(autouse=True)
def _cached(collected):
    shutil.copytree(collected, Path(os.environ["GRADER_DATA_DIR"]) / CACHE_FOLDER)


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], env=ENV)


def _fits(output: str) -> None:
    too_wide = [line for line in output.splitlines() if len(line) > 80]
    assert not too_wide, too_wide
    assert "\x1b[" not in output  # NO_COLOR: no styling escapes at all


def _report(exercise: str, score: float, max_score: float) -> Report:
    check = CheckResult(id="test_a.py::test_a", name="a", status=Status.PASSED if score else Status.FAILED,
                        score=score, max_score=max_score, visibility=Visibility.HIDDEN)
    return Report(exercise=exercise, graded=True, score=score, max_score=max_score, checks=[check],
                  environment=Environment(exercise_version="1", exercise_fingerprint="f", sandbox="local",
                                          submission_sha256="0" * 64))


def _row(output: str, name: str) -> str:
    return next(line for line in output.splitlines() if line.split()[:1] == [name])


def test_list_fits_80_columns_and_shows_every_exercise():
    r = invoke("list")
    assert r.exit_code == 0, r.output
    _fits(r.output)
    for name in NAMES:
        row = _row(r.output, name)
        info = describe(load_exercise(name))
        assert f" {info.checks.points:g} " in row and info.level in row and row.rstrip().endswith("—")


def test_list_shows_the_best_score_so_far():
    history.record(_report("attention", 9, 22))
    history.record(_report("attention", 15, 22))
    history.record(_report("attention", 12, 22))
    r = invoke("list")
    assert r.exit_code == 0, r.output
    _fits(r.output)
    assert _row(r.output, "attention").rstrip().endswith("15/22")
    assert _row(r.output, "ddp_step").rstrip().endswith("—")


def test_list_reports_a_broken_exercise_and_prints_titles_literally(tmp_path):
    toy = shutil.copytree(TOY, tmp_path / "toy")
    toml = toy / "exercise.toml"
    toml.write_text(toml.read_text().replace('"Toy: scale a tensor"', '"[bold red]Toy[/] \\\\x"'))
    (shutil.copytree(TOY, tmp_path / "bad") / "exercise.toml").write_text("[exercise]\nname = 1\n")
    r = invoke("list", "--exercise-root", tmp_path)
    assert r.exit_code == 0, r.output
    _fits(r.output)
    assert "[bold red]Toy[/]" in r.output  # markup in a title is text, not styling
    assert "skipped" in r.output and "bad" in r.output and "exercise.toml" in r.output


def test_show_renders_the_header_and_the_prompt_in_80_columns():
    r = invoke("show", "attention")
    assert r.exit_code == 0, r.output
    _fits(r.output)
    info = describe(load_exercise("attention"))
    counts = info.checks
    assert f"{counts.total} checks, {counts.points:g} points: {counts.visible} visible, {counts.hidden} hidden" \
        in r.output
    for text in (info.title, "senior", "attention.py", "masking", "scaled_dot_product_attention(q, k, v"):
        assert text in r.output
    assert "Attention: scaled dot-product and multi-head attention" in r.output
    assert "# Attention" not in r.output and "## Not allowed" not in r.output  # rendered, not Markdown source
    assert r.output.rstrip().endswith("Start with: grader init attention")


def test_show_an_unknown_exercise_is_usage_exit_2():
    r = invoke("show", "no_such_exercise")
    assert r.exit_code == 2 and "No exercise at 'no_such_exercise'" in r.output and "Known exercises" in r.output
