"""What each lora_linear probe sends back: the judge checks every reply against this before a check reads it.

Where the layer holds no adapter tensors of the right shapes, a probe answers ``{"returned": why}``: the checks
read it with ``expect_returned``."""

from grader.judge.replies import ANY, RETURNED, TENSOR_OR_OPAQUE, Reply, one_of, or_none

T = or_none(TENSOR_OR_OPAQUE)

REPLIES = {
    "lora_init": Reply(bool),
    "lora_build": Reply({"same_base": bool, "same_tensors": bool, "frozen": [bool], "trainable": [(str, int)],
                         "state_keys": [str], "A": T, "B": T, "out": T, "base_out": T}),
    "lora_forward": Reply(one_of(RETURNED, {"out": T, "grads?": {str: T}, "out_after?": T})),
    "lora_merge": Reply(one_of(RETURNED, {"cls": str, "in_features": ANY, "out_features": ANY, "weight": T, "bias": T,
                                          "merged_out": T, "out_before": T, "out_after": T, "base_weight": T,
                                          "base_bias": T, "out_after_edit": T})),
    "lora_merged_tensors": Reply(one_of(RETURNED, {"weight": T, "bias": T})),
}
