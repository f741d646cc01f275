"""What each mixed_precision_step probe sends back: the judge checks every reply against this before a check reads
it (the events and the loss_fn arguments in words, the parameters and gradients as CPU copies)."""

from grader.judge.replies import OPAQUE, TENSOR_OR_OPAQUE, Reply, one_of, or_none

VALUE = float | bool | int | OPAQUE
PARAMS = {str: TENSOR_OR_OPAQUE}
GRADS = {str: or_none(TENSOR_OR_OPAQUE)}
CALL = {"returned": one_of(OPAQUE, {"loss": VALUE, "skipped": VALUE, "scale": VALUE}), "events": [str],
        "loss_args": [(str, str)], "step_grads": [GRADS], "params": PARAMS, "devices": {str: str}, "scale": float}

REPLIES = {
    "amp_run": Reply({"calls": [CALL]}),
    "amp_error": Reply(None),
    "amp_refusal": Reply({"raised": bool, "events?": [str], "params?": PARAMS, "grads?": GRADS, "scale?": float}),
}
