"""Forbidden computations by family: every public torch entry point of attention, a norm, a clamp...

An exercise forbids a computation, not one spelling of it: ``[forbidden] families = ["attention"]``
adds every API and kernel pattern of that family to the exercise's own lists (``config``). Each
family also says which names look like it (``looks_like``) and which of those are not the
computation (``allowed``, each with its reason): ``tests/test_families.py`` walks torch's public
namespaces and dispatcher ops, and fails on a name that looks like a family but is neither
forbidden by it, outside every exercise's subset, nor allowed here. A torch upgrade that adds a
new spelling of attention therefore fails the suite instead of opening a door.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Family:
    """One forbidden computation: its APIs and kernel patterns (as ``[forbidden]`` writes them), the name
    patterns (lower case, fnmatch) of what looks like it, and what looks like it but is not, with why."""

    apis: tuple[str, ...]
    kernels: dict[str, tuple[str, ...]] = field(default_factory=dict)
    looks_like: tuple[str, ...] = ()
    allowed: dict[str, str] = field(default_factory=dict)


_SDPA = "torch.nn.functional.scaled_dot_product_attention"
_LINEAR = "torch.nn.functional.linear"

FAMILIES: dict[str, Family] = {
    "attention": Family(
        apis=(_SDPA, "torch.nn.MultiheadAttention", "torch.nn.functional.multi_head_attention_forward",
              "torch.nn.attention", "torch.nn.Transformer", "torch.nn.TransformerEncoderLayer",
              "torch.nn.TransformerDecoderLayer", "torch.nn.TransformerEncoder", "torch.nn.TransformerDecoder"),
        kernels={_SDPA: ("*scaled_dot_product*", "*scaled_dot_attention*", "*flash_attention*", "*efficient_attention*",
                         "*cudnn_attention*", "*fused_attention*", "*flash_attn*", "*varlen_attn*", "*flex_attention*"),
                 "torch.nn.MultiheadAttention": ("*MultiheadAttention*",),
                 "torch.nn.functional.multi_head_attention_forward": ("*multi_head_attention*",),
                 "torch.nn.TransformerEncoderLayer": ("*transformer_encoder_layer*",)},
        looks_like=("*attention*", "*attn*", "transformer*"),
        allowed={"torch.backends.cuda.can_use_flash_attention": "a question about the GPU, computes nothing",
                 "torch.backends.cuda.can_use_efficient_attention": "a question about the GPU, computes nothing",
                 "torch.backends.cuda.can_use_cudnn_attention": "a question about the GPU, computes nothing",
                 "torch.backends.cuda.is_flash_attention_available": "a question about the build, computes nothing",
                 "Attention": "an operator namespace's name, no attention kernel"}),
    "clamp": Family(
        apis=("torch.clamp", "torch.clip", "torch.nn.functional.hardtanh", "torch.nn.utils.clip_grad_value_",
              "numpy.clip"),
        kernels={"torch.clamp": ("clamp", "clamp_*", "_foreach_clamp*"), "torch.clip": ("clip", "clip_"),
                 "torch.nn.functional.hardtanh": ("hardtanh*", "Hardtanh", "relu6*", "ReLU6")},
        looks_like=("*clamp*", "clip*", "*hardtanh*", "*relu6*"),
        allowed={"clip_grad_norm_": "scales gradients by one factor, no clamp",
                 "clip_grad_norm": "scales gradients by one factor, no clamp",
                 "clip_grads_with_norm_": "scales gradients by one factor, no clamp"}),
    "grad_norm_clipping": Family(
        apis=("torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad_norm", "torch.nn.utils.get_total_norm",
              "torch.nn.utils.clip_grads_with_norm_"),
        kernels={"torch.nn.utils.clip_grad_norm_": ("*clip_grad_norm*",),
                 "torch.nn.utils.get_total_norm": ("*get_total_norm*",),
                 "torch.nn.utils.clip_grads_with_norm_": ("*clip_grads_with_norm*",)},
        looks_like=("*clip_grad*", "*total_norm*", "*grad_norm*"),
        allowed={"clip_grad_value_": "clamps each gradient element, no norm"}),
    "linear": Family(
        apis=("torch.nn.Linear", _LINEAR, "torch.nn.functional.bilinear", "torch.nn.Bilinear"),
        kernels={"torch.nn.Linear": ("*Linear", "Linear*"),
                 _LINEAR: ("linear", "*_linear", "linear_*", "*linear_pointwise*", "*fbgemm_linear*", "mkldnn_linear*",
                           "*qlinear*", "*_linear_weight*", "*int8pack*", "*linear_prepack*"),
                 "torch.nn.functional.bilinear": ("bilinear", "Bilinear", "_trilinear")},
        looks_like=("*linear*",),
        allowed={"LinearLR": "a learning-rate schedule", "linearize": "torch.func's linearisation of a function",
                 "LinearCrossEntropyLoss": "a loss: the layer's output never comes back",
                 "LinearCrossEntropyOptions": "options of that loss",
                 "_linear_cross_entropy_batch_chunked": "that loss's kernel",
                 "_linear_cross_entropy_batch_chunked_no_reduction": "that loss's kernel",
                 "upsample_bilinear": "interpolation", "UpsamplingBilinear2d": "interpolation",
                 "upsample_bilinear2d": "interpolation", "_upsample_bilinear2d_aa": "interpolation",
                 "upsample_bilinear2d_backward": "interpolation", "_upsample_bilinear2d_aa_backward": "interpolation",
                 "upsample_trilinear3d": "interpolation", "upsample_trilinear3d_backward": "interpolation",
                 "upsample_linear1d": "interpolation", "upsample_linear1d_backward": "interpolation",
                 "fuse_linear_bn": "weight arithmetic for fusing layers", "fuse_linear_bn_eval": "weight arithmetic",
                 "fuse_linear_bn_weights": "weight arithmetic for fusing layers",
                 "_compute_linear_combination": "a weighted sum of tensors",
                 "LinearBlockSparsePattern": "a sparsity pattern's description"}),
    "quantization": Family(
        apis=("torch.ao", "torch.quantization", "torch.nn.quantized", "torch.nn.quantizable", "torch.nn.qat",
              "torch.nn.intrinsic", "torch.quantize_per_channel", "torch.quantize_per_tensor",
              "torch.quantize_per_tensor_dynamic", "torch.fake_quantize_per_channel_affine",
              "torch.fake_quantize_per_tensor_affine"),
        kernels={"torch.quantize_per_channel": ("*quantize_per_*", "*int8pack*", "*_weight_int8*", "quantize",
                                                "*quantize_dynamic*", "*quantize_qat*", "quantize_jit"),
                 "torch.quantize_per_tensor": ("*int_repr*", "*qlinear*", "*fbgemm*", "quantized_*",
                                               "*quantized_linear*", "*dyn_quant*", "dequantize*",
                                               "*quantized_tensor*", "*empty_*quantized*", "make_quantized_*",
                                               "*Quantized*"),
                 "torch.fake_quantize_per_channel_affine": ("*fake_quant*",)},
        looks_like=("*quant*",),
        allowed={"quantile": "a statistic", "nanquantile": "a statistic",
                 "NonDynamicallyQuantizableLinear": "a plain nn.Linear (MultiheadAttention's projection)",
                 "is_quantized": "a question about a tensor, computes nothing"}),
    "silu": Family(
        apis=("torch.nn.functional.silu", "torch.nn.SiLU"),
        kernels={"torch.nn.functional.silu": ("silu*", "SiLU")},
        looks_like=("*silu*", "swish*"),
        allowed={}),
    "checkpointing": Family(
        apis=("torch.utils.checkpoint",),
        kernels={"torch.utils.checkpoint": ("*checkpoint*", "*Checkpoint*")},
        looks_like=("*checkpoint*",),
        allowed={"get_unsafe_globals_in_checkpoint": "reads a saved file's pickle globals, recomputes nothing"}),
    "cross_entropy": Family(
        apis=("torch.nn.functional.cross_entropy", "torch.nn.CrossEntropyLoss", "torch.nn.functional.nll_loss",
              "torch.nn.NLLLoss", "torch.nn.functional.linear_cross_entropy", "torch.nn.LinearCrossEntropyLoss"),
        kernels={"torch.nn.functional.cross_entropy": ("cross_entropy", "*cross_entropy_loss*"),
                 "torch.nn.CrossEntropyLoss": ("CrossEntropyLoss",),
                 "torch.nn.functional.nll_loss": ("nll_loss*", "_nll_loss*"), "torch.nn.NLLLoss": ("NLLLoss*",),
                 "torch.nn.functional.linear_cross_entropy": ("*linear_cross_entropy*",)},
        looks_like=("*cross_entropy*", "*crossentropy*", "*nll*"),
        allowed={"binary_cross_entropy": "a binary loss, no softmax over classes",
                 "binary_cross_entropy_with_logits": "a binary loss, no softmax over classes",
                 "binary_cross_entropy_backward": "a binary loss's kernel",
                 "BCELoss": "a binary loss", "BCEWithLogitsLoss": "a binary loss",
                 "gaussian_nll_loss": "a Gaussian likelihood", "GaussianNLLLoss": "a Gaussian likelihood",
                 "poisson_nll_loss": "a Poisson likelihood", "PoissonNLLLoss": "a Poisson likelihood",
                 "LinearCrossEntropyOptions": "options of a forbidden loss, compute nothing"}),
    "rms_norm": Family(
        apis=("torch.nn.RMSNorm", "torch.nn.functional.rms_norm"),
        kernels={"torch.nn.RMSNorm": ("*RMSNorm*",), "torch.nn.functional.rms_norm": ("*rms_norm*",)},
        looks_like=("*rms_norm*", "*rmsnorm*"),
        allowed={}),
    "batch_norm": Family(
        apis=("torch.nn.BatchNorm1d", "torch.nn.BatchNorm2d", "torch.nn.BatchNorm3d", "torch.nn.LazyBatchNorm1d",
              "torch.nn.SyncBatchNorm", "torch.nn.modules.batchnorm._NormBase", "torch.nn.modules.batchnorm._BatchNorm",
              "torch.nn.functional.batch_norm", "torch.batch_norm", "torch.native_batch_norm"),
        kernels={"torch.nn.functional.batch_norm": ("*batch_norm*",),
                 "torch.nn.BatchNorm1d": ("*BatchNorm*", "*NormBase")},
        looks_like=("*batch_norm*", "*batchnorm*"),
        allowed={}),
    "lr_warmup_cosine": Family(
        apis=("torch.optim.lr_scheduler.CosineAnnealingLR", "torch.optim.lr_scheduler.CosineAnnealingWarmRestarts",
              "torch.optim.lr_scheduler.OneCycleLR", "torch.optim.lr_scheduler.LinearLR",
              "torch.optim.lr_scheduler.SequentialLR"),
        kernels={"torch.optim.lr_scheduler.CosineAnnealingLR": ("CosineAnnealing*",)},
        looks_like=("*cosine*", "*onecycle*", "*warmup*", "linearlr", "sequentiallr"),
        allowed={"CosineEmbeddingLoss": "a loss", "cosine_embedding_loss": "a loss",
                 "CosineSimilarity": "a similarity", "cosine_similarity": "a similarity",
                 "compute_cosine_similarity": "a similarity", "cosine": "a signal window",
                 "general_cosine": "a signal window"}),
    "weighted_sampling": Family(
        apis=("torch.utils.data.WeightedRandomSampler",),
        kernels={"torch.utils.data.WeightedRandomSampler": ("WeightedRandomSampler",)},
        looks_like=("weighted*sampler*",),
        allowed={}),
    "data_parallel": Family(
        apis=("torch.nn.parallel.DistributedDataParallel", "torch.distributed.algorithms", "torch.distributed.fsdp",
              "torch.nn.DataParallel"),
        kernels={"torch.nn.parallel.DistributedDataParallel": ("DistributedDataParallel*", "Reducer", "_DDPSink",
                                                               "*bucket_assignment*", "fully_shard*",
                                                               "FullyShardedDataParallel*")},
        looks_like=("*dataparallel*", "reducer", "fully_shard*", "fullyshard*"),
        allowed={"DataParallelMeshDims": "a description of device-mesh dimensions, computes nothing"}),
    "distributed_sampler": Family(
        apis=("torch.utils.data.DistributedSampler", "torch.utils.data.distributed.DistributedSampler"),
        kernels={"torch.utils.data.DistributedSampler": ("DistributedSampler",)},
        looks_like=("distributedsampler*",),
        allowed={}),
}


def expand(families: list[str], apis: list[str], kernels: dict[str, list[str]]) -> tuple[list[str], dict]:
    """``apis`` and ``kernels`` with every family's own added (the exercise's entries first, in their order)."""
    out_apis, out_kernels = list(apis), {k: list(v) for k, v in kernels.items()}
    for name in families:
        family = FAMILIES[name]
        out_apis += [a for a in family.apis if a not in out_apis]
        for api, patterns in family.kernels.items():
            have = out_kernels.setdefault(api, [])
            have += [p for p in patterns if p not in have]
    return out_apis, out_kernels
