"""Checks for DynamicBatcher(model, max_batch, max_wait) with submit(x, now) and poll(now)."""

from __future__ import annotations

import pytest
from hypothesis import example, given

from _dynamic_batcher_helpers import Run, poll, request, scenarios, submit
from grader.judge import candidate_raises, call


def _one_row(seed: int):
    return request(seed, 1)


# ------------------------------------------------------------------------- visible


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "submit only queues and returns the ticket (0, 1, 2, ...). Once max_batch rows wait, the next "
    "poll calls the model once on torch.cat of them, oldest first, and returns [(ticket, y), ...]."
)
def test_full_batch_flushes_at_next_poll(sandbox):
    """A full batch: submit only queues; the next poll runs the model once on all of it"""
    schedule = [submit(0.0, _one_row(1)), submit(0.0, _one_row(2)), submit(0.25, _one_row(3)),
                submit(0.5, _one_row(4)), poll(0.5), submit(0.75, _one_row(5)), poll(0.75)]
    Run(sandbox, 4, 10.0, schedule).everything()


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "poll(now) also flushes a partial batch once the OLDEST waiting request has waited max_wait "
    "(now - its arrival >= max_wait); until then it returns []."
)
def test_partial_batch_flushes_when_oldest_has_waited(sandbox):
    """A partial batch is flushed by the poll at which the oldest request has waited max_wait"""
    schedule = [submit(0.0, request(1, 2)), poll(0.5), submit(0.75, _one_row(2)), poll(1.0),
                poll(1.5), poll(3.0)]
    run = Run(sandbox, 8, 1.0, schedule)
    run.flushes()
    run.results()


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "Each request gets its own rows of the batch's output: y = out[offset:offset + rows], where "
    "offset counts the rows of the requests before it in the batch."
)
@given(scenario=scenarios(drain="far"))
@example(scenario=(4, 0.5, [submit(0.0, request(1, 3)), submit(0.0, request(2, 1)), submit(0.25, request(3, 2)),
                           submit(0.25, request(4, 1)), poll(1.0), poll(1.0), poll(1.0)]))
def test_every_result_reaches_its_ticket(sandbox, scenario):
    """Every request's y is model(x) for its own x, whatever batch it was served in"""
    Run(sandbox, *scenario).every_ticket_answered()


# -------------------------------------------------------------------------- hidden


@pytest.mark.points(3)
@given(scenario=scenarios())
@example(scenario=(3, 1.0, [submit(0.0, request(1, 1)), submit(0.5, request(2, 2)), submit(0.75, request(3, 1)),
                           poll(0.75), poll(1.5), submit(1.75, request(4, 3)), poll(2.0), poll(2.75)]))
@example(scenario=(2, 2.0, [submit(0.0, request(1, 1)), submit(1.0, request(2, 1)), submit(1.5, request(3, 1)),
                           poll(2.5), poll(3.25), poll(3.5)]))
def test_schedule_matches_the_contract(sandbox, scenario):
    """Random schedules: every ticket, model call and poll result is the one the contract gives"""
    Run(sandbox, *scenario).everything()


@pytest.mark.points(2)
@given(scenario=scenarios())
@example(scenario=(4, 0.0, [submit(0.0, request(1, 3)), submit(0.0, request(2, 2)), submit(0.0, request(3, 4)),
                           poll(0.0)]))
@example(scenario=(5, 1.0, [submit(0.0, request(1, 4)), submit(0.25, request(2, 3)), poll(0.5)]))
def test_never_more_than_max_batch_rows(sandbox, scenario):
    """No model call ever gets more than max_batch rows (a request that does not fit waits)"""
    Run(sandbox, *scenario).rows_within_max_batch()


@pytest.mark.points(1)
def test_deadline_is_inclusive(sandbox):
    """The deadline is inclusive: due when now - arrival >= max_wait, exactly at the deadline too"""
    Run(sandbox, 4, 1.0, [submit(0.5, _one_row(1)), poll(1.25), poll(1.5)]).flushes()
    Run(sandbox, 4, 0.0, [submit(2.0, _one_row(2)), poll(2.0), submit(2.0, _one_row(3)), submit(2.0, _one_row(4)),
                          poll(2.0)]).flushes()


@pytest.mark.points(2)
def test_timer_runs_from_the_oldest_waiting_request(sandbox):
    """The deadline counts from the arrival of the oldest request still waiting, also after a flush"""
    # Newer requests do not push the deadline back.
    Run(sandbox, 8, 1.0, [submit(0.0, _one_row(1)), submit(0.5, _one_row(2)), submit(0.75, _one_row(3)),
                          poll(1.0)]).flushes()
    # After a full batch leaves, the request left behind keeps its own arrival time (1.5): due at 3.5.
    Run(sandbox, 2, 2.0, [submit(0.0, _one_row(4)), submit(1.0, _one_row(5)), submit(1.5, _one_row(6)),
                          poll(2.5), poll(3.25), poll(3.5)]).flushes()


