"""Example tests for the ddp_step exercise. Run: pytest exercises/ddp_step/test_ddp_step_example.py

These are examples to read and run while you work, not the grade: the graded
checks are hidden and cover much more (see README.md). DistributedSampler is
used here as the reference; your ddp_step.py must not use it.
"""

# example harness: os.path, torch.multiprocessing (this file spawns the ranks that run your
# train_step; your ddp_step.py may not use them)
import os

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.utils.data import DistributedSampler

from ddp_step import average_gradients, shard_indices, train_step


def test_shards_by_hand():
    # 10 samples on 4 ranks: padded to 12 with indices 0 and 1, then dealt round-robin.
    shards = [shard_indices(10, rank, 4, shuffle=False) for rank in range(4)]
    assert shards == [[0, 4, 8], [1, 5, 9], [2, 6, 0], [3, 7, 1]]


@pytest.mark.parametrize("n, world_size, seed, epoch", [(10, 3, 0, 0), (7, 2, 42, 3), (2, 4, 1, 1)])
def test_shards_match_distributed_sampler(n, world_size, seed, epoch):
    for rank in range(world_size):
        sampler = DistributedSampler(range(n), num_replicas=world_size, rank=rank, seed=seed)
        sampler.set_epoch(epoch)
        assert shard_indices(n, rank, world_size, seed=seed, epoch=epoch) == list(sampler)


def test_bad_rank_is_a_value_error():
    with pytest.raises(ValueError, match="rank"):
        shard_indices(10, 4, 4)


def _model_and_data():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    return model, torch.randn(8, 3), torch.randn(8, 2)


def _single_process_step(model, x, y):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    optimizer.zero_grad()
    loss = nn.MSELoss()(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()


def test_world_size_one(tmp_path):
    """A process group of one rank: train_step is an ordinary training step."""
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)
    try:
        model, x, y = _model_and_data()
        reference, _, _ = _model_and_data()
        expected_loss = _single_process_step(reference, x, y)

        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        loss = train_step(model, optimizer, x, y, nn.MSELoss())

        assert isinstance(loss, float)
        assert loss == pytest.approx(expected_loss, rel=1e-5)
        for mine, theirs in zip(model.parameters(), reference.parameters()):
            torch.testing.assert_close(mine, theirs)
        grads = [p.grad.clone() for p in model.parameters()]
        average_gradients(model)  # the mean over one rank is the gradient itself
        for p, g in zip(model.parameters(), grads):
            torch.testing.assert_close(p.grad, g)
    finally:
        dist.destroy_process_group()


def _rank(rank, world_size, folder):
    dist.init_process_group("gloo", init_method=f"file://{folder}/store", rank=rank, world_size=world_size)
    try:
        model, x, y = _model_and_data()  # same seed: the same model and dataset on every rank
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        mine = shard_indices(len(x), rank, world_size, shuffle=False)
        loss = train_step(model, optimizer, x[mine], y[mine], nn.MSELoss())
        torch.save({"loss": loss, "state": model.state_dict()}, os.path.join(folder, f"rank{rank}.pt"))
    finally:
        dist.destroy_process_group()


def test_two_ranks_take_the_single_process_step(tmp_path):
    """Two processes, each on half the batch, end where one process on the whole batch ends."""
    mp.spawn(_rank, args=(2, str(tmp_path)), nprocs=2)
    results = [torch.load(tmp_path / f"rank{r}.pt") for r in range(2)]

    reference, x, y = _model_and_data()
    expected_loss = _single_process_step(reference, x, y)
    for result in results:
        assert result["loss"] == pytest.approx(expected_loss, rel=1e-5)  # mean over ranks
        for name, value in reference.state_dict().items():
            torch.testing.assert_close(result["state"][name], value)
