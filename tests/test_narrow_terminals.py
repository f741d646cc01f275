"""Narrow terminals (issue 30.8): tables fold into a stacked layout instead of breaking words, and
`grader show` never wraps code. Widths come through COLUMNS, as a user's terminal sets them."""

import os
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.cli.show_cmd import split_code_blocks
from grader.exercise import known_names, load_exercise
from grader.practice import history
from grader.wire.spec import CheckSpec
from grader.host.collected import CACHE_FOLDER, remember_checks
from grader.reports.model import CheckResult, Environment, Report, Status, Visibility

LONG_NAMES = ["weighted_sharded_sampler", "kv_cache_decode", "warmup_cosine_scheduler"]


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    """A catalog cache saying each exercise has one 5-point check: these tests are about layout, and
    collecting 27 exercises' checks for real takes a minute (test_practice_cli counts them)."""
    folder = tmp_path_factory.mktemp("catalog-cache")
    spec = CheckSpec(id="test_x.py::test_x", name="x", points=5, visibility=Visibility.VISIBLE)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GRADER_DATA_DIR", str(folder))
        for name in known_names():
            remember_checks(load_exercise(name), [spec])
    return folder / CACHE_FOLDER


@pytest.fixture(autouse=True)
def _cached(collected):
    shutil.copytree(collected, Path(os.environ["GRADER_DATA_DIR"]) / CACHE_FOLDER)


def on_terminal(*args, columns: int) -> str:
    """What a person sees at that width on stdout: rich thinks it is a terminal (TTY_COMPATIBLE), styles stripped
    (stderr has the progress bar, drawn and erased in place)."""
    r = CliRunner().invoke(main, list(args), env={"COLUMNS": str(columns), "NO_COLOR": "1", "TTY_COMPATIBLE": "1"})
    assert r.exit_code == 0, r.output
    return re.sub(r"\x1b\[[0-9;]*m", "", r.stdout)


def attempt(exercise: str, passed: int) -> Report:
    checks = [CheckResult(id=f"test_a.py::test_{i}", name=f"Weights are a softmax over keys number {i}",
                          status=Status.PASSED if i < passed else Status.FAILED, score=float(i < passed), max_score=1,
                          visibility=Visibility.VISIBLE) for i in range(4)]
    return Report(exercise=exercise, graded=True, score=passed, max_score=4, checks=checks,
                  environment=Environment(exercise_version="1", exercise_fingerprint="f", sandbox="local",
                                          submission_sha256="0" * 64))


def words_whole(output: str, words: list[str]) -> None:
    """Every word appears whole on some line: none was broken across two."""
    for word in words:
        assert any(word in line for line in output.splitlines()), f"{word!r} was broken:\n{output}"


@pytest.mark.parametrize("columns", [60, 80, 120])
def test_history_never_breaks_a_name_or_a_word_at_any_width(columns):
    for name, passed in [("kv_cache_decode", 1), ("kv_cache_decode", 3), ("weighted_sharded_sampler", 2)]:
        history.record(attempt(name, passed))
    out = on_terminal("history", columns=columns)
    assert max(map(len, out.splitlines())) <= columns
    words_whole(out, LONG_NAMES[:2] + ["Changes" if "Changes" in out else "fixed", "softmax"])
    assert "Cha\n" not in out and "decod\n" not in out
    assert "fixed: Weights are a softmax over keys number 1" in " ".join(out.split())
    if columns == 60:  # too narrow for the table: one heading line per attempt, its changes below
        assert "#2 · kv_cache_decode · 3/4 ·" in out and "│" not in out


@pytest.mark.parametrize("columns", [60, 80])
def test_list_keeps_every_column_and_never_breaks_a_word(columns):
    history.record(attempt("kv_cache_decode", 3))
    out = on_terminal("list", columns=columns)
    assert max(map(len, out.splitlines())) <= columns
    words_whole(out, known_names())
    for name in known_names():  # every title word whole, and the best score shown (it was dropped at 60)
        for word in load_exercise(name).title.split():
            assert word in out, (name, word)
    assert "3/4" in out


@pytest.mark.parametrize("terminal", [True, False], ids=["terminal", "piped"])
def test_show_prints_every_code_block_line_exactly_as_written(terminal):
    from grader.practice.workspace import for_workspace

    ex = load_exercise("attention")
    readme = for_workspace(ex, ex.readme.read_text())  # as the workspace holds it: its commands run there
    blocks = [text for kind, text in split_code_blocks(readme) if kind == "code"]
    assert blocks and any(len(line) > 60 for block in blocks for line in block.splitlines())
    env = {"COLUMNS": "60", "NO_COLOR": "1", **({"TTY_COMPATIBLE": "1"} if terminal else {})}
    r = CliRunner().invoke(main, ["show", "attention"], env=env)
    assert r.exit_code == 0, r.output
    lines = {line.rstrip() for line in re.sub(r"\x1b\[[0-9;]*m", "", r.output).splitlines()}
    for block in blocks:
        for line in block.splitlines():
            assert line.rstrip() in lines, f"code line broken at 60 columns: {line!r}"


def test_code_blocks_are_split_from_the_prose_fences_and_all():
    text = "Intro\n\n```python\nx = f(a,\n      b)\n```\nMore\n~~~\nraw ``` inside\n~~~\n"
    assert split_code_blocks(text) == [("prose", "Intro\n"), ("code", "x = f(a,\n      b)"), ("prose", "More"),
                                       ("code", "raw ``` inside")]
