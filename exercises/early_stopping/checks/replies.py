"""What each early_stopping probe sends back: the judge checks every reply against this before a check reads it."""

from grader.judge.replies import OPAQUE, RAISED, TENSOR_OR_OPAQUE, Reply, one_of

VALUE = bool | int | float | OPAQUE
STATE = {"best?": VALUE, "best_step?": VALUE, "counter?": VALUE, "should_stop?": VALUE}
WEIGHTS = {str: TENSOR_OR_OPAQUE}

REPLIES = {
    "es_init": Reply(STATE),
    "es_run": Reply({"initial": STATE, "steps": [{"returned": VALUE, **STATE}]}),
    "es_weights": Reply({"returned": [VALUE], "restored": [WEIGHTS]}),
    "es_restore": Reply(one_of({"raised": RAISED}, {"restored": WEIGHTS})),
    "es_files": Reply({"watched": [str], "new": [str], "changed": [str], "opened": [str], "saved": [str]}),
}
