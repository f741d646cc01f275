"""The README's walk-throughs for candidates, panels and authors, run as written on a fresh copy (issue 30).

The blocks are the README's own: each ```bash block after a ``<!-- walk-through: NAME -->`` marker,
in order, so the README and this test cannot drift. They run in one ``bash -e`` script per
walk-through (a ``cd`` carries on to the next block, as in a terminal), in a temporary folder. What
the test cannot do as written is replaced, line by line, by :data:`REPLACED` (each replaced line must
still be in the README, so a changed step fails here rather than going untested):

- ``git clone <this repository> grader``: a copy of this working tree (tracked and untracked files,
  not ignored ones), so the walk-through runs the code under test, not the last commit;
- making ``.venv`` and ``pip install``: a link to the suite's own environment (installing torch takes
  minutes and a network). ``PYTHONPATH`` points at the copy, so ``grader`` is the copy's code and its
  ``exercises/`` the installed catalog, as after ``pip install -e .`` there.

A marker may name a step the person does that is not a command (``before: edit``: the candidate edits
the file; ``after: hand-in``: the candidate's part of the panel's walk-through); :data:`STEPS` plays it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
MARKER = re.compile(r"<!-- walk-through: (?P<name>\w+)(?:; (?P<when>before|after): (?P<step>[\w-]+))? -->\n"
                    r"```bash\n(?P<body>.*?)\n```", re.S)

#: README line (its start) -> what the test runs instead, and why (module docstring).
REPLACED = {
    "git clone <this repository> grader && cd grader": 'cp -a "$WALK_SOURCE" grader && cd grader',
    "python3 -m venv .venv": 'ln -s "$WALK_VENV" .venv',
    ".venv/bin/pip install -c constraints.txt -e .": "true  # installed: the suite's own environment, linked above",
}

#: Steps a person does that are not commands, played between blocks.
STEPS = {
    # The candidate edits the stub: here, into the reference answer (full marks expected below).
    "edit": 'cp "$WALK_SOURCE/solutions/attention/attention.py" attention.py',
    # ann unzips the pack, answers, and hands in; the zip comes back to the panel's folder.
    "hand-in": ('(mkdir ann-home && cd ann-home && python3 -m zipfile -e ../attention-for-ann.zip . && cd attention'
                ' && cp "$WALK_SOURCE/solutions/attention/attention.py" attention.py && grader hand-in'
                ' && mv ann-attention.zip ../../)'),
}


@dataclass(frozen=True)
class Block:
    body: str
    before: str | None = None
    after: str | None = None


def walkthrough(name: str, readme: str | None = None) -> list[Block]:
    """The README's blocks of walk-through ``name``, in order, with the steps around them."""
    blocks = []
    for m in MARKER.finditer(readme if readme is not None else README.read_text(encoding="utf-8")):
        if m["name"] == name:
            when = {m["when"]: m["step"]} if m["when"] else {}
            blocks.append(Block(m["body"], before=when.get("before"), after=when.get("after")))
    return blocks


def script(blocks: list[Block]) -> str:
    lines = ["set -euo pipefail"]
    for block in blocks:
        if block.before:
            lines.append(STEPS[block.before])
        for line in block.body.splitlines():
            lines.append(next((instead for start, instead in REPLACED.items() if line.startswith(start)), line))
        if block.after:
            lines.append(STEPS[block.after])
    return "\n".join(lines) + "\n"


