"""What each grad_monitor probe sends back: the judge checks every reply against this before a check reads it."""

from grader.judge.replies import OPAQUE, RAISED, TENSOR_OR_OPAQUE, Reply, defer, one_of, or_none

#: The candidate's report as plain data: nested dicts with string keys and lists of plain values, else descriptions.
PLAIN = one_of(None, str, float, int, bool, OPAQUE, [defer(lambda: PLAIN)], {str: defer(lambda: PLAIN)})
COUNT = int | OPAQUE
HOOKS = {"params": {str: COUNT}, "modules": {str: (COUNT, COUNT, COUNT, COUNT)}}

REPLIES = {
    "monitor": Reply({"hooks_before": HOOKS, "entered_is_self": bool, "hooks_inside": HOOKS, "hooks_after": HOOKS,
                      "grads": {str: or_none(TENSOR_OR_OPAQUE)}, "report": PLAIN, "owner_calls_inside": int,
                      "report_after?": PLAIN, "owner_calls_after?": int}),
    "monitor_raising": Reply({"escaped": or_none(RAISED), "hooks_before": HOOKS, "hooks_after": HOOKS,
                              "report": PLAIN}),
}
