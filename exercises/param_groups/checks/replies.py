"""What each param_groups probe sends back: the judge checks every reply against this before a check reads it."""

from grader.judge.replies import RAISED, RETURNED, TENSOR_OR_OPAQUE, Reply, one_of

NUMBER = int | float | TENSOR_OR_OPAQUE
GROUP = {"keys": [str], "params_type": str, "params?": [str], "lr?": NUMBER, "weight_decay?": NUMBER}
DESCRIBED = one_of(RETURNED, {"groups": [GROUP]})
FROZEN = {str: bool}

REPLIES = {
    "pg_freeze": Reply(one_of({"raised": RAISED, "requires_grad": FROZEN},
                              {"raised": None, "returned": str | None, "requires_grad": FROZEN})),
    "pg_groups": Reply({"result": DESCRIBED}),
    "pg_step": Reply({"result": DESCRIBED, "refused?": RAISED, "after?": {str: TENSOR_OR_OPAQUE}}),
}
