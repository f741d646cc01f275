"""What each ddp_step probe sends back: the judge checks every reply against this before a check reads it."""

from grader.judge.replies import ANY, RETURNED, TENSOR_OR_OPAQUE, Reply, one_of, or_none

INDICES = one_of({"indices": [int]}, RETURNED)
STATE = {"params": {str: TENSOR_OR_OPAQUE}, "grads": {str: or_none(TENSOR_OR_OPAQUE)},
         "losses?": [{"type": str, "value?": float}]}
#: One rank's result: its state, or why it has none (the candidate's error record is checked where it is read).
RANK = one_of(STATE, {"candidate_error": ANY, "failed_at": float}, {"crashed": str}, {"hung": str}, {"stopped": str},
              {"error": str})

REPLIES = {
    "shard": Reply(INDICES),
    "shard_all": Reply({"results": [[INDICES]]}),
    "ddp_run": Reply([one_of({"world_size": int, "ranks": [RANK], "seconds": float},
                             {"world_size": int, "error": str})]),
}
