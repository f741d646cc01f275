"""How long hypothesis may work on a candidate's failing example: a fixed number of calls.

Every shrink attempt is a call into the sandbox, and hypothesis's own bounds let a buggy file spend
tens of seconds per failing check. Grading bounds it here: ``PHASES`` without "explain";
``MAX_SHRINK_CALLS``, a count, not a clock, so the same file and seed give the same counterexample on
any machine; ``MAX_SHRINKS`` and ``MAX_SHRINKING_SECONDS`` as a safety net. Stopping early never
changes a score: the check has failed either way. See docs/decisions/shrinking-budget.md.
"""

from __future__ import annotations

from hypothesis import Phase

#: The phases of a grading's hypothesis profile (``grader.judge.plugin``): all but "explain".
PHASES = tuple(phase for phase in Phase if phase is not Phase.explain)
#: Calls of one check once shrinking has begun (the replay of each failure found, then the shrink passes).
MAX_SHRINK_CALLS = 50
#: Successful shrinks of one check (hypothesis's MAX_SHRINKS, 500 by default).
MAX_SHRINKS = 60
#: Wall-clock seconds of shrinking for one check (hypothesis's MAX_SHRINKING_SECONDS, 300 by default).
MAX_SHRINKING_SECONDS = 10

_BUDGET_END = "_grader_shrink_calls_end"  # set on a runner while it shrinks: its call_count where shrinking stops


def bound_shrinking() -> bool:
    """Put the bounds in force for every hypothesis test in this process (safe to call again).

    True when the call budget is in force; False where this hypothesis release lacks the
    engine hooks it needs (private API), and only the lowered constants apply.
    """
    from hypothesis.internal.conjecture import engine

    if hasattr(engine, "MAX_SHRINKS"):
        engine.MAX_SHRINKS = MAX_SHRINKS
    if hasattr(engine, "MAX_SHRINKING_SECONDS"):
        engine.MAX_SHRINKING_SECONDS = MAX_SHRINKING_SECONDS
    runner = getattr(engine, "ConjectureRunner", None)
    reason = getattr(getattr(engine, "ExitReason", None), "max_shrinks", None)
    hooks = ("shrink_interesting_test_cases", "test_function", "exit_with")
    if runner is None or reason is None or not all(hasattr(runner, h) for h in hooks):
        return False
    if getattr(runner, "_grader_bounded", False):
        return True

    shrink, test_function = runner.shrink_interesting_test_cases, runner.test_function

    def shrink_interesting_test_cases(self):
        setattr(self, _BUDGET_END, self.call_count + MAX_SHRINK_CALLS)
        try:
            return shrink(self)
        finally:
            setattr(self, _BUDGET_END, None)

    def bounded_test_function(self, data):
        test_function(self, data)
        end = getattr(self, _BUDGET_END, None)
        if end is not None and self.call_count >= end:
            self.exit_with(reason)  # ends the run; the smallest failure found so far is reported

    runner.shrink_interesting_test_cases = shrink_interesting_test_cases
    runner.test_function = bounded_test_function
    runner._grader_bounded = True
    return True
