"""What each h2d_overlap probe sends back: the judge checks every reply against this before a check reads it."""

from grader.judge.replies import TENSOR_OR_OPAQUE, Reply

CALLS = [{"on_callers_stream": bool, "input": str}]
DEVICES = [str | None]
RETURNS = ("overlapped_map", "a list with one tensor per batch")

REPLIES = {
    "mapped": Reply({"outputs": [TENSOR_OR_OPAQUE], "devices": DEVICES, "calls": CALLS,
                     "batches_after": {"length": int, "values": [TENSOR_OR_OPAQUE]}}, returned=RETURNS),
    "first_batch_complete": Reply({"samples": [TENSOR_OR_OPAQUE], "devices": DEVICES, "calls": CALLS},
                                  returned=RETURNS),
    "overlap_timing": Reply({"seconds": {str: [float]}, "numel": int, "reps": int, "calibrated_copy_s": float,
                             "count": int, "samples": [TENSOR_OR_OPAQUE], "devices": DEVICES, "calls": CALLS},
                            returned=RETURNS),
}
