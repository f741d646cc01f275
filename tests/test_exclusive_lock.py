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
