"""What each rmsnorm_rope probe sends back: the judge checks every reply against this before a check reads it."""

from grader.judge.replies import TENSOR_OR_OPAQUE, Reply, or_none

T = TENSOR_OR_OPAQUE
GRAD = or_none(T)

REPLIES = {
    "rmsnorm_build": Reply({"is_module": bool, "params": [(str, [int], bool, bool)], "weight": T}),
    "rmsnorm_forward": Reply({"out": T, "x_after": T, "grad_x?": GRAD, "grad_weight?": GRAD,
                              "no_grad_reason?": str | None}),
    "rope_build": Reply({"is_module": bool}),
    "rope_forward": Reply({"q": T, "k": T, "v": T, "q_after": T, "k_after": T, "v_after": T, "grad_q?": GRAD,
                           "grad_k?": GRAD, "no_grad_reason?": str | None},
                          returned=("RotaryEmbedding.forward", "a tuple (q_rot, k_rot, v)")),
}
