"""``grader list`` and ``grader show`` in process: 80 columns, no colour, best scores, escaped text."""

import os
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.exercise import load_exercise
from grader.practice import history
from grader.practice.catalog import catalog, describe
from grader.host.collected import CACHE_FOLDER
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


#: A terminal, as rich detects one: what `grader list` shows a person (NO_COLOR leaves bold, stripped below).
TERMINAL = {**ENV, "TTY_COMPATIBLE": "1"}


def invoke(*args, env=ENV):
    return CliRunner().invoke(main, [str(a) for a in args], env=env)


def on_terminal(*args, columns: int = 80):
    """What the terminal shows on stdout (stderr has the progress bar, drawn and erased in place)."""
    r = invoke(*args, env={**TERMINAL, "COLUMNS": str(columns)})
    return SimpleNamespace(exit_code=r.exit_code, output=re.sub(r"\x1b\[[0-9;]*m", "", r.stdout))


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
    r = on_terminal("list")
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
    r = on_terminal("list")
    assert r.exit_code == 0, r.output
    _fits(r.output)
    assert _row(r.output, "attention").rstrip().endswith("15/22")
    assert _row(r.output, "ddp_step").rstrip().endswith("—")


def test_list_reports_a_broken_exercise_and_prints_titles_literally(tmp_path):
    toy = shutil.copytree(TOY, tmp_path / "toy")
    toml = toy / "exercise.toml"
    toml.write_text(toml.read_text().replace('"Toy: scale a tensor"', '"[bold red]Toy[/] \\\\x"'))
    (shutil.copytree(TOY, tmp_path / "bad") / "exercise.toml").write_text("[exercise]\nname = 1\n")
    r = on_terminal("list", "--exercise-root", tmp_path)
    assert r.exit_code == 0, r.output
    _fits(r.output)
    assert "[bold red]Toy[/]" in r.output  # markup in a title is text, not styling
    assert "skipped" in r.output and "bad" in r.output and "exercise.toml" in r.output


@pytest.mark.parametrize("columns", [60, 80, 120])
def test_on_a_terminal_no_exercise_name_is_split(columns):
    r = on_terminal("list", columns=columns)
    assert r.exit_code == 0, r.output
    assert all(len(line) <= columns for line in r.output.splitlines())
    names = [info.name for info in catalog().exercises]
    assert all(_row(r.output, name) for name in names)  # each name whole, first on its row


def test_piped_list_is_one_greppable_line_per_exercise():
    history.record(_report("attention", 15, 22))
    r = invoke("list")  # CliRunner's output is no terminal: a pipe, as `grader list | grep NAME` sees it
    assert r.exit_code == 0, r.output
    infos = catalog().exercises
    lines = r.output.splitlines()
    assert [line.split("\t")[0] for line in lines] == [info.name for info in infos]
    row = next(line for line in lines if "mixed_precision_step" in line).split("\t")
    info = describe(load_exercise("mixed_precision_step"))
    assert row[:3] == ["mixed_precision_step", info.title, info.level] and row[4:] == [
        f"{info.checks.points:g}", info.gpu, "—"]
    assert next(line for line in lines if line.startswith("attention\t")).endswith("\t15/22")


def test_piped_list_keeps_a_hostile_title_on_its_line(tmp_path):
    toy = shutil.copytree(TOY, tmp_path / "toy")
    toml = toy / "exercise.toml"
    toml.write_text(toml.read_text().replace('"Toy: scale a tensor"', '"Toy\\nsecond line\\tand\\u001b[2J"'))
    r = invoke("list", "--exercise-root", tmp_path)
    assert r.exit_code == 0, r.output
    assert r.output.splitlines() == [r.output.splitlines()[0]] and "\x1b" not in r.output
    assert r.output.startswith("toy\tToy\\nsecond line\\tand\\x1b[2J\t")


def test_show_renders_the_header_and_the_prompt_in_80_columns():
    r = invoke("show", "attention")
    assert r.exit_code == 0, r.output
    from grader.cli.show_cmd import split_code_blocks

    from grader.practice.workspace import for_workspace

    ex = load_exercise("attention")
    code = {line for kind, text in split_code_blocks(for_workspace(ex, ex.readme.read_text())) if kind == "code"
            for line in text.splitlines()}
    _fits("\n".join(line for line in r.output.splitlines() if line not in code))  # code is never wrapped (issue 30.8)
    info = describe(load_exercise("attention"))
    counts = info.checks
    assert f"{counts.total} checks, {counts.points:g} points: {counts.visible} visible, {counts.hidden} hidden" \
        in r.output
    for text in (info.title, "senior", "attention.py", "masking", "scaled_dot_product_attention(q, k, v"):
        assert text in r.output
    assert "Attention: scaled dot-product and multi-head attention" in r.output
    assert "# Attention" not in r.output and "## Not allowed" not in r.output  # rendered, not Markdown source
    start = "Start with: grader init attention && cd attention"
    assert r.output.splitlines().count(start) == 2 and r.output.rstrip().endswith(start)
    # The prompt's commands as they run in that workspace: never `grader submit exercises/attention`, which grades
    # the stub at a checkout's root and is refused anywhere else (issue 39).
    assert "exercises/attention" not in r.output and "pytest test_attention_example.py" in r.output
    assert any(line.startswith("grader submit ") and "grades attention.py" in line for line in r.output.splitlines())


def test_show_an_unknown_exercise_is_usage_exit_2():
    r = invoke("show", "no_such_exercise")
    assert r.exit_code == 2 and "No exercise named 'no_such_exercise'" in r.output and "Known exercises" in r.output
