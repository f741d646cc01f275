"""What the init_weights probe sends back: the judge checks every reply against this before a check reads it."""

from grader.judge.replies import TENSOR_OR_OPAQUE, Reply

REPLIES = {
    "init_zoo": Reply({"state": {str: TENSOR_OR_OPAQUE}, "returned_model": bool | None, "same_parameters": bool}),
}
