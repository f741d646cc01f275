"""GradMonitor (variant): an ExitStack owns the hook handles, each hook only stores
(norm, has_nan, has_inf) per pass, and report() derives every flag from those records
when it is called; the norm is sqrt(sum of squares) computed in float64."""

from __future__ import annotations

import contextlib
import math

import torch


class GradMonitor:
    def __init__(self, model, vanish_below=1e-7, explode_above=1e3):
        self._model = model
        self._low = float(vanish_below)
        self._high = float(explode_above)
        self._records = {}
        self._trainable = {}
        self._stack = contextlib.ExitStack()

    def __enter__(self):
        for name, param in self._model.named_parameters():
            self._trainable[name] = param.requires_grad
            self._records[name] = []
            if param.requires_grad:
                handle = param.register_hook(self._recorder(self._records[name]))
                self._stack.callback(handle.remove)
        return self

    def __exit__(self, *exc_info):
        self._stack.close()
        return False

    @staticmethod
    def _recorder(records):
        def record(grad):
            g = grad.detach().double()
            records.append((math.sqrt(g.square().sum().item()) if bool(torch.isfinite(g).all())
                            else float(torch.linalg.vector_norm(g)),
                            bool(torch.isnan(g).any()), bool(torch.isinf(g).any())))
        return record

    def report(self):
        out = {}
        for name, records in self._records.items():
            if not self._trainable[name]:
                out[name] = {"norms": [], "flags": ["frozen"]}
                continue
            if not records:
                out[name] = {"norms": [], "flags": ["unused"]}
                continue
            flags = []
            for flag, hit in (("nan", any(r[1] for r in records)),
                              ("inf", any(r[2] for r in records)),
                              ("vanishing", any(math.isfinite(r[0]) and r[0] < self._low for r in records)),
                              ("exploding", any(math.isfinite(r[0]) and r[0] > self._high for r in records))):
                if hit:
                    flags.append(flag)
            out[name] = {"norms": [r[0] for r in records], "flags": flags}
        return out
