"""What the clip_grad_norm probe sends back: the judge checks every reply against this before a check reads it."""

from grader.judge.replies import TENSOR_OR_OPAQUE, Reply, or_none

REPLIES = {
    "clip": Reply({"total": TENSOR_OR_OPAQUE, "grads": [or_none(TENSOR_OR_OPAQUE)], "same_object": [bool | None]}),
}
