"""What each sharded_stream probe sends back: the judge checks every reply against this before a check reads it."""

from grader.judge.replies import TENSOR, Reply

REPLIES = {
    "stream": Reply([{"rows": TENSOR, "types": [str]}]),
    "init": Reply(str),
}
