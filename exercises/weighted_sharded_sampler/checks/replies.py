"""What each weighted_sharded_sampler probe sends back: the judge checks every reply against this before a check
reads it."""

from grader.judge.replies import TENSOR, Reply

PASS = {"indices": TENSOR, "types": [str]}

REPLIES = {
    "init": Reply(int),
    "draw_many": Reply([{"len": int, "passes": [PASS]}]),
    "global_rng": Reply({"before": TENSOR, "after": TENSOR, "first": PASS, "second": PASS}),
}
