"""The finite-dimensional simulation: the features of H_Z, the null predictor's error, a fit."""
import numpy as np

import mmicl
from mmicl_llzmp import numerics as nm
from mmicl_llzmp import theory


def test_the_features_are_the_query_times_the_context_summary():
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((3, 6, 4)), rng.standard_normal((3, 6))
    H, yq = nm.features(X, y)
    d, ell = 4, 5
    for m in range(3):
        h = np.concatenate([(d / ell) * (y[m, :ell, None] * X[m, :ell]).sum(0), [(y[m, :ell] ** 2).mean()]])
        np.testing.assert_allclose(H[m].reshape(d, d + 1), np.outer(X[m, ell], h), rtol=1e-12)
    np.testing.assert_array_equal(yq, y[:, ell])


def test_the_null_predictor_scores_one_plus_rho():
    """Γ = 0: the error is E y_q² = E‖β‖²/d + ρ = 1 + ρ (5 standard errors of 40 000 sequences)."""
    est = mmicl.Estimate.of(nm.icl_errors(np.zeros((6, 7)), 2.0, 0.3, 40_000, np.random.default_rng(1)))
    assert abs(est.mean - 1.3) <= 5 * est.se


def test_a_strong_ridge_fits_nearly_nothing_and_a_light_one_learns():
    rng = np.random.default_rng(2)
    strong = nm.fit_gamma(8, 4.0, 2.0, 3.0, 0.01, 1e6, rng)
    assert np.abs(strong).max() < 1e-3
    light = nm.simulate(12, 4.0, 4.0, 3.0, 0.01, 1e-3, 2, 4000, rng)
    assert light.mean() < 0.8 * 1.01  # well below the null predictor's 1 + ρ
    assert abs(light.mean() - theory.e_icl(4.0, 4.0, 3.0, 0.01, 1e-3)) < 0.5
