"""What each int8_linear probe sends back: the judge checks every reply against this before a check reads it."""

from grader.judge.replies import OPAQUE, TENSOR_OR_OPAQUE, Reply, or_none

T = TENSOR_OR_OPAQUE
STATE = {str: T}
HELD = {"total": int, "tensors": [(str, str, [int], int)]}

REPLIES = {
    "build": Reply({"features": [int | OPAQUE], "weight_int8": or_none(T), "scale": or_none(T), "bias": or_none(T),
                    "buffers": [str], "parameters": [str], "state_dict": STATE, "requires_grad": [str],
                    "linear_after": [or_none(T)]},
                   returned=("QuantLinear.from_float(linear)", "a QuantLinear (an nn.Module)")),
    "run": Reply({"outputs": [T], "dequantize": T, "state_before": STATE, "state_after": STATE}),
    "memory": Reply({"weight_alive": bool, "built": HELD, "after_forward": HELD}),
    "round_trip": Reply({"fresh": [T], "original": [T], "after_linear_changed": [T]}),
}
