"""The numerical routes: BFGS, the gradient flow, the LSA layer's blocks, training."""
import numpy as np
import pytest
from hypothesis import given, settings

from mmicl_zfb import numerics as nm
from mmicl_zfb import theory
from strategies import spd_cases


def test_lsa_blocks_that_move_are_derived():
    blocks = theory.lsa_block_structure(2, 5)
    assert {b for b, s in blocks.items() if s == "moves"} == {"W11_KQ", "w22_PV"}
    assert blocks["w21_PV"] == blocks["w21_KQ"] == "zero on P by parity"


@pytest.mark.parametrize("make", [lambda rng: (np.diag([1.0, 2.0, 4.0]), 5),
                                  lambda rng: (nm.random_spd(3, 30.0, rng), 8)])
def test_flow_end_point_is_the_minimiser(make):
    """From the paper's init (σ = half the paper's bound) the flow ends at Γ* to 1e-6 relative,
    balanced (u² = ‖U‖_F²), with u = ‖Γ*‖_F^½."""
    rng = np.random.default_rng(3)
    Lam, N = make(rng)
    sigma = 0.5 * nm.sigma_bound(Lam, N)
    u0, U0, _ = nm.paper_init(Lam.shape[0], sigma, rng)
    flow = nm.reduced_flow(Lam, N, u0, U0)
    Gs = theory.gamma_star(Lam, N)
    assert flow.stopped
    assert np.linalg.norm(flow.gamma - Gs) <= 1e-6 * np.linalg.norm(Gs)
    assert flow.u == pytest.approx(np.sqrt(np.linalg.norm(Gs)), rel=1e-6)
    assert flow.balance_drift <= 1e-8
    assert np.all(np.diff(flow.losses) <= 1e-12)  # the loss never increases along a gradient flow


def test_flow_from_zero_stays_at_the_saddle():
    Lam, N = np.diag([1.0, 2.0, 4.0]), 5
    flow = nm.reduced_flow(Lam, N, 0.0, np.zeros((3, 3)), t_max=100.0)
    assert np.all(flow.gamma == 0) and flow.loss == pytest.approx(3.5)


@settings(max_examples=10)
@given(spd_cases(max_d=3))
def test_bfgs_finds_gamma_star(case):
    Lam, N, seed = case
    opt = nm.minimise_numeric(Lam, N, np.random.default_rng(seed))
    Gs = theory.gamma_star(Lam, N)
    assert np.linalg.norm(opt["gamma"] - Gs) <= 1e-5 * np.linalg.norm(Gs)


def test_full_layer_prediction_splits_into_odd_and_even_parts():
    """The torch full layer's prediction equals x_qᵀ Γ'(θ) (1/N)Σ y_i x_i (odd in the labels) plus
    w21^PVᵀ (1/N)Σ_{all N+1 columns} x xᵀ W11^KQ x_q + w22^PV (1/N)Σ y_i² w21^KQᵀ x_q (even), with
    every block random, including those that do not enter ŷ (numerics' docstring)."""
    import torch

    rng = np.random.default_rng(5)
    Lam, N, d = np.diag([1.0, 2.0, 4.0]), 5, 3
    PV, KQ = rng.standard_normal((d + 1, d + 1)), rng.standard_normal((d + 1, d + 1))
    X, _, Y = nm.sample_prompts(Lam, N, 1000, rng)
    yhat = nm.lsa_predict(torch.from_numpy(PV), torch.from_numpy(KQ), torch.from_numpy(X), torch.from_numpy(Y), N).numpy()
    h = np.einsum("mnd,mn->md", X[:, :N], Y[:, :N]) / N
    odd = np.einsum("md,de,me->m", X[:, N], nm.odd_part(PV, KQ), h)
    cov = np.einsum("mnd,mne->mde", X, X) / N  # all N + 1 columns: the query's too
    even = (np.einsum("d,mde,ef,mf->m", PV[d, :d], cov, KQ[:d, :d], X[:, N])
            + PV[d, d] * (Y[:, :N] ** 2).sum(1) / N * (X[:, N] @ KQ[d, :d]))
    np.testing.assert_allclose(yhat, odd + even, rtol=1e-10, atol=1e-10)
