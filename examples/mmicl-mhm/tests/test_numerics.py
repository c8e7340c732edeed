"""The full layer: its odd/even split, and the Monte Carlo loss against the derived one."""
import numpy as np

import mmicl
from hypothesis import given, settings, strategies as st

from mmicl_mhm import numerics as nm
from mmicl_mhm import theory


def test_full_layer_prediction_splits_into_odd_and_even_parts():
    rng = np.random.default_rng(5)
    d, n = 2, 5
    PV, KQ = rng.standard_normal((d + 1, d + 1)), rng.standard_normal((d + 1, d + 1))
    X, Y = nm.sample_prompts(np.eye(d), n, 1000, nm.target_function(theory.parse_target("z**3")), rng)
    yhat = nm.full_predict(PV, KQ, X, Y, n)
    h = np.einsum("mnd,mn->md", X[:, :n], Y[:, :n]) / n
    odd = np.einsum("md,de,me->m", X[:, n], nm.odd_part(PV, KQ), h)
    cov = np.einsum("mnd,mne->mde", X, X) / n
    even = (np.einsum("d,mde,ef,mf->m", PV[d, :d], cov, KQ[:d, :d], X[:, n])
            + PV[d, d] * (Y[:, :n] ** 2).sum(1) / n * (X[:, n] @ KQ[d, :d]))
    np.testing.assert_allclose(yhat, odd + even, rtol=1e-10, atol=1e-10)


@settings(max_examples=6, derandomize=True)
@given(st.integers(1, 3), st.integers(2, 12), st.sampled_from(["z", "sign(z)", "z*Abs(z)"]), st.integers(0, 2**31),
       st.sampled_from([0.0, 0.7]))
def test_the_monte_carlo_loss_is_the_derived_loss(d, n, target, seed, noise):
    """At a random Γ: 5 standard errors of 100 000 prompts (nominally a false alarm once in 1.7
    million; the examples are fixed, so a rare seed cannot be searched for)."""
    g = theory.parse_target(target)
    rng = np.random.default_rng(seed)
    G = rng.standard_normal((d, d)) * 0.5
    X, Y = nm.sample_prompts(np.eye(d), n, 100_000, nm.target_function(g), rng, noise)
    est = mmicl.Estimate.of(nm.reduced_errors(G, X, Y, n))
    mean, se = est.mean, est.se
    assert abs(mean - theory.loss(g, G, np.eye(d), n, noise)) <= 5 * se


def test_the_even_part_only_adds_loss_for_an_odd_target():
    """E[(odd − y)·even] = 0: a layer with an even part has the loss of its odd part plus ½E[even²]."""
    rng = np.random.default_rng(11)
    d, n = 2, 4
    g = theory.parse_target("sign(z)")
    PV, KQ = np.zeros((d + 1, d + 1)), np.zeros((d + 1, d + 1))
    PV[d, d], KQ[:d, :d], KQ[d, :d], PV[d, :d] = 0.7, np.eye(d), [0.3, -0.2], [0.1, 0.2]
    X, Y = nm.sample_prompts(np.eye(d), n, 200_000, nm.target_function(g), rng)
    full = 0.5 * (nm.full_predict(PV, KQ, X, Y, n) - Y[:, n]) ** 2
    odd_only = nm.reduced_errors(nm.odd_part(PV, KQ), X, Y, n)
    est = mmicl.Estimate.of(full - odd_only)
    mean, se = est.mean, est.se
    assert mean > 5 * se  # strictly more loss, never less
