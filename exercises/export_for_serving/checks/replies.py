"""What the export_for_serving probe sends back: the judge checks every reply against this before a check reads it."""

from grader.judge.replies import OPAQUE, RAISED, TENSOR, Reply, one_of, or_none

#: One input's output in the fresh process: a tensor, what it raised, or a description of what came instead.
OUTPUTS = [one_of(TENSOR, {"raised": RAISED}, OPAQUE)]

REPLIES = {
    "serve": Reply({"files": {str: int}, "path": str, "export_returned": or_none(OPAQUE), "export_seconds": float,
                    "class_importable?": bool, "batch_range?": [int], "archive?": OUTPUTS, "archive_raised?": RAISED,
                    "served?": OUTPUTS, "load_raised?": RAISED, "load_returned?": OPAQUE, "error?": str,
                    "seconds?": float}),
}
