"""No checkpointing at all: a plain forward that keeps every activation (checkpointing_forged.py without its forgery)."""


def checkpointed_forward(blocks, x, segments):
    blocks = list(blocks)
    if not 1 <= segments <= len(blocks):
        raise ValueError(f"segments must be between 1 and {len(blocks)}, got segments={segments}")
    out = x
    for block in blocks:
        out = block(out)
    return out
