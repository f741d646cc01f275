"""`grader submit` says where it is: a progress line per check on a terminal, the graded file on every
scorecard, and a plain warning (no history entry) when the file graded is the exercise's untouched stub.

The progress logic is fed judge events directly (no terminal needed); the CLI runs through CliRunner,
which is not a terminal, so it also proves piped output stays clean.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from grader.batch.jobs import Job, grade_job
from grader.batch.store import Key
from grader.cli import main
from grader.cli.submit_progress import STARTING, CheckProgress, check_progress
from grader.host.grading import grade
from grader.host.live import EventTail
from grader.wire.events import CheckFinished, Collected, Started, event_line
from grader.wire.spec import CheckSpec
from grader.practice import history
from grader.reports.model import CheckResult, Status, Visibility

TOY = Path(__file__).parent / "fixtures" / "toy"
SOLUTION = (TOY / "solution.py").read_text()
ENV = {"COLUMNS": "200", "NO_COLOR": "1"}


def invoke(*args):
    """The CLI; ``grader submit`` grades against the fixtures' catalog, where the toy is."""
    if args[:1] == ("submit",):
        args = (*args, "--exercise-root", TOY.parent)
    return CliRunner().invoke(main, [str(a) for a in args], env=ENV)



def _done(check_id: str, status: Status) -> CheckFinished:
    return CheckFinished(CheckResult(id=check_id, name=check_id, status=status, score=0, max_score=1,
                                     visibility=Visibility.VISIBLE))


CHECKS = (
    CheckSpec(id="test_t.py::test_small", name="scales a small tensor", points=1, visibility=Visibility.VISIBLE),
    CheckSpec(id="test_t.py::test_rows[918273-True]", name="rows sum to one [918273-True]", points=1,
              visibility=Visibility.HIDDEN),
    CheckSpec(id="test_t.py::test_evil", name="evil \x1b[2J name\u202e", points=1, visibility=Visibility.VISIBLE),
)


def test_progress_names_the_running_check_and_how_many_are_left():
    p = CheckProgress()
    assert p.line() == STARTING
    p.feed(Collected(CHECKS))
    assert p.line() == "0 of 3 checks run"
    p.feed(Started("test_t.py::test_small"))
    assert p.line() == "check 1 of 3 · 2 left · scales a small tensor"
    p.feed(_done("test_t.py::test_small", Status.PASSED))
    p.feed(Started("test_t.py::test_evil"))
    line = p.line()
    assert line == "check 2 of 3 · 1 left · ✓ 1 passed · evil \\x1b[2J name\\u202e"
    assert "\x1b" not in line and "\u202e" not in line
    p.feed(_done("test_t.py::test_evil", Status.FAILED))
    p.feed(Started("test_t.py::test_rows[918273-True]"))
    assert p.line() == "check 3 of 3 · 0 left · ✓ 1 passed · ✗ 1 failed · rows sum to one [case 1] (hidden)"
    p.feed(_done("test_t.py::test_rows[918273-True]", Status.TIMEOUT))
    assert p.line() == "all 3 checks run · ✓ 1 passed · ✗ 1 failed · ◷ 1 timed out; writing the scorecard"


def test_progress_never_shows_a_hidden_checks_inputs_to_a_candidate_but_does_to_the_panel():
    for audience, seen in (("candidate", False), ("panel", True)):
        p = CheckProgress(audience=audience)
        p.feed(Collected(CHECKS))
        p.feed(Started("test_t.py::test_rows[918273-True]"))
        assert ("918273" in p.line()) is seen


def test_event_tail_passes_on_complete_lines_only(tmp_path):
    path = tmp_path / "events.jsonl"
    tail = EventTail(path)
    assert tail.new_events() == []  # no file yet
    result = event_line(_done("a", Status.PASSED))
    path.write_text(event_line(Started("a")) + result[:40])
    assert tail.new_events() == [Started("a")]
    with open(path, "a") as f:
        f.write(result[40:] + 'not json\n{"event": "sandbox"}\n')  # a malformed line is skipped: the runner says so
    assert tail.new_events() == [_done("a", Status.PASSED)]


