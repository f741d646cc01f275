"""The commands a workspace's README prints work in that workspace (`grader init`'s folder, `grader pack`'s zip).

The exercise READMEs are written for the repository root (``pytest exercises/NAME/...``,
``grader submit exercises/NAME``); a candidate reads them inside the workspace, where those
paths do not exist. Every exercise's commands are parsed as the CLI would parse them; one is
run for real: attention's example tests, and ``grader submit`` grading the workspace's file.
"""

import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.catalogs import installed
from grader.cli import main
from grader.cli.submit import submit
from grader.exercise import known_names, load_exercise
from grader.practice.pack import pack_exercise
from grader.practice.target import resolve_target
from grader.practice.workspace import init_workspace

REPO = Path(__file__).resolve().parent.parent
SHELL_FENCES = {"```", "```bash", "```sh", "```console"}


def commands(readme: str) -> list[list[str]]:
    """The ``pytest`` and ``grader submit`` command lines in the README's shell code blocks, comments dropped."""
    found, fence = [], None
    for line in readme.splitlines():
        if line.startswith("```"):
            fence = line.strip() if fence is None else None
            continue
        if fence in SHELL_FENCES:
            argv = shlex.split(line, comments=True)
            if argv[:1] == ["pytest"] or argv[:2] == ["grader", "submit"]:
                found.append(argv)
    return found


def check_works_in(ws: Path, name: str, argv: list[str]) -> None:
    if argv[0] == "pytest":
        for arg in argv[1:]:
            if not arg.startswith("-"):
                assert (ws / arg.split("::")[0]).is_file(), f"{name}: `{shlex.join(argv)}` names a file not in {ws}"
        return
    ctx = submit.make_context("submit", argv[2:])  # parsed as the CLI parses it: options and all
    target = resolve_target(ctx.params["exercise"], ctx.params["submission"], cwd=ws, catalog=installed())
    assert target.exercise.name == name, f"{name}: `{shlex.join(argv)}` grades {target.exercise.name}"
    if ctx.params["submission"] is None:  # the workspace's own file, not the stub in the install
        assert target.submission == ws / target.exercise.config.exercise.submission, shlex.join(argv)


@pytest.mark.parametrize("name", known_names())
def test_every_readme_command_works_in_the_initialised_workspace(name, tmp_path):
    ws = tmp_path / name
    init_workspace(load_exercise(name), ws)
    readme = (ws / "README.md").read_text()
    found = commands(readme)
    assert any(a[0] == "pytest" for a in found) and any(a[:2] == ["grader", "submit"] for a in found), found
    for argv in found:
        check_works_in(ws, name, argv)
    for path in ws.iterdir():  # prose and examples' docstrings alike: no path that exists only in the repository
        assert f"exercises/{name}" not in path.read_text(), f"{path.name} still points into the repository"


def test_the_packed_readme_commands_work_in_the_unzipped_folder(tmp_path):
    pack_exercise(load_exercise("ddp_step"), tmp_path / "ddp_step.zip")
    with zipfile.ZipFile(tmp_path / "ddp_step.zip") as zf:
        zf.extractall(tmp_path / "candidate")
    ws = tmp_path / "candidate" / "ddp_step"
    for argv in commands((ws / "README.md").read_text()):
        check_works_in(ws, "ddp_step", argv)


def test_attentions_printed_commands_run_and_grade_the_workspace_file(tmp_path, monkeypatch):
    ws = tmp_path / "attention"
    result = CliRunner().invoke(main, ["init", "attention", str(ws)])
    assert result.exit_code == 0, result.output
    shutil.copy(REPO / "solutions" / "attention" / "attention.py", ws / "attention.py")
    found = commands((ws / "README.md").read_text())
    run_tests = next(a for a in found if a[0] == "pytest")
    pytest_script = Path(sys.executable).with_name("pytest")  # the command as typed, not `python -m pytest`
    done = subprocess.run([str(pytest_script), *run_tests[1:], "-q", "-p", "no:cacheprovider"], cwd=ws,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert " passed" in done.stdout
    grade_it = next(a for a in found if a[:2] == ["grader", "submit"] and len(a) == 2)
    monkeypatch.chdir(ws)
    r = CliRunner().invoke(main, [*grade_it[1:], "--sandbox", "local", "--no-history"], env={"COLUMNS": "100"})
    assert r.exit_code == 0, r.output
    score = re.search(r"Score: ([\d.]+) / ([\d.]+)", r.output)
    assert score and score.group(1) == score.group(2), r.output  # the reference in the workspace: full marks
