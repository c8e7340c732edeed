"""The learning-rate warm-up of the testbed's training loop (``numerics.testbed.train``): what it does to a constant
gradient, bit-identity with a plain Adam loop without it, and the values it refuses."""
from __future__ import annotations
import math
from dataclasses import replace
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from mmicl.numerics.testbed.config import TestbedConfigError, TrainConfig
from mmicl.numerics.testbed.train import training_loop


FEW = settings(deadline=None)
"""Few examples (the profile of tests/conftest.py: 25; ``HYPOTHESIS_PROFILE=thorough`` for 300)."""

# ---- 5. learning-rate warm-up ----------------------------------------------------------------------
ADAM_EPS = torch.optim.Adam([torch.nn.Parameter(torch.zeros(1))]).defaults["eps"]

def _one_parameter_run(train: TrainConfig, g: float) -> np.ndarray:
    """Minimise g·p from p = 0 (a constant gradient g); p after every step."""
    p = torch.nn.Parameter(torch.zeros(1, dtype=torch.float64))
    h = training_loop([p], lambda: (g * p).reshape(1), lambda: {"p": p.detach().clone()}, train, E=1)
    return h.curve("p")[:, 0].numpy()


@pytest.mark.train
@FEW
@given(warmup=st.integers(1, 6), steps=st.integers(1, 10), lr=st.floats(1e-4, 1e-1),
       g=st.floats(1e-3, 1e3) | st.floats(-1e3, -1e-3))
def test_warmup_moves_a_constant_gradient_parameter_by_lr_times_the_sum_of_t_over_warmup(warmup, steps, lr, g):
    """Adam's bias-corrected step for a constant gradient g is lr_t·g/(|g| + eps), i.e. lr_t up to a
    relative eps/|g|; with the linear warm-up lr_t = lr·min(t/W, 1), so after k steps the parameter
    has moved against g by lr·Σ_{t≤k} min(t/W, 1), within that relative eps/|g| (plus float64
    rounding)."""
    p = _one_parameter_run(TrainConfig(steps=steps, batch=1, lr=lr, eval_every=1, eval_size=1, warmup=warmup), g)
    assert p[0] == 0.0
    for k in range(1, steps + 1):
        expected = lr * sum(min(t / warmup, 1.0) for t in range(1, k + 1))
        moved = -math.copysign(1.0, g) * p[k]
        assert abs(moved - expected) <= expected * (ADAM_EPS / abs(g) + 1e-12)


@pytest.mark.train
def test_without_warmup_the_loop_is_bit_identical_to_a_plain_adam_loop():
    """warmup = 0 is the constant learning rate of before: the same parameters, bit for bit, as
    torch.optim.Adam stepped by hand on the same losses."""
    gen = torch.Generator().manual_seed(0)
    X, Y = torch.randn(2, 6, 3, generator=gen), torch.randn(2, 6, generator=gen)
    w0, b0 = torch.randn(2, 3, generator=gen), torch.randn(2, generator=gen)
    train = TrainConfig(steps=7, batch=1, lr=0.05, eval_every=3, eval_size=1)
    assert train.warmup == 0

    def problem():
        w, b = torch.nn.Parameter(w0.clone()), torch.nn.Parameter(b0.clone())
        return [w, b], lambda: ((X @ w.unsqueeze(-1)).squeeze(-1) + b[:, None] - Y).pow(2).mean(-1)

    params, losses = problem()
    training_loop(params, losses, dict, train, E=2)
    by_hand, hand_losses = problem()
    opt = torch.optim.Adam(by_hand, lr=train.lr)
    for _ in range(train.steps):
        per_member = hand_losses()
        opt.zero_grad(set_to_none=True)
        per_member.sum().backward()
        opt.step()
    assert all(torch.equal(a, b) for a, b in zip(params, by_hand))
    warm, warm_losses = problem()
    training_loop(warm, warm_losses, dict, replace(train, warmup=3), E=2)
    assert not torch.equal(warm[0], params[0])


@pytest.mark.parametrize("warmup", [-1, 1.5, 2.0, True, "3", None])
def test_a_negative_or_non_integer_warmup_is_refused(warmup):
    with pytest.raises(TestbedConfigError, match="warmup"):
        TrainConfig(warmup=warmup)
