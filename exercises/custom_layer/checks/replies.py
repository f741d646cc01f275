"""What each custom_layer probe sends back: the judge checks every reply against this before a check reads it."""

from grader.judge.replies import OPAQUE, TENSOR_OR_OPAQUE, Reply, or_none

T = TENSOR_OR_OPAQUE
PARAMS = [(str, [int], bool, bool)]
ATTRIBUTE = {"kind": str, "shape?": [int], "value?": T}
GRADS = {"grads?": {str: or_none(T)}, "no_grad_reason?": str | None}

REPLIES = {
    "linear_build": Reply({"is_module": bool, "params": PARAMS, "state_dict": {str: T}, "weight": ATTRIBUTE,
                           "bias": ATTRIBUTE, "extra_repr": str | OPAQUE, "out?": T}),
    "linear_init": Reply({"weights": [T], "biases": [T]}),
    "linear_forward": Reply({"out": T, **GRADS}),
    "linear_load": Reply({"out": T, "state_dict": {str: T}}),
    "swish": Reply({"is_module": bool, "params": PARAMS, "state_dict": {str: T}, "beta": ATTRIBUTE, "out": T,
                    **GRADS}),
}
