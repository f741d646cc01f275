"""What each collate_fn probe sends back: the judge checks every reply against this before a check reads it."""

from grader.judge.replies import RETURNED, TENSOR_OR_OPAQUE, Reply, one_of

TRIPLE = {"padded": TENSOR_OR_OPAQUE, "lengths": TENSOR_OR_OPAQUE, "labels": TENSOR_OR_OPAQUE}

REPLIES = {
    "collate_batch": Reply(TRIPLE, returned=("collate_fn", "a tuple (padded, lengths, labels)")),
    "mask": Reply({"mask": TENSOR_OR_OPAQUE}),
    "loader_batches": Reply([one_of(TRIPLE, RETURNED)]),
}
