"""The lock that lets an ``exclusive`` test run alone under pytest-xdist (tests/exclusive.py)."""

import threading

from tests.exclusive import EngineLock


def _enter(cm, entered: threading.Event, leave: threading.Event):
    with cm:
        entered.set()
        leave.wait(10)


def _start(cm):
    entered, leave = threading.Event(), threading.Event()
    threading.Thread(target=_enter, args=(cm, entered, leave), daemon=True).start()
    return entered, leave


def test_shared_holders_run_together_and_an_exclusive_one_waits_for_them(tmp_path):
    lock = EngineLock(tmp_path)
    in_a, leave_a = _start(lock.shared())
    in_b, leave_b = _start(lock.shared())
    assert in_a.wait(5) and in_b.wait(5), "two shared holders must not exclude each other"
    in_x, leave_x = _start(lock.exclusive())
    assert not in_x.wait(0.5), "the exclusive holder entered while shared holders were inside"
    leave_a.set()
    leave_b.set()
    assert in_x.wait(5)
    leave_x.set()


def test_a_waiting_exclusive_holder_is_not_starved_by_new_shared_ones(tmp_path):
    lock = EngineLock(tmp_path)
    in_a, leave_a = _start(lock.shared())
    assert in_a.wait(5)
    in_x, leave_x = _start(lock.exclusive())
    assert not in_x.wait(0.3)
    in_c, leave_c = _start(lock.shared())  # arrives while the exclusive one waits: must queue behind it
    assert not in_c.wait(0.5), "a new shared holder overtook the waiting exclusive one"
    leave_a.set()
    assert in_x.wait(5)
    assert not in_c.wait(0.3), "a shared holder entered while the exclusive one was inside"
    leave_x.set()
    assert in_c.wait(5)
    leave_c.set()


SPANS_TEST = '''
import json, os, time
import pytest

def _span(name):
    start = time.monotonic()
    time.sleep(0.5)
    with open(os.environ["SPANS"], "a") as f:
        f.write(json.dumps([name, start, time.monotonic()]) + "\\n")

@pytest.mark.exclusive
def test_alone():  # first, so the other worker is busy with shared tests when it starts
    _span("alone")

@pytest.mark.parametrize("i", range(6))
def test_shared(i):
    _span(f"shared{i}")
'''


def test_under_xdist_an_exclusive_test_overlaps_no_other(pytester, monkeypatch, tmp_path):
    """The suite's own conftest hook, in a two-worker run: shared tests overlap, the exclusive one is alone."""
    import json
    from pathlib import Path

    repo = Path(__file__).resolve().parent.parent
    monkeypatch.setenv("PYTHONPATH", str(repo))  # the hook imports tests.exclusive
    monkeypatch.setenv("SPANS", str(tmp_path / "spans.jsonl"))
    pytester.makeconftest((repo / "tests" / "conftest.py").read_text())
    pytester.makeini("[pytest]\nmarkers =\n    exclusive: runs alone\n")
    pytester.makepyfile(test_spans=SPANS_TEST)
    pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider").assert_outcomes(passed=7)
    lines = (tmp_path / "spans.jsonl").read_text().splitlines()
    spans = {name: (start, end) for name, start, end in map(json.loads, lines)}
    alone = spans.pop("alone")
    overlapping = [n for n, (s, e) in spans.items() if s < alone[1] and alone[0] < e]
    assert not overlapping, f"ran beside the exclusive test: {overlapping}"
    pairs = [(a, b) for a in spans for b in spans if a < b and spans[a][0] < spans[b][1] and spans[b][0] < spans[a][1]]
    assert pairs, "no two shared tests overlapped: the run was not parallel, so it proved nothing"
