"""Judge-side helpers for the sharded_stream checks: the data sets, reading one pass back, and the
contract's rules about one epoch (exactly once, whole shards, split records).

A pass comes back from the probe as {"rows": int64 [n, 3] of (rank, worker id, record),
"types": the type names the candidate yielded}. ``slots`` turns it into the sequence each
(rank, worker) slot yielded, after proving every row is one the probe could have made.
The file name is exercise-specific so that it never clashes with another exercise's helpers.
"""

from __future__ import annotations

from collections import Counter

import torch
from hypothesis import strategies as st

from grader.judge import expect_tensor

Slot = tuple[int, int]  # (rank, worker id)


def make_shards(sizes: list[int]) -> list[list[int]]:
    """Shard j holds the records 100 * (j + 1) + i, i < sizes[j]: distinct, and never a position."""
    return [[100 * (j + 1) + i for i in range(n)] for j, n in enumerate(sizes)]


#: Shard sizes for the property checks: 1 to 8 shards of 0 to 8 records, at least one record.
shard_sizes = st.lists(st.integers(0, 8), min_size=1, max_size=8).filter(any)


def describe(sizes: list[int], world_size: int, num_workers: int, *, seed: int | None = None,
             epoch: int | None = None) -> str:
    seed_text = "" if seed is None else f", seed={seed}"
    epoch_text = "no set_epoch call" if epoch is None else f"epoch {epoch}"
    return (f"ShardedStream(shards of sizes {sizes}, rank=r, world_size={world_size}{seed_text}) read by "
            f"DataLoader(num_workers={num_workers}), {epoch_text}")


def _shown(values: list[int], limit: int = 12) -> str:
    head = ", ".join(str(v) for v in values[:limit])
    return f"[{head}{', ...' if len(values) > limit else ''}] ({len(values)} in all)"


def slots(one_pass, world_size: int, num_workers: int, what: str) -> dict[Slot, list[int]]:
    """Every (rank, worker) slot's records, in the order it yielded them (an empty list for a slot
    that yielded nothing), after checking the pass is well formed."""
    if not isinstance(one_pass, dict) or set(one_pass) != {"rows", "types"}:
        raise AssertionError(f"{what}: the probe's answer is not a pass ({type(one_pass).__name__})")
    types = one_pass["types"]
    if not isinstance(types, list) or any(name != "int" for name in types):
        shown = ", ".join(str(t) for t in types) if isinstance(types, list) else repr(types)
        raise AssertionError(f"{what}: __iter__ must yield the records themselves (Python ints), it yielded "
                             f"{shown}")
    rows = expect_tensor(one_pass["rows"], dtype=torch.int64, name=f"{what}: the records read")
    if rows.dim() != 2 or rows.shape[1] != 3:
        raise AssertionError(f"{what}: the records read came back with shape {tuple(rows.shape)}")
    workers = range(max(num_workers, 1))
    out: dict[Slot, list[int]] = {(r, w): [] for r in range(world_size) for w in workers}
    for rank, worker, record in rows.tolist():
        if (rank, worker) not in out:
            raise AssertionError(f"{what}: a record came from rank {rank}, worker {worker}, which does not exist")
        out[(rank, worker)].append(record)
    return out


def expect_exactly_once(got: dict[Slot, list[int]], shards: list[list[int]], what: str) -> None:
    """The slots together yielded every record exactly once."""
    counts = Counter(record for records in got.values() for record in records)
    wanted = Counter(record for shard in shards for record in shard)
    missing = sorted((wanted - counts).elements())
    extra = sorted((counts - wanted).elements())
    if not missing and not extra:
        return
    where = {}
    for slot, records in got.items():
        for record in records:
            where.setdefault(record, []).append(slot)
    repeated = sorted(r for r, n in counts.items() if n > 1)
    parts = []
    if repeated:
        first = repeated[0]
        parts.append(f"{len(repeated)} records came more than once, e.g. {first} from (rank, worker) "
                     f"{', '.join(map(str, where[first]))}")
    unknown = sorted(set(extra) - set(wanted))
    if unknown:
        parts.append(f"records that are in no shard: {_shown(unknown)}")
    if missing:
        parts.append(f"records never yielded: {_shown(missing)}")
    totals = {slot: len(records) for slot, records in got.items()}
    raise AssertionError(f"{what}: every record must come exactly once per epoch across all ranks and workers; "
                         f"{'; '.join(parts)}. Records per (rank, worker): {totals}")


def _shard_of(shards: list[list[int]]) -> dict[int, int]:
    return {record: j for j, shard in enumerate(shards) for record in shard}


def expect_whole_shards(got: dict[Slot, list[int]], shards: list[list[int]], what: str) -> None:
    """len(shards) >= S: each shard read by one slot; each slot reads len // S or len // S + 1 shards."""
    expect_exactly_once(got, shards, what)
    owner = _shard_of(shards)
    readers: dict[int, set] = {}
    for slot, records in got.items():
        for record in records:
            readers.setdefault(owner[record], set()).add(slot)
    for j, who in sorted(readers.items()):
        if len(who) != 1:
            raise AssertionError(f"{what}: with at least as many shards as (rank, worker) slots, every shard must be "
                                 f"read whole by one slot; shard {j} was split between {sorted(who)}")
    # A slot's shards: those it read, plus empty shards, which nobody "reads" and are not counted.
    per_slot = Counter(next(iter(who)) for who in readers.values())
    n, s = len(shards), len(got)
    empty = sum(1 for shard in shards if not shard)
    for slot in got:
        k = per_slot.get(slot, 0)
        if k not in range(n // s - empty, n // s + 2):
            raise AssertionError(f"{what}: {n} shards over {s} slots: each slot must read {n // s} or {n // s + 1} "
                                 f"shards; (rank, worker) {slot} read {k}. Shards read per slot: "
                                 f"{ {slot: per_slot.get(slot, 0) for slot in got} }")


def expect_split_records(got: dict[Slot, list[int]], shards: list[list[int]], what: str) -> None:
    """len(shards) < S: each slot yields T // S or T // S + 1 of the T records."""
    expect_exactly_once(got, shards, what)
    total, s = sum(len(shard) for shard in shards), len(got)
    for slot, records in got.items():
        if len(records) not in (total // s, total // s + 1):
            raise AssertionError(
                f"{what}: {len(shards)} shards for {s} (rank, worker) slots, fewer shards than slots, so the "
                f"{total} records must be dealt one by one: every slot yields {total // s} or {total // s + 1}; "
                f"(rank, worker) {slot} yielded {len(records)}. Records per slot: "
                f"{ {slot: len(records) for slot, records in got.items()} }")


def rank_sequences(got: dict[Slot, list[int]], world_size: int) -> list[list[int]]:
    """Each rank's records, worker after worker (a rank's stream, independent of how the loader interleaves)."""
    return [[record for (r, _), records in sorted(got.items()) if r == rank for record in records]
            for rank in range(world_size)]
