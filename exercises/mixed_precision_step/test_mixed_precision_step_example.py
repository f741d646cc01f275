"""Example tests for the mixed_precision_step exercise. Run: pytest exercises/mixed_precision_step/test_mixed_precision_step_example.py

These are examples to read and run while you work, not the grade: the graded
checks are hidden and cover much more (see README.md).
"""

import math

import pytest
import torch
from torch import nn

from amp_step import amp_train_step


def _setup(seed=0, init_scale=1024.0):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=init_scale)
    batch = (torch.randn(6, 4), torch.randn(6, 3))
    return model, optimizer, scaler, batch


def test_one_step_is_close_to_float32():
    model, optimizer, scaler, batch = _setup()
    reference = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    reference.load_state_dict(model.state_dict())
    start = {k: v.clone() for k, v in model.state_dict().items()}

    out = amp_train_step(model, optimizer, scaler, batch, nn.MSELoss())

    loss = nn.MSELoss()(reference(batch[0]), batch[1])       # float32, no autocast, no scaler
    loss.backward()
    assert out["skipped"] is False and out["scale"] == 1024.0
    assert out["loss"] == pytest.approx(loss.item(), rel=0.05)
    for (name, p), q in zip(model.named_parameters(), reference.parameters()):
        assert p.dtype == torch.float32                       # master weights stay float32
        expected_update = -0.1 * q.grad
        torch.testing.assert_close(p - start[name], expected_update, rtol=0.1, atol=1e-3)


def test_inf_loss_skips_the_step_and_halves_the_scale():
    model, optimizer, scaler, batch = _setup()
    start = {k: v.clone() for k, v in model.state_dict().items()}

    def inf_loss(output, target):
        return nn.functional.mse_loss(output, target) * math.inf

    out = amp_train_step(model, optimizer, scaler, batch, inf_loss)
    assert out == {"loss": math.inf, "skipped": True, "scale": 512.0}
    for name, value in model.state_dict().items():
        assert torch.equal(value, start[name])


def test_clipping_sees_unscaled_gradients():
    model, optimizer, scaler, batch = _setup(init_scale=2.0**16)
    amp_train_step(model, optimizer, scaler, batch, nn.MSELoss(), max_grad_norm=0.1)
    # after the step .grad holds the unscaled, clipped gradients
    total = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in model.parameters()]))
    assert total == pytest.approx(0.1, rel=1e-3)


def test_errors():
    model, optimizer, scaler, batch = _setup()
    with pytest.raises(ValueError, match="max_grad_norm"):
        amp_train_step(model, optimizer, scaler, batch, nn.MSELoss(), max_grad_norm=0.0)
    with pytest.raises(ValueError, match="device_type"):
        amp_train_step(model, optimizer, scaler, batch, nn.MSELoss(), device_type="tpu")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_step_runs_in_float16_and_keeps_float32_weights():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3)).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda", init_scale=1024.0)
    batch = (torch.randn(6, 4, device="cuda"), torch.randn(6, 3, device="cuda"))
    seen = []
    model.register_forward_hook(lambda module, args, output: seen.append(output.dtype))

    out = amp_train_step(model, optimizer, scaler, batch, nn.MSELoss(), device_type="cuda")
    assert seen == [torch.float16]                            # autocast float16 on CUDA
    assert out["skipped"] is False and out["scale"] == 1024.0
    assert all(p.dtype == torch.float32 and p.is_cuda for p in model.parameters())