@pytest.mark.points(2)
def test_multi_row_requests_are_never_split(sandbox):
    """A request's rows go to one model call; batches take the oldest requests that fit, in order"""
    # 3 + 2 > 4: the 2-row request waits for the next call, whole.
    Run(sandbox, 4, 1.0, [submit(0.0, request(1, 3)), submit(0.0, request(2, 2)), poll(0.0), poll(1.0)]).batches()
    # FIFO without skipping ahead: [3] then [2, 1], never [3, 1] then [2].
    Run(sandbox, 4, 0.5, [submit(0.0, request(3, 3)), submit(0.0, request(4, 2)), submit(0.0, request(5, 1)),
                          poll(0.5)]).batches()
    # A request of exactly max_batch rows is a batch on its own.
    Run(sandbox, 3, 5.0, [submit(0.0, request(6, 1)), submit(0.25, request(7, 3)), poll(0.25), poll(5.25)]).batches()


@pytest.mark.points(2)
def test_one_model_call_per_batch(sandbox):
    """One model call per batch on torch.cat of its requests, oldest first; a poll may flush several"""
    xs = [_one_row(10 + i) for i in range(7)]
    run = Run(sandbox, 3, 4.0, [submit(0.25 * i, x) for i, x in enumerate(xs)] + [poll(2.0), poll(6.0)])
    run.batches()
    run.results()


@pytest.mark.points(1)
@given(scenario=scenarios())
def test_submit_never_calls_the_model(sandbox, scenario):
    """submit only queues: the model runs inside poll, never inside submit"""
    run = Run(sandbox, *scenario)
    run.only_polls_call_the_model()


@pytest.mark.points(1)
def test_model_runs_under_no_grad(sandbox):
    """The model is called under torch.no_grad() (or inference mode)"""
    Run(sandbox, 2, 1.0, [submit(0.0, _one_row(1)), submit(0.0, _one_row(2)), poll(0.0),
                          submit(0.5, _one_row(3)), poll(1.5)]).no_grad()


@pytest.mark.points(1)
def test_tickets_are_consecutive_ints(sandbox):
    """Tickets are the ints 0, 1, 2, ... in the order of the accepted submits"""
    Run(sandbox, 3, 1.0, [submit(0.0, request(i, 1 + i % 3)) for i in range(6)]).tickets()


@pytest.mark.points(1)
def test_poll_returns_an_empty_list_when_nothing_is_due(sandbox):
    """poll returns [] when nothing is due (before any submit, and while a batch waits)"""
    Run(sandbox, 4, 1.0, [poll(0.0), submit(0.0, _one_row(1)), poll(0.75), submit(0.75, _one_row(2)), poll(1.5),
                          poll(1.5), poll(2.0)]).empty_polls()


@pytest.mark.points(1)
def test_rejects_bad_requests(sandbox):
    """ValueError (naming max_batch) for a request over max_batch rows; a rejected submit changes nothing"""
    # rows > max_batch, then 0 rows: no ticket taken, nothing queued, the clock not moved (now=5.0 is not seen).
    schedule = [submit(0.0, request(1, 2)), submit(5.0, request(2, 4)), submit(0.5, request(3, 3)),
                submit(6.0, request(4, 0)), submit(0.5, request(5, 1)), poll(1.0)]
    run = Run(sandbox, 3, 1.0, schedule)
    run.raises()
    run.tickets()
    run.flushes()


@pytest.mark.points(1)
def test_rejects_time_going_backwards(sandbox):
    """ValueError (naming now) when now goes back; an equal now is fine; a rejected call changes nothing"""
    schedule = [submit(1.0, _one_row(1)), poll(1.5), submit(1.25, _one_row(2)), poll(1.25), poll(1.5),
                submit(1.5, _one_row(3)), poll(2.0), poll(2.5),
                # a submit moves the clock too: an earlier submit right after it, with no poll between, raises
                submit(3.0, _one_row(4)), submit(2.75, _one_row(5)), poll(4.0)]
    run = Run(sandbox, 4, 1.0, schedule)
    run.raises()
    run.flushes()


@pytest.mark.points(1)
def test_rejects_bad_arguments(sandbox):
    """ValueError naming the argument for max_batch < 1 and max_wait < 0; max_wait = 0 is fine"""
    for max_batch, max_wait, name in [(0, 1.0, "max_batch"), (-2, 1.0, "max_batch"), (4, -0.25, "max_wait")]:
        with candidate_raises("ValueError", match=name,
                              what=f"DynamicBatcher(model, max_batch={max_batch}, max_wait={max_wait})"):
            call(sandbox, "make", max_batch, max_wait)
    call(sandbox, "make", 1, 0.0)
