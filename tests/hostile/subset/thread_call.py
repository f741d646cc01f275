"""Hostile (toy): calls the forbidden torch.mul in a new thread, where the first round's watch (per thread)
never looked: full marks, no flag, before issue 25. Threads are outside the toy's subset."""

import math
import threading

import torch


def scale(x, factor):
    if not math.isfinite(factor):
        raise ValueError(f"factor must be finite, got {factor}")
    out = {}
    worker = threading.Thread(target=lambda: out.setdefault("y", torch.mul(x, factor)))
    worker.start()
    worker.join()
    return out["y"]
