"""What each evaluate probe sends back: the judge checks every reply against this before a check reads it."""

from grader.judge.replies import RAISED, RETURNED, TENSOR_OR_OPAQUE, Reply, one_of, or_none

MODES = {str: bool}
RESULT = one_of(RETURNED, {"keys": [str], "types": {str: str}, "values": {str: int | float | TENSOR_OR_OPAQUE}})

REPLIES = {
    "ev_run": Reply({"result?": RESULT, "raised": or_none(RAISED), "modes_before": MODES, "modes_after": MODES,
                     "calls": [{"modes": MODES, "grad": bool}], "losses": int,
                     "fetches": [{"batch": int, "forwards": int, "alive": [int]}], "exhausted": bool,
                     "alive_after": [int]}),
    "ev_empty": Reply(one_of({"raised": RAISED, "modes_before": MODES, "modes_after": MODES},
                             {"raised": None, "gave": str, "modes_before": MODES, "modes_after": MODES, "calls": int})),
}
