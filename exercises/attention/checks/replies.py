"""What each attention probe sends back: the judge checks every reply against this before a check reads it."""

from grader.judge.replies import ANY, TENSOR_OR_OPAQUE, Reply, or_none

GRAD = or_none(TENSOR_OR_OPAQUE)
PAIR = {"out": TENSOR_OR_OPAQUE, "weights": TENSOR_OR_OPAQUE}
PROJECTION = {"type": str, "is_linear": bool, "in_features?": ANY, "out_features?": ANY, "has_bias?": bool}

REPLIES = {
    "sdpa": Reply({**PAIR, "grad_q?": GRAD, "grad_k?": GRAD, "grad_v?": GRAD, "no_grad_reason?": str | None},
                  returned=("scaled_dot_product_attention", "a tuple (out, weights)")),
    "mha_build": Reply({"is_module": bool, "params": [(str, [int])], "projections": {str: PROJECTION}}),
    "mha_forward": Reply({**PAIR, "grad_query?": GRAD, "grad_key?": GRAD, "grad_value?": GRAD,
                          "param_grads?": {str: GRAD}, "no_grad_reason?": str | None},
                         returned=("MultiHeadAttention.forward", "a tuple (out, weights)")),
}
