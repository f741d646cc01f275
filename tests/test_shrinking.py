"""A failing check's shrinking costs a fixed number of calls (grader.judge.shrinking, issue 14 §1).

Each test runs a small hypothesis property in this process and counts the calls of its
body, as a check's calls into the sandbox would be counted. Counts, not clocks: nothing
here depends on the machine's speed.
"""

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from grader.judge import shrinking


@pytest.fixture(autouse=True)
def bounded():
    assert shrinking.bound_shrinking()  # this hypothesis has the hooks the call budget needs
    assert shrinking.bound_shrinking()  # and installing twice does not bound twice


def failing_property(*, phases=shrinking.PHASES):
    """A check that shrinks slowly (a list of floats whose sum must pass 1000, with more than three distinct
    values): returns how many times its body ran, and the failure hypothesis raised."""
    calls = 0

    @settings(database=None, derandomize=True, max_examples=50, phases=phases, deadline=None)
    @given(st.lists(st.floats(0, 1e6), min_size=1, max_size=40), st.lists(st.text()))
    def check(xs, words):
        nonlocal calls
        calls += 1
        assert not (sum(xs) > 1000 and len(xs) > 3 and len(set(xs)) > 3)

    with pytest.raises(AssertionError) as failure:
        check()
    return calls, failure.value


def test_the_calls_once_shrinking_has_begun_are_bounded(monkeypatch):
    monkeypatch.setattr(shrinking, "MAX_SHRINK_CALLS", 0)
    before_shrinking, _ = failing_property()  # generation (the same every run), one shrink call, the final replay
    monkeypatch.setattr(shrinking, "MAX_SHRINK_CALLS", 10**9)
    unbounded, _ = failing_property()
    monkeypatch.undo()
    bounded, error = failing_property()
    assert unbounded > before_shrinking + shrinking.MAX_SHRINK_CALLS + 10  # this property needs the budget
    assert bounded <= before_shrinking + shrinking.MAX_SHRINK_CALLS
    assert any(note.startswith("Failing test case") for note in error.__notes__)  # still a counterexample


def test_the_same_property_gives_the_same_counterexample_every_time():
    notes = [failing_property()[1].__notes__ for _ in range(2)]
    assert notes[0] == notes[1]


def test_the_explain_phase_is_left_out_of_a_grading(monkeypatch):
    """Explaining (which arguments do not matter) took most of the calls of a check that fails on any input."""
    assert Phase.explain not in shrinking.PHASES and Phase.shrink in shrinking.PHASES
    monkeypatch.setattr(shrinking, "MAX_SHRINK_CALLS", 10**9)  # only the phases differ below

    def run(phases):
        calls = 0

        @settings(database=None, derandomize=True, max_examples=50, phases=phases, deadline=None)
        @given(st.lists(st.integers(), min_size=1), st.text(), st.floats(allow_nan=False))
        def check(xs, word, number):
            nonlocal calls
            calls += 1
            assert sum(xs) <= 10

        with pytest.raises(AssertionError) as failure:
            check()
        return calls, "".join(failure.value.__notes__)

    explained_calls, explained = run(tuple(Phase))
    calls, notes = run(shrinking.PHASES)
    assert "or any other generated value" in explained and "or any other generated value" not in notes
    assert calls < explained_calls
