"""Progress without a terminal (issue 39): a long command says what it is doing at least every 10 s where its output
goes to a file or a pipe. The state (``grader.progress.Work``) and the heartbeat (``grader.cli.heartbeat``) run on a
clock of the test's own, so nothing here waits."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from grader.cli.heartbeat import EVERY_S, Heartbeat, shown_progress
from grader.progress import Work


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def piped() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=False, width=200), out


def test_work_lists_what_is_in_flight_longest_first_with_the_time_so_far():
    clock = Clock()
    work = Work(clock=clock)
    assert work.lines() == []
    work.start("ann/attention")
    clock.now += 151
    work.start("ben/attention")
    clock.now += 12
    assert work.lines() == ["  ann/attention  2:43", "  ben/attention  0:12"]
    work.finish("ann/attention")
    assert work.lines() == ["  ben/attention  0:12"] and work.done == 1
    for n in range(4):
        work.start(f"c{n}/mlp")
    assert work.lines(limit=2) == ["  ben/attention  0:12", "  c0/mlp  0:00", "  +3 more"]
    work.drop("ben/attention")
    assert work.done == 1 and len(work.in_flight()) == 4


def test_the_line_says_n_of_m_done_and_the_slowest_running():
    clock = Clock()
    work = Work("grading", clock=clock)
    work.plan(40)
    for n in range(12):
        work.start(f"c{n}/toy")
        work.finish(f"c{n}/toy")
    work.start("ann/attention")
    clock.now += 72
    work.start("ben/toy")
    clock.now += 79
    assert work.line() == "grading: 12 of 40 done · 2 running, the slowest ann/attention 2:31 · 2:31 so far"
    assert Work("collecting checks", clock=clock).line() == "collecting checks: 0 done · 0:00 so far"


def test_names_from_outside_are_shown_never_obeyed():
    work = Work(clock=Clock())
    work.start("\x1b[2Jeve\u202e/[bold]attention")
    [line] = work.lines()
    assert "\x1b" not in line and "\u202e" not in line and "\\x1b[2Jeve\\u202e/[bold]attention" in line
    assert "\x1b" not in work.line()


def test_the_heartbeat_prints_a_line_every_ten_seconds_of_the_clock_and_none_sooner():
    clock = Clock()
    console, out = piped()
    work = Work(clock=clock)
    work.plan(3)
    beat = Heartbeat(console, work.line, clock=clock)
    assert not beat.tick() and out.getvalue() == ""  # a quick command prints nothing
    clock.now += EVERY_S - 0.5
    assert not beat.tick()
    clock.now += 0.5
    work.start("ann/toy")
    assert beat.tick()
    clock.now += 4
    assert not beat.tick()
    clock.now += 6
    work.finish("ann/toy")
    assert beat.tick()
    assert out.getvalue().splitlines() == ["progress: grading: 0 of 3 done · 1 running, the slowest ann/toy 0:00 · 0:10 so far",
                                           "progress: grading: 1 of 3 done · 0:20 so far"]


def test_the_heartbeat_thread_calls_tick_until_the_block_ends():
    import threading

    console, out = piped()
    said, twice = [], threading.Event()

    def line() -> str:
        said.append(f"line {len(said) + 1}")
        if len(said) == 2:
            twice.set()
        return said[-1]

    beat = Heartbeat(console, line, every=0.0, poll=0.001)  # due at every look
    with beat:
        assert twice.wait(timeout=60), "the heartbeat's thread never ticked twice"
    assert out.getvalue().startswith("progress: line 1\nprogress: line 2\n")
    assert not beat._thread.is_alive()


def test_off_a_terminal_the_display_is_the_heartbeat_and_on_one_a_bar_that_leaves_nothing_behind():
    console, out = piped()
    with shown_progress(console, Work(total=2)):
        pass
    assert out.getvalue() == ""  # nothing was due
    terminal = io.StringIO()
    work = Work(total=2)
    with shown_progress(Console(file=terminal, force_terminal=True, width=100), work):
        work.start("ann/toy")
        work.finish("ann/toy")
    assert "progress:" not in terminal.getvalue()
