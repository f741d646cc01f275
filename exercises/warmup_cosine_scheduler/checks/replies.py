"""What each warmup_cosine_scheduler probe sends back: the judge checks every reply against this before a check reads
it."""

from grader.judge.replies import OPAQUE, Reply, one_of, or_none

LR = float | OPAQUE
LRS = {"lrs": [[LR]], "last": [one_of([LR], LR)]}
GROUPS = [{str: bool | int | float | str | None}]

REPLIES = {
    "sched_run": Reply(LRS),
    "groups_after_refusal": Reply({"before": GROUPS, "after": or_none(GROUPS)}),
    "sched_resume": Reply(one_of(LRS, {"refused": str, "error": str})),
}