def fresh_copy(dest: Path) -> Path:
    """This working tree's files (tracked and untracked, not ignored), as a clone of it would hold them."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file() and not source.is_symlink():
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return dest


def run(name: str, tmp_path: Path, *, setup: list[Block] = (),
        docker: bool = True) -> tuple[subprocess.CompletedProcess, Path]:
    """Run walk-through ``name`` (after ``setup``'s blocks) in ``tmp_path/walk``; returns the run and the copy.
    ``docker=False``: as on a laptop without Docker (no engine answers), so ``grader submit`` uses the local
    sandbox, as the README says it does there."""
    source = fresh_copy(tmp_path / "source")
    walk = tmp_path / "walk"
    walk.mkdir()
    env = {**os.environ, "WALK_SOURCE": str(source), "WALK_VENV": sys.prefix, "COLUMNS": "100", "NO_COLOR": "1",
           "PYTHONPATH": str(walk / "grader"), "PATH": os.environ["PATH"],
           **({} if docker else {"DOCKER_HOST": f"unix://{tmp_path}/no-docker.sock"})}
    done = subprocess.run(["bash", "-c", script([*setup, *walkthrough(name)])], cwd=walk, env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"walk-through {name} failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return done, walk / "grader"


def install_block() -> list[Block]:
    """The candidate walk-through's first block (clone, install, PATH): where the other two start."""
    return walkthrough("candidate")[:1]


def test_the_walkthroughs_are_there_and_every_replaced_line_is_still_in_the_readme():
    readme = README.read_text(encoding="utf-8")
    for name in ("candidate", "panel", "author"):
        assert walkthrough(name), f"no {name} walk-through in README.md"
    for start in REPLACED:
        assert any(line.startswith(start) for line in readme.splitlines()), f"README no longer says {start!r}"
    steps = {b.before or b.after for name in ("candidate", "panel", "author") for b in walkthrough(name)} - {None}
    assert steps <= STEPS.keys()
    bodies = "\n".join(b.body for b in walkthrough("candidate"))
    assert "grader submit" in bodies and "grader hand-in" in bodies and "grader init attention" in bodies


def test_the_markers_are_read_in_order_with_their_steps():
    text = ("<!-- walk-through: x -->\n```bash\none\n```\nprose\n<!-- walk-through: y -->\n```bash\nother\n```\n"
            "<!-- walk-through: x; before: edit -->\n```bash\ntwo\nthree\n```\n")
    assert walkthrough("x", text) == [Block("one"), Block("two\nthree", before="edit")]
    assert script(walkthrough("x", text)).splitlines()[1:] == ["one", STEPS["edit"], "two", "three"]


@pytest.fixture
def catalog_cache():
    """`grader list` collects every exercise's checks (a minute for 27): the walk-through's own exercise is
    collected for real; the others get a placeholder entry (test_practice_cli counts them for real)."""
    from grader.exercise import known_names, load_exercise
    from grader.wire.spec import CheckSpec
    from grader.host.collected import remember_checks
    from grader.reports.model import Visibility

    spec = CheckSpec(id="test_x.py::test_x", name="x", points=1, visibility=Visibility.VISIBLE)
    for name in known_names():
        if name != "attention":
            remember_checks(load_exercise(name), [spec])


@pytest.mark.slow
def test_the_candidate_walkthrough_runs_as_written(tmp_path, catalog_cache):
    done, copy = run("candidate", tmp_path, docker=False)
    out = done.stdout
    assert "grading with the local sandbox" in done.stderr  # said in one line, as on a laptop
    assert "Scaled dot-product and multi-head attention" in out  # list and show
    assert re.search(r"Score: 22 / 22 points", out), out[-3000:]  # the edited file, graded in the workspace
    assert " passed" in out  # the public examples
    assert "first attempt" in out or "22/22" in out  # history
    zips = list((copy / "attention").glob("*-attention.zip"))
    assert len(zips) == 1 and "sha256" in out


@pytest.mark.slow
@pytest.mark.docker
def test_the_panel_walkthrough_runs_as_written(tmp_path):
    done, copy = run("panel", tmp_path, setup=install_block())
    assert (copy / "results" / "index.html").is_file()
    [row] = [json.loads(line) for line in (copy / "results" / "results.jsonl").read_text().splitlines()]
    assert (row["candidate"], row["exercise"], row["status"], row["score"]) == ("ann", "attention", "graded", 22)


@pytest.mark.slow
def test_the_author_walkthrough_runs_as_written(tmp_path):
    done, copy = run("author", tmp_path, setup=install_block(), docker=False)
    assert (copy / "exercises" / "layer_scale" / "exercise.toml").is_file()
    assert (copy / "solutions" / "layer_scale" / "layer_scale.py").is_file()
    assert not (REPO / "exercises" / "layer_scale").exists()  # written into the copy, nowhere else
    assert "layer_scale: ok" in done.stdout and "Exercise:     layer_scale" in done.stdout


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lowercase, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_the_first_screen_leads_each_audience_to_its_section():
    """Issue 30.9: the README opened with root/CI set-up, and the candidate section began near line 70."""
    lines = README.read_text(encoding="utf-8").splitlines()
    anchors = {anchor(line.lstrip("#")) for line in lines if line.startswith("#")}
    first_screen = "\n".join(lines[:24])
    for audience, section in [("candidate", "practising-on-your-own-machine-candidates"),
                              ("panel", "for-panels-handing-out-and-collecting"),
                              ("author", "writing-an-exercise-authors"),
                              ("CI", "two-commands-a-fresh-debian-machine-as-root")]:
        assert f"(#{section})" in first_screen, f"the first screen does not lead a {audience} to #{section}"
        assert section in anchors, f"no heading makes #{section}"
