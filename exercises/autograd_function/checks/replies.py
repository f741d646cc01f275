"""What each autograd_function probe sends back: the judge checks every reply against this before a check reads it."""

from grader.judge.replies import ANY, RAISED, TENSOR_OR_OPAQUE, Reply, one_of, or_none

GRAD = or_none(TENSOR_OR_OPAQUE)

REPLIES = {
    "run": Reply({"out": ANY, "out_requires_grad": bool, "grad": GRAD}),
    "backward_returns": Reply({"kind": str, "length": int | None, "is_none": [bool], "first": GRAD}),
    "gradcheck": Reply({"passed": bool, "error": str | None}),
    "graph": Reply({"plain_requires_grad": bool, "plain_grad_fn": str | None, "grad_fn": str | None,
                    "through_clamp": bool}),
    "inplace_after_forward": Reply(one_of({"raised": RAISED}, {"grad": GRAD})),
    "input_after_call": Reply({"x_after": TENSOR_OR_OPAQUE}),
}
