"""The linear transformer: its layers compute preconditioned gradient descent, its numpy and torch
forms agree, and sampled losses agree with the derived ones."""
import numpy as np
from hypothesis import given, settings, strategies as st

import mmicl
import mmicl.testing as mt
from mmicl_acds import numerics as nm
from mmicl_acds import theory


@settings(max_examples=8, derandomize=True)
@given(mt.positive_definite_matrices(st.integers(1, 4), 0.2, 5.0), st.integers(2, 12),
       st.lists(st.floats(0.05, 2.0), min_size=1, max_size=4), st.integers(0, 2**31))
def test_the_layers_with_b_zero_are_preconditioned_gradient_descent(sigma, n, steps, seed):
    """A_ℓ = −a_ℓΣ⁻¹, B_ℓ = 0: the same prediction as the steps w ← w + a_ℓΣ⁻¹(1/n)Σ(y_i − wᵀx_i)x_i."""
    X, y = nm.sample_prompts(sigma, n, 200, np.random.default_rng(seed))
    A, B = nm.transformer_params_for_steps(steps, sigma)
    gd = nm.gd_predict(X, y, n, steps, np.linalg.inv(sigma))
    lt = nm.transformer_predict(A, B, X, y, n)
    np.testing.assert_allclose(lt, gd, rtol=1e-9, atol=1e-9 * max(1.0, np.abs(gd).max()))


def test_the_fitted_layers_loss_is_the_numpy_forms():
    """The torch forward pass that is fitted and the numpy one that is evaluated give the same loss on
    the fit's own prompts (drawn, as documented, once from the fit's seed)."""
    sigma = np.diag([1.0, 0.5])
    fit = nm.train_transformer(sigma, 6, 2, 500, 5, seed=3)
    X, y = nm.sample_prompts(sigma, 6, 500, np.random.default_rng(3))
    mse = float(np.mean((nm.transformer_predict(fit["A"], fit["B"], X, y, 6) - y[:, 6]) ** 2))
    assert abs(mse - fit["train_loss"]) <= 1e-9 * max(1.0, mse)


def test_context_losses_and_prompt_losses_have_the_same_mean():
    """tr p(S)² integrates the task and the query out: over the same law its mean is the per-prompt
    squared error's (two independent samples, 5 combined standard errors)."""
    steps = theory.best_steps(2, 8, 3)["steps"]
    ctx = mmicl.Estimate.of(nm.context_trace_losses(steps, 8, 3, 100_000, np.random.default_rng(1)))
    sq = nm.paired_losses({"pgd": lambda X, y: nm.gd_predict(X, y, 8, steps, np.eye(3))}, np.eye(3), 8, 200_000,
                          np.random.default_rng(2))["pgd"]
    est = mmicl.Estimate.of(sq)
    assert abs(ctx.mean - est.mean) <= 5 * np.hypot(ctx.se, est.se)
