"""What each activation_hooks probe sends back: the judge checks every reply against this before a check reads it."""

from grader.judge.replies import OPAQUE, RAISED, TENSOR_OR_OPAQUE, Reply, defer, one_of, or_none

#: A captured value: a tensor with its autograd state, a tuple or list of captured values, else a description.
CAPTURED = one_of({"tensor": TENSOR_OR_OPAQUE, "requires_grad": bool, "grad_fn": str | None},
                  {"tuple": [defer(lambda: CAPTURED)]}, {"list": [defer(lambda: CAPTURED)]}, OPAQUE)
ACTIVATIONS = one_of({str: CAPTURED}, OPAQUE)
COUNT = int | OPAQUE
HOOKS = {str: (COUNT, COUNT)}

REPLIES = {
    "capture": Reply({"hooks_before": HOOKS, "snapshots": [ACTIVATIONS], "outputs": [TENSOR_OR_OPAQUE],
                      "initial": ACTIVATIONS, "entered_is_self": bool, "hooks_inside": HOOKS, "hooks_after": HOOKS,
                      "on_exit": ACTIVATIONS, "output_after?": TENSOR_OR_OPAQUE, "after_forward?": ACTIVATIONS}),
    "capture_grads": Reply({"out": TENSOR_OR_OPAQUE, "requires_grad": bool, "x_grad": or_none(TENSOR_OR_OPAQUE),
                            "grads": {str: or_none(TENSOR_OR_OPAQUE)}}),
    "capture_raising": Reply({"escaped": or_none(RAISED), "hooks_before": HOOKS, "hooks_after": HOOKS,
                              "activations": ACTIVATIONS}),
    "capture_unknown": Reply({"raised": or_none(RAISED), "hooks_before": HOOKS, "hooks_after": HOOKS}),
    "capture_with_own_hook": Reply({"hooks_before": HOOKS, "hooks_after": HOOKS, "calls_inside": int,
                                    "calls_after": int}),
}