def test_the_progress_line_is_shown_in_place_on_a_terminal_and_every_10_s_elsewhere():
    from grader.cli.heartbeat import Heartbeat

    out = io.StringIO()
    with check_progress(Console(file=out, force_terminal=False), audience="candidate") as on_event:
        on_event(Collected(CHECKS))  # fed off a terminal too; a grading this quick says nothing
    assert out.getvalue() == ""
    state, now = CheckProgress(audience="candidate"), [0.0]
    beat = Heartbeat(Console(file=out, force_terminal=False, width=200), state.line, clock=lambda: now[0])
    state.feed(Collected(CHECKS))
    state.feed(Started("test_t.py::test_small"))
    now[0] = 9.0
    assert not beat.tick()
    now[0] = 10.0
    assert beat.tick() and out.getvalue() == "progress: check 1 of 3 · 2 left · scales a small tensor\n"
    tty = io.StringIO()
    with check_progress(Console(file=tty, force_terminal=True, width=120), audience="candidate") as on_event:
        on_event(Collected(CHECKS))
        on_event(Started("test_t.py::test_small"))
    assert "check 1 of 3 · 2 left · scales a small tensor" in tty.getvalue()


def test_a_grading_passes_on_each_check_as_it_starts_and_ends():
    events = []
    report = grade(TOY, TOY / "solution.py", sandbox="local", on_event=events.append)
    assert isinstance(events[0], Collected) and len(events[0].checks) == len(report.checks)
    started = [e.id for e in events if isinstance(e, Started)]
    finished = [e.id for e in events if isinstance(e, CheckFinished)]
    assert sorted(started) == sorted(finished) == sorted(c.id for c in report.checks)
    for check_id in started:  # each check starts before it ends
        assert events.index(Started(check_id)) < next(i for i, e in enumerate(events)
                                                    if isinstance(e, CheckFinished) and e.id == check_id)


# --- the graded file, named on every scorecard -------------------------------------------------------------

@pytest.fixture
def workspace(toy_workspace):
    return toy_workspace


def test_every_scorecard_names_the_file_it_graded_and_piped_output_has_no_progress(workspace, tmp_path):
    (workspace / "toy.py").write_text(SOLUTION)
    out = tmp_path / "out"
    r = invoke("submit", "--sandbox", "local", "--json", out / "r.json", "--md", out / "r.md", "--html", out / "r.html")
    assert r.exit_code == 0, r.output
    path = str(workspace / "toy.py")
    assert f"File: {path}" in r.output
    assert json.loads((out / "r.json").read_text())["environment"]["submission_path"] == path
    assert f"File `{path}`" in (out / "r.md").read_text()
    assert f'File <code class="file">{path}</code>' in (out / "r.html").read_text()
    assert STARTING not in r.stdout and " checks run" not in r.stdout  # the scorecard alone: progress is on stderr


def test_a_batch_scorecard_names_the_file_by_its_place_in_the_submissions_folder(tmp_path):
    job = Job(Key("ann", "toy", "0" * 64, "v"), str(TOY), "toy.py", SOLUTION.encode(), sandbox="local",
              shown_path="ann/toy/toy.py")
    assert grade_job(job).environment.submission_path == "ann/toy/toy.py"  # not the worker's temporary copy


# --- the untouched stub ------------------------------------------------------------------------------------

def test_grading_the_installed_stub_from_the_wrong_folder_is_said_first_in_one_line_and_not_kept(tmp_path,
                                                                                                 monkeypatch):
    """Issue 30.6: the stub was graded for 8 s and a full 0/19 table printed before the warning at the end."""
    elsewhere = tmp_path / "not-my-workspace"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    r = invoke("submit", TOY, "--sandbox", "local", "--json", tmp_path / "r.json")
    assert r.exit_code == 0, r.output
    first = r.output.splitlines()[0]  # before the scorecard, in one line
    assert first.startswith("note: this is the stub that ships with the grader (")
    assert str(TOY / "toy.py") in first and str(elsewhere) in first and "Nothing is graded or stored" in first
    assert "│ Check" not in r.output and "not run: the file is the exercise's stub, unchanged" in r.output
    assert "not passed" not in r.output  # issue 39: "11 not run" beside "0 passed, 8 not passed" read as failures
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["untouched_stub"] is True and report["environment"]["sandbox"] == "none"  # no sandbox opened
    assert all(c["not_run"] for c in report["checks"]) and report["load_error"]["found"] == "stub"
    assert history.attempts("toy") == []


def test_an_untouched_workspace_file_is_not_an_attempt_but_the_first_edit_is(workspace):
    r = invoke("submit", "--sandbox", "local")
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0] == ("note: toy.py is the exercise's stub, unchanged: nothing of yours to grade yet, so no "
                        "check runs and nothing is stored in history.")
    text = " ".join(r.output.split())
    assert text.count("The submission is the exercise's stub, unchanged") == 1 and "sandbox none" in text, text
    assert history.attempts("toy") == []
    (workspace / "toy.py").write_text(SOLUTION)
    r = invoke("submit", "--sandbox", "local")
    assert r.exit_code == 0 and "unchanged" not in r.output, r.output
    assert [a.score for a in history.attempts("toy")] == [6.0]
