"""What each kv_cache_decode probe sends back: the judge checks every reply against this before a check reads it."""

from grader.judge.replies import OPAQUE, TENSOR, TENSOR_OR_OPAQUE, Reply, one_of

#: A cache as the judge reads it: [k, v], or the whole value described when it is not a pair.
CACHE = one_of((TENSOR_OR_OPAQUE, TENSOR_OR_OPAQUE), OPAQUE)
STEP = ("attend_step(q, k_new, v_new, cache)", "a pair (out, cache)")

REPLIES = {
    "decode": Reply({"outs": [TENSOR_OR_OPAQUE], "caches": [CACHE]}, returned=STEP),
    "step_from_cache": Reply({"outs": [TENSOR_OR_OPAQUE], "caches": [CACHE],
                              "after": [{"q": TENSOR, "k_new": TENSOR, "v_new": TENSOR}], "k_cache": TENSOR,
                              "v_cache": TENSOR}, returned=STEP),
    "sample": Reply({"tokens": TENSOR_OR_OPAQUE, "logits_after": TENSOR}),
    "sample_reproducibly": Reply({"runs": [[TENSOR_OR_OPAQUE]], "rng_before": [TENSOR], "rng_after": [TENSOR]}),
    "sample_bad": Reply(bool),
}
