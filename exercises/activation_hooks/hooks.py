"""Capture named activations with forward hooks: implement the class below. See README.md for the full contract."""

from __future__ import annotations

from torch import nn


class ActivationCapture:
    """A context manager that records what named layers of a model return.

        with ActivationCapture(model, ["encoder.0", "head"]) as cap:
            model(x)
        cap.activations["encoder.0"]   # a detached copy of that layer's latest output

    activations: dict from layer name to the layer's latest output (empty at first; only
    layers that ran have a key). Tensors are stored detached AND cloned; a tuple output is
    stored as a tuple of such copies (nested tuples too).
    """

    def __init__(self, model: nn.Module, layer_names: list[str]):
        """Resolve every name with model.get_submodule (dotted names reach nested modules).

        An unknown name (or one that is not a module) raises ValueError naming it, before
        any hook is registered.
        """
        raise NotImplementedError("ActivationCapture.__init__")

    def __enter__(self) -> "ActivationCapture":
        """Register one forward hook per named layer; return self."""
        raise NotImplementedError("ActivationCapture.__enter__")

    def __exit__(self, exc_type, exc, tb):
        """Remove every hook this capture registered, also when the block raised; never
        swallow the exception (return None or False). The activations stay readable."""
        raise NotImplementedError("ActivationCapture.__exit__")
