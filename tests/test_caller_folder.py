"""The grader imports nothing from the folder it is run in: a ``random.py`` there cannot break a grading.

Each test works in a folder holding ``random.py``, ``json.py``, ``pytest.py`` and
``torch.py`` that raise on import, as a candidate's or a user's working folder might.
"""

from __future__ import annotations

import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from grader.host.grading import grade
from grader.host import warm

REPO = Path(__file__).resolve().parent.parent
TOY = REPO / "tests" / "fixtures" / "toy"
SHADOWED = ("random", "json", "pytest", "torch")


@pytest.fixture
def shadowing(tmp_path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    for name in SHADOWED:
        (folder / f"{name}.py").write_text(f"raise RuntimeError('{name} was imported from the caller folder')\n")
    return folder


def cli_env() -> dict[str, str]:
    """The test's environment, with this checkout first on PYTHONPATH."""
    path = os.pathsep.join(p for p in [str(REPO), os.environ.get("PYTHONPATH", "")] if p)
    return dict(os.environ, PYTHONPATH=path, COLUMNS="100", NO_COLOR="1")


@pytest.mark.parametrize("command", [["grader"], ["python", "-m", "grader"]], ids=["console-script", "python-m"])
def test_grader_submit_grades_in_a_folder_that_shadows_modules(shadowing, command):
    bindir = Path(sys.executable).parent
    argv = [str(bindir / "grader")] if command == ["grader"] else [sys.executable, "-m", "grader"]
    result = subprocess.run([*argv, "submit", "toy", str(TOY / "solution.py"), "--exercise-root", str(TOY.parent),
                             "--sandbox", "local", "--no-history"], cwd=shadowing, env=cli_env(), capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Score: 6 / 6 points" in result.stdout
    assert "caller folder" not in result.stdout + result.stderr


def test_a_warm_judge_started_after_a_chdir_into_such_a_folder_ignores_it(shadowing, monkeypatch):
    """As a batch or a notebook does: grade() from a process whose current folder shadows modules."""
    server = warm._server
    if server is not None:  # the next grading must start the server from the shadowing folder
        server.proc.kill()
        server.proc.wait()
    monkeypatch.chdir(shadowing)
    # An empty entry means "the current folder" to Python; the judge must not inherit it.
    monkeypatch.setenv("PYTHONPATH", cli_env()["PYTHONPATH"] + os.pathsep)
    report = grade(TOY, TOY / "solution.py", sandbox="local")
    assert report.graded, report.not_graded_reason
    assert report.score == report.max_score == 6
    assert warm._server is not server


def test_pythonpath_reaches_a_child_absolute_and_without_the_current_folder(tmp_path, monkeypatch):
    from grader.child_python import child_environment

    monkeypatch.chdir(tmp_path)
    env = child_environment({"PYTHONPATH": os.pathsep.join(["", "lib", "/abs/dir", ""]), "OTHER": "kept"})
    assert env == {"PYTHONPATH": os.pathsep.join([str(tmp_path / "lib"), "/abs/dir"]), "OTHER": "kept"}
    assert "PYTHONPATH" not in child_environment({"PYTHONPATH": os.pathsep})


def test_ray_is_started_away_from_the_callers_folder(shadowing, monkeypatch):
    """Ray puts the driver's current folder on every worker's sys.path: it must not be the caller's."""
    seen = {}
    fake = types.SimpleNamespace(is_initialized=lambda: False, shutdown=lambda: None,
                                 init=lambda **kw: seen.setdefault("cwd", os.getcwd()),
                                 remote=lambda **kw: (lambda f: f))
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.chdir(shadowing)
    from grader.batch.engines import RayEngine

    engine = RayEngine(jobs=1)
    assert Path(seen["cwd"]) != shadowing and os.listdir(seen["cwd"]) == []
    assert Path.cwd() == shadowing  # and the caller is back where it was
    engine.close()
