"""numerics.estimate.Estimate: one Monte Carlo mean with its standard error, used by the LSA Monte
Carlo (numerics.lsa_training) and by the risk of a trained model (numerics.training)."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from mmicl.numerics.estimate import Z95, Estimate
import mpmath as mp


def test_of_numpy_is_the_mean_and_sd_over_root_n():
    x = np.array([1.0, 2.0, 4.0, 7.0])
    e = Estimate.of(x)
    assert e.mean == 3.5 and e.samples == 4
    assert e.se == pytest.approx(math.sqrt(((x - 3.5) ** 2).sum() / 3) / 2, rel=1e-15)


def test_of_a_tensor_is_reduced_by_torch_in_float64_as_before():
    """The numbers the old MCEstimate and RiskEstimate computed (torch, float64, unbiased sd)."""
    v = torch.randn(1001, generator=torch.Generator().manual_seed(0), dtype=torch.float32)
    e = Estimate.of(v)
    d = v.double()
    assert e.mean == float(d.mean()) and e.samples == 1001
    assert e.se == float(d.std(unbiased=True) / math.sqrt(1001))
    from_numpy = Estimate.of(v.numpy())
    assert from_numpy.mean == pytest.approx(e.mean, rel=1e-12) and from_numpy.se == pytest.approx(e.se, rel=1e-12)


def test_of_a_tensor_that_needs_grad():
    v = torch.ones(3, requires_grad=True) * 2.0
    assert Estimate.of(v) == Estimate(2.0, 0.0, 3)


def test_one_draw_has_an_infinite_standard_error_and_none_is_refused():
    assert Estimate.of(np.array([2.0])) == Estimate(2.0, math.inf, 1)
    assert Estimate.of(torch.tensor([2.0])).se == math.inf
    with pytest.raises(ValueError, match="at least one"):
        Estimate.of(np.array([]))
    with pytest.raises(ValueError, match="1-D"):
        Estimate.of(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="1-D"):
        Estimate.of(torch.zeros(2, 2))


def test_z_and_interval():
    e = Estimate(1.0, 0.5, 100)
    assert e.z(0.0) == 2.0 and e.z(2.0) == -2.0
    lo, hi = e.interval95()
    assert (lo, hi) == pytest.approx((1.0 - Z95 * 0.5, 1.0 + Z95 * 0.5))
    assert Estimate(1.0, 0.0, 5).z(1.0) == 0.0 and Estimate(1.0, 0.0, 5).z(0.0) == math.inf


def test_json_keys_are_those_of_the_old_mc_estimate():
    e = Estimate(0.25, 0.01, 400)
    assert e.to_json() == {"mean": 0.25, "se": 0.01, "samples": 400}
    json.dumps(e.to_json())


def test_old_names_are_this_type():
    from mmicl.numerics import lsa_training

    assert lsa_training.MCEstimate is Estimate


def test_risk_estimate_reads_its_two_estimates():
    from mmicl.numerics.training import RiskEstimate

    r = RiskEstimate(Estimate(1.5, 0.1, 1000), Estimate(0.2, 0.01, 1000), None)
    assert (r.risk, r.risk_se, r.excess, r.excess_se, r.samples, r.n) == (1.5, 0.1, 0.2, 0.01, 1000, None)
    assert list(r.to_json()) == ["risk", "risk_se", "excess", "excess_se", "samples", "n"]


def test_monte_carlo_estimate_is_mean_and_sd_over_root_k():
    """``Estimate.of``: mean, se = sd/√k with the unbiased sd; z = (mean − v)/se; interval95 =
    mean ± z_{0.975}·se (z_{0.975} checked against mpmath's normal quantile)."""
    v = np.array([0.3, 1.1, -0.4, 2.0, 0.9, 0.2, 1.5])
    k = v.size
    mean = sum(v) / k
    sd = math.sqrt(sum((x - mean) ** 2 for x in v) / (k - 1))
    e = Estimate.of(v)
    assert (e.mean, e.samples) == (pytest.approx(mean, rel=1e-14), k)
    assert e.se == pytest.approx(sd / math.sqrt(k), rel=1e-13)
    assert e.z(0.1) == pytest.approx((mean - 0.1) / (sd / math.sqrt(k)), rel=1e-13)
    with mp.workdps(30):
        z975 = float(mp.sqrt(2) * mp.erfinv(mp.mpf("0.95")))
    assert Z95 == pytest.approx(z975, rel=1e-15)
    lo, hi = e.interval95()
    assert (lo, hi) == (pytest.approx(mean - z975 * e.se, rel=1e-13), pytest.approx(mean + z975 * e.se, rel=1e-13))
    assert Estimate.of([2.0]).se == math.inf
