"""What each grad_accumulation probe sends back: the judge checks every reply against this before a check reads it."""

from grader.judge.replies import OPAQUE, TENSOR_OR_OPAQUE, Reply, one_of, or_none

PARAMS = {str: TENSOR_OR_OPAQUE}
GRADS = {str: or_none(TENSOR_OR_OPAQUE)}

REPLIES = {
    "accumulate": Reply({"losses": one_of(OPAQUE, [float | OPAQUE]), "events": [str], "forward_sizes": [int],
                         "step_grads": [GRADS], "params": PARAMS}),
    "refusal": Reply({"raised": bool, "events?": [str], "forward_calls?": int, "pulled?": int, "params?": PARAMS,
                      "grads?": GRADS}),
}
