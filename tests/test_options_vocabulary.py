"""One spelling per meaning across commands (docs/options.md): the table there is read and held against the CLI,
and the old spellings still work for one release, saying their new name."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from grader.cli import every_command, main

TABLE = Path(__file__).resolve().parent.parent / "docs" / "options.md"


def rows() -> list[tuple[list[str], list[str]]]:
    """(the row's option spellings, the commands its last cell names before any parenthesis) for each option row."""
    out = []
    for line in TABLE.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("| `-") else None
        if not cells or len(cells) < 3:
            continue
        spellings = re.findall(r"-{1,2}[a-z][a-z-]*", cells[0].split("`")[1])
        commands = re.findall(r"`([a-z-]+)[` ]", re.sub(r"\([^)]*\)", "", cells[-1]))
        out.append((spellings, commands))
    return out


def option(command: str, spelling: str) -> click.Option | None:
    cmd = every_command()[command]
    return next((p for p in cmd.params if isinstance(p, click.Option) and spelling in p.opts and not p.hidden), None)


def test_the_table_is_there_and_each_command_it_names_has_the_option_as_spelled():
    table = rows()
    assert len(table) >= 10
    missing = [f"{cmd} {spelling}" for spellings, commands in table for cmd in commands for spelling in spellings
               if option(cmd, spelling) is None]
    assert missing == [], f"docs/options.md names options these commands lack: {missing}"


def test_one_meaning_one_definition():
    sandbox = {c: option(c, "--sandbox") for c in ("submit", "validate", "batch", "regrade")}
    assert {tuple(o.type.choices) for o in sandbox.values()} == {("auto", "docker", "local")}
    assert {c: o.default for c, o in sandbox.items()} == {"submit": "auto", "validate": "auto", "batch": "docker",
                                                         "regrade": "docker"}
    jobs = {c: option(c, "--jobs") for c in ("batch", "validate", "regrade")}
    assert {o.metavar for o in jobs.values()} == {"N"} and not any(o.show_default for o in jobs.values())
    assert {o.help.split("(default: ")[1] for o in jobs.values()} == {"one per core this process may use)."}
    assert {option(c, "--output").opts[0] for c in ("pack", "hand-in", "batch")} == {"-o"}
    assert option("batch", "--only").multiple and option("validate", "--only").multiple
    for cmd in every_command().values():  # no visible option of any command is an old spelling
        for param in getattr(cmd, "params", []):
            if isinstance(param, click.Option) and not param.hidden:
                assert not {"--out", "--submissions", "--exercises", "--solutions"} & set(param.opts), cmd.name


@pytest.mark.parametrize("argv, old, new, effect", [
    (["batch", "{root}/subs", "--out", "{root}/out", "--only", "nosuch"], "--out", "-o/--output",
     "Unknown exercise 'nosuch' in --only"),
    (["regrade", "{root}", "--submissions", "{root}"], "--submissions",
     "the second argument (grader regrade OUTDIR SUBMISSIONS)", "grader.sqlite"),
])
def test_old_spellings_reach_the_command_and_say_their_new_name(tmp_path, argv, old, new, effect):
    (tmp_path / "subs").mkdir()
    r = CliRunner().invoke(main, [a.format(root=tmp_path) for a in argv])
    assert f"deprecated: {old} is now {new}; the old spelling goes in the next release." in r.output, r.output
    assert r.exit_code == 2 and effect in r.output and "Traceback" not in r.output


def test_only_takes_commas_and_repeats_and_batch_needs_an_output(tmp_path):
    from grader.cli.options import only_names

    assert only_names(("a,b", "c", " a ,")) == ["a", "b", "c"]
    r = CliRunner().invoke(main, ["batch", str(tmp_path)])
    assert r.exit_code == 2 and "Missing option '-o' / '--output'" in r.output
