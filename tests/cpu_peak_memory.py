"""A CPU stand-in for ``torch.cuda.max_memory_allocated``: the peak of the bytes held by tensors that aten ops made.

For checking on a machine without a GPU what a GPU exercise's memory checks will measure: a torch
dispatch mode sees every op's outputs, counts each new storage once, and a finalizer on the storage
(whose Python object lives exactly as long as the storage, PyObject preservation) takes it off
when it is freed. Scratch memory inside a kernel (cuBLAS's workspace on a GPU) is not seen; the
exercises' budgets keep a slack for it.
"""
import weakref
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten


class PeakMemory(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.live, self.now, self.peak = {}, 0, 0

    def _free(self, key):
        self.now -= self.live.pop(key, 0)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor):
                st = t.untyped_storage()
                key = st.data_ptr()
                if key and key not in self.live:
                    self.live[key] = st.nbytes()
                    self.now += st.nbytes()
                    self.peak = max(self.peak, self.now)
                    weakref.finalize(st, self._free, key)
        return out


def measure(fn, *args, **kwargs):
    """``(fn(*args, **kwargs), the peak bytes live at once among the tensors its ops made)``."""
    with PeakMemory() as pm:
        out = fn(*args, **kwargs)
    return out, pm.peak
