"""The corpus ``grader new`` writes into ``solutions/NAME/``: the reference, variants, mutants, the contract table.

Kept apart from :mod:`grader.scaffold` (which writes the files, and holds the exercise
side's templates) so each stays one screenful of text. ``NAME`` is replaced by the
exercise's name; a mutant that is a few lines is a patch made from the reference here, so
it always applies to it.
"""

from __future__ import annotations

REFERENCE = '''\
"""Reference solution for NAME: scale a tensor."""

from __future__ import annotations

import torch


def scale(x: torch.Tensor, factor: float) -> torch.Tensor:
    """Return x * factor as a new tensor of x's shape and dtype; leave x unchanged."""
    return x * factor
'''

#: Other correct answers, written differently: they prove the checks do not demand the reference's way.
VARIANTS = {
    "scales_a_copy_in_place": '''\
"""Variant: copies x, then scales the copy in place. Another correct answer, written differently."""

from __future__ import annotations

import torch


def scale(x: torch.Tensor, factor: float) -> torch.Tensor:
    out = x.clone()
    out *= factor
    return out
''',
    "adds_scaled_x_to_zeros": '''\
"""Variant: adds factor * x to a tensor of zeros of x's shape and dtype (torch.add's alpha)."""

from __future__ import annotations

import torch


def scale(x: torch.Tensor, factor: float) -> torch.Tensor:
    return torch.zeros_like(x).add_(x, alpha=factor)
''',
}

#: Plausible mistakes, each as the lines that change in the reference: stem -> (description, before, after).
_RETURN = "    return x * factor\n"
PATCH_MUTANTS = {
    "scales_x_in_place": ("Mutant: scales x in place and returns it, so the caller's tensor changes too.",
                          _RETURN, "    x.mul_(factor)\n    return x\n"),
    "adds_factor": ("Mutant: adds factor to x instead of multiplying.", _RETURN, "    return x + factor\n"),
    "truncates_factor": ("Mutant: truncates factor to an integer (int(factor)) before scaling.",
                         _RETURN, "    return x * int(factor)\n"),
    "returns_float32": ("Mutant: returns float32 whatever x's dtype (a .float() too many).",
                        _RETURN, "    return (x * factor).float()\n"),
    "flattens_the_result": ("Mutant: returns the result flattened to one dimension.",
                            _RETURN, "    return (x * factor).flatten()\n"),
}
#: Mistakes a patch would not show well: a whole other route (here, the forbidden API).
FILE_MUTANTS = {
    "uses_torch_mul": '''\
"""Mutant: calls torch.mul, which this exercise forbids (the right values, by a forbidden route)."""

from __future__ import annotations

import torch


def scale(x: torch.Tensor, factor: float) -> torch.Tensor:
    return torch.mul(x, factor)
''',
}

CONTRACT = '''\
# Which check holds each rule of exercises/NAME/README.md (kept true by grader.authoring's contract rules).
# Key: words of one paragraph of the prompt. Value: check ids, "forbidden:API", "subset", or "not checked: <why>".

"**Returns** `x * factor`" = ["test_returns_x_times_factor"]
"**`x` is left unchanged**" = ["test_leaves_x_unchanged"]
"`torch.mul` may not be used" = ["forbidden:torch.mul"]
"**Tolerance.**" = "not checked: the tolerance the checks use"
"**Inputs.**" = "not checked: a promise about the checks' own inputs"
"Your file runs only if it stays inside this exercise's **language subset**" = ["subset"]
'''
