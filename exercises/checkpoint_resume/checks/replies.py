"""What each checkpoint_resume probe sends back: the judge checks every reply against this before a check reads it."""

from grader.judge.replies import ANY, RAISED, TENSOR, TENSOR_OR_OPAQUE, Reply, or_none

PARAMS = {str: TENSOR_OR_OPAQUE}
LOG = {"steps": [ANY], "losses": TENSOR_OR_OPAQUE}
STATES = {"model": PARAMS, "optimizer": ANY, "scheduler": ANY}
DRAWS = {"torch": TENSOR, "python": [float]}

REPLIES = {
    "resume": Reply({"straight": LOG, "straight_params": PARAMS, "resumed": LOG, "resumed_params": PARAMS}),
    "round_trip": Reply({"keys": or_none([str]), "info": {str: ANY}, "info_type": str, "saved": STATES,
                         "loaded": STATES, "after_save": DRAWS, "after_load": DRAWS, "lr": [ANY], "saved_lr": ANY}),
    "weights_only": Reply({"loaded": bool, "error?": str, "type?": str}),
    "missing": Reply(str),
    "failing_save": Reply({"after_good": [str], "raised": or_none(RAISED), "files": [str], "before": str,
                           "after": str | None, "info": or_none({"epoch": ANY, "step": ANY})}),
    "pickled_code": Reply({"raised": or_none(RAISED), "code_ran": bool}),
    "cuda_round_trip": Reply({"devices": int, "after_save": [TENSOR], "after_load": [TENSOR]}),
}
