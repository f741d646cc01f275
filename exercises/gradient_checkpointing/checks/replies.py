"""What the gradient_checkpointing probe sends back: the judge checks every reply against this before a check reads
it (the call logs as [block index, grad enabled] pairs, the liveness as [block index, alive] pairs)."""

from grader.judge.replies import TENSOR, TENSOR_OR_OPAQUE, Reply, or_none

CALLS = [(int, bool)]

REPLIES = {
    "run": Reply({"out": TENSOR_OR_OPAQUE, "out_requires_grad": bool, "calls_forward": CALLS, "saved_bytes": int,
                  "saved_storages": int, "alive_after_forward": [(int, bool)], "rng_after_forward": TENSOR,
                  "backward_ran": bool, "rng_after_backward": or_none(TENSOR), "calls_backward": CALLS,
                  "x_requires_grad": bool, "x_after": TENSOR_OR_OPAQUE, "x_grad": or_none(TENSOR_OR_OPAQUE),
                  "grads": {str: or_none(TENSOR_OR_OPAQUE)}},
                 returned=("checkpointed_forward", "a tensor")),
}
