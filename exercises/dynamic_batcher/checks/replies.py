"""What each dynamic_batcher probe sends back: the judge checks every reply against this before a check reads it."""

from grader.judge.replies import OPAQUE, RAISED, TENSOR_OR_OPAQUE, Reply, one_of

TICKET = int | OPAQUE
RESULTS = one_of(OPAQUE, [one_of(OPAQUE, (TICKET, TENSOR_OR_OPAQUE))])
ENTRY = {"op": str, "ticket?": TICKET, "results?": RESULTS, "raised?": RAISED,
         "calls": [{"x": TENSOR_OR_OPAQUE, "grad": bool}]}

REPLIES = {
    "run": Reply({"log": [ENTRY]}),
    "make": Reply({}),
}
