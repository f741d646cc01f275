"""The probes' instruments (grader/sandbox/instruments.py): what they measure cannot be reached, rewritten or hidden.

In-process, as a probe uses them inside the sandbox: each case is a move a candidate's code could make on what
it is handed (an inner saved-tensor hooks context, a copy of the object, a hooks table that lies about its
length), and the measurement it must not change.
"""

import copy
import gc
from collections import OrderedDict

import torch

from grader.sandbox.instruments import Allocations, Ledger, attached, count_entries
from grader.wire.protocol import Opaque


def _chain(x, layers):
    for layer in layers:
        x = torch.tanh(layer(x))
    return x


def _layers(n=4, width=8):
    torch.manual_seed(0)
    return [torch.nn.Linear(width, width, dtype=torch.float64) for _ in range(n)]


def test_an_inner_saved_tensors_hooks_context_hides_nothing_from_allocations():
    layers, x = _layers(), torch.randn(3, 8, dtype=torch.float64, requires_grad=True)
    mine = [p for layer in layers for p in layer.parameters()]
    with Allocations() as plain:
        out = _chain(x, layers)
    kept = plain.alive_bytes(exclude=[x, *mine])
    seen = []
    with Allocations() as hidden, torch.autograd.graph.saved_tensors_hooks(lambda t: seen.append(1) or t, lambda t: t):
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):  # the candidate's, inside
            out2 = _chain(x, layers)
    assert seen == []  # what an outer hooks context (the old probes' counter) saw: nothing
    assert hidden.alive_bytes(exclude=[x, *mine]) == kept
    assert kept[0] > out.nbytes  # activations, not only the output
    del out, out2


def test_allocations_counts_what_is_kept_anywhere_and_not_what_was_given():
    x = torch.randn(5, 8, dtype=torch.float64)
    keep = []
    with Allocations() as made:
        x.mul_(2)  # the caller's storage written in place: not made here
        keep.append((x * 3).detach())  # a copy kept in a list
        (x + 1).sum()  # garbage, freed at once
    assert made.alive_bytes(exclude=[x]) == (keep[0].nbytes, 1)
    keep.clear()
    assert made.alive_bytes(exclude=[x]) == (0, 0)


def test_an_attached_object_finds_its_ledger_and_tag_and_a_copy_of_it_finds_none():
    ledger = Ledger()
    module = ledger.attach(torch.nn.Linear(2, 2), tag=3)
    assert attached(module) == (ledger, 3)
    assert attached(copy.deepcopy(module)) is None
    assert attached(torch.nn.Linear(2, 2)) is None
    key = id(module)
    del module
    gc.collect()
    from grader.sandbox import instruments

    assert key not in instruments._REGISTRY  # a later object at the same address starts afresh


def test_a_watched_storage_lives_as_long_as_a_view_or_a_detach_of_it():
    ledger = Ledger()
    t = torch.ones(4)
    ledger.watch("t", t, storage=True)
    ledger.watch("object", torch.ones(4))
    view = t[1:].detach()
    del t
    assert ledger.alive() == [["t", True], ["object", False]]
    del view
    assert ledger.alive() == [["t", False], ["object", False]]


class _Lying(OrderedDict):
    def __len__(self):
        return 0

    def __bool__(self):
        return True


def test_a_hooks_table_is_counted_by_what_it_holds_not_by_what_its_len_says():
    table = _Lying({1: print, 2: print})
    assert len(table) == 0 and count_entries(table) == 2
    assert count_entries(None) == 0
    assert isinstance(count_entries([print]), Opaque)
