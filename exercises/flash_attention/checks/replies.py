"""What each flash_attention probe sends back: the judge checks every reply against this before a check reads it."""

from grader.judge.replies import TENSOR_OR_OPAQUE, Reply

REPLIES = {
    "forward": Reply({"out": TENSOR_OR_OPAQUE, "device": str | None, "unchanged": [bool]}),
    "peak_memory": Reply({"peak": int, "peak_reset": bool, "rows": TENSOR_OR_OPAQUE}),
}
