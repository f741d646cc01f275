"""What each label_smoothing_ce probe sends back: the judge checks every reply against this before a check reads it."""

from grader.judge.replies import TENSOR_OR_OPAQUE, Reply, or_none

REPLIES = {
    "ce": Reply({"out": TENSOR_OR_OPAQUE, "grad": or_none(TENSOR_OR_OPAQUE), "why": str | None}),
    "ce_defaults": Reply(TENSOR_OR_OPAQUE),
}
