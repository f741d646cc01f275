"""What each running_stats probe sends back: the judge checks every reply against this before a check reads it."""

from grader.judge.replies import TENSOR_OR_OPAQUE, Reply, or_none

T = TENSOR_OR_OPAQUE
STATS = {str: {"value": T, "requires_grad": bool, "grad_fn": str | None}}

REPLIES = {
    "describe": Reply({"is_module": bool, "parameters": [(str, [int], bool)], "buffers": [(str, [int], str)],
                       "state_dict": {str: T}, "weight": T, "bias": T, "stats": STATS}),
    "drive": Reply({"steps": [{"out": T, "stats": STATS,
                               "grads": or_none({"x": or_none(T), "weight": or_none(T), "bias": or_none(T)})}],
                    "state_dict": {str: T}, "parameters": [str]}),
}
