"""What an exercise's ``exercise.toml`` says a submission may use: ``[forbidden]`` and ``[subset]``.

The exercise's configuration (``grader.exercise``) holds these two tables; the subset's
audit (``grader.subset.audit``), its runtime guard's lists (``grader.subset.guard``) and
the sandbox's removal of forbidden APIs read them. An entry no exercise may allow is
refused here, when exercise.toml is loaded, by the policy's own rules (``grader.subset.policy``).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ForbiddenConfig(_Strict):
    """What a submission may not use: public names, plus the kernels that compute the same thing.

    The judge's source audit decides (see ``grader.subset.audit``); the sandbox, where
    they are removed (``grader.sandbox.removal``), is a second net that can only take
    credit away.
    """

    apis: list[str] = Field(default_factory=list, description=(
        "dotted public names (functions, classes or whole packages) the scorecard names, e.g. "
        "'torch.nn.functional.scaled_dot_product_attention'; a re-export of the same object counts too"))
    kernels: dict[str, list[str]] = Field(default_factory=dict, description=(
        "public API (a key of `apis`) -> fnmatch patterns over the last name of any reference into any torch "
        "namespace (torch.*, torch._C.*, torch.ops.aten.*): the private kernels and ops behind that API, "
        "e.g. '*scaled_dot_product*'. A match is reported as the API it stands for"))
    families: list[str] = Field(default_factory=list, description=(
        "computations forbidden whole, by every public torch entry point listed for them "
        "(grader/subset/families.py), added to `apis` and `kernels`: attention, clamp, grad_norm_clipping, linear, "
        "quantization, silu, checkpointing, cross_entropy, rms_norm, batch_norm, lr_warmup_cosine, weighted_sampling, "
        "data_parallel, distributed_sampler"))

    def named(self, indices: list[int]) -> list[str]:
        """The APIs a sandbox reported as indices into ``apis`` (the order the worker was sent them in),
        named from this list: the sandbox's own words never name a forbidden API. An index outside the
        list names nothing (the worker never sends one; a forged one could only have taken credit away)."""
        return [self.apis[i] for i in indices if 0 <= i < len(self.apis)]

    @model_validator(mode="after")
    def _kernels_name_listed_apis(self) -> "ForbiddenConfig":
        from grader.subset.families import FAMILIES, expand

        strangers = [f for f in self.families if f not in FAMILIES]
        if strangers:
            raise ValueError(f"unknown families: {', '.join(strangers)}; the grader knows {', '.join(FAMILIES)}")
        self.apis, self.kernels = expand(self.families, self.apis, self.kernels)
        unknown = sorted(set(self.kernels) - set(self.apis))
        if unknown:
            raise ValueError(f"kernels keys must be listed in apis, these are not: {', '.join(unknown)}")
        return self


class SubsetConfig(_Strict):
    """What a submission may reach beyond the grader's default subset: ``[subset]``.

    The judge checks the submission against this policy before anything runs
    (``grader.subset.audit``): imports and module members outside it, and the forms no
    exercise may allow (``exec``, ``pickle``, frames, dunders outside a short list,
    modules used as values...), are violations that leave every check not run.
    """

    modules: list[str] = Field(default_factory=list, description=(
        "modules and module members a submission may use besides the default (the pure standard library modules "
        "and torch's public API): 'tempfile' (the whole module), 'os.replace' (one function: `import os` is then "
        "allowed, `os.system` is not), 'torch.distributed', 'torch._foreach_*' (a pattern in the last part). A torch "
        "entry also lifts the default torch denylist under it"))
    builtins: list[str] = Field(default_factory=list, description=(
        "builtins a submission may call besides the default set: only 'open' (refused for /proc, /sys and /dev "
        "paths in the sandbox)"))

    @model_validator(mode="after")
    def _entries_are_names_the_subset_can_allow(self) -> "SubsetConfig":
        from grader.subset.policy import refused_entry  # the policy's own rules, in one place

        bad = [f"modules: {e!r} ({why})" for e in self.modules if (why := refused_entry(e))]
        bad += [f"builtins: {b!r} (only 'open' may be added)" for b in self.builtins if b != "open"]
        if bad:
            raise ValueError("these entries cannot be allowed: " + "; ".join(bad))
        return self
