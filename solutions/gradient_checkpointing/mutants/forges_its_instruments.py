"""Mutant: forges its instruments: no checkpointing at all (a plain forward that keeps every activation),
dressed up as checkpointing by rewriting what it is handed and hiding what autograd saves.

The forgery: the blocks' call log rewritten (the forward's grad flags set to False, a recomputation's
calls appended during backward by a hook on the output), the blocks' output log emptied, and what
autograd saves hidden from an outer saved-tensor hooks context by an inner one of its own. The probes
keep none of that on the blocks, and measure what the forward leaves alive, not what was packed: the
forgery must gain nothing over the plain forward (the checks of what is saved, freed and called).
"""

import torch


def _segments(n, segments):
    size, extra = divmod(n, segments)
    out, start = [], 0
    for i in range(segments):
        stop = start + size + (1 if i < extra else 0)
        out.append(list(range(start, stop)))
        start = stop
    return out


def checkpointed_forward(blocks, x, segments):
    blocks = list(blocks)
    if not 1 <= segments <= len(blocks):
        raise ValueError(f"segments must be between 1 and {len(blocks)}, got segments={segments}")
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        out = x
        for block in blocks:
            out = block(out)
    calls = getattr(blocks[0], "calls", None)
    if isinstance(calls, list):
        for entry in calls[-len(blocks):]:
            entry[1] = False
    outputs = getattr(blocks[0], "outputs", None)
    if isinstance(outputs, list):
        outputs.clear()
    if out.requires_grad and isinstance(calls, list):
        order = [i for seg in reversed(_segments(len(blocks), segments)) for i in seg]

        def note(grad):
            calls.extend([i, True] for i in order)
            return grad

        out.register_hook(note)
    return out
