"""sample_moments draws the context's moments with the law of moments_of(sample_prompts(...))."""
import pytest
import torch

from mmicl.numerics.laws.language import parse_law
from mmicl.numerics.sampling import moments_of, sample_moments, sample_prompts

torch.set_num_threads(1)
LAW = parse_law("s=uniform(0.5,4); zeta=normal; d1=2; d2=1")


@pytest.mark.parametrize("n", [2, 10])
def test_moment_sampler_matches_token_moments_in_mean_and_second_moment(n):
    """20 000 prompts each way; every entry's mean and mean square agree within 4.5 combined
    standard errors (two-sample z; 4.5 keeps the family of ~40 comparisons at a < 1e-3 false alarm rate)."""
    B = 20_000
    a = sample_moments(LAW, B, n, torch.Generator().manual_seed(1), dtype=torch.float64)
    b = moments_of(sample_prompts(LAW, B, n, torch.Generator().manual_seed(2), dtype=torch.float64))
    for name in ("cov", "xy", "yy"):
        for power in (1, 2):
            x = getattr(a, name).reshape(B, -1) ** power
            y = getattr(b, name).reshape(B, -1) ** power
            se = (x.var(0) / B + y.var(0) / B).sqrt()
            z = ((x.mean(0) - y.mean(0)).abs() / se).max()
            assert z < 4.5, (name, power, float(z))


def test_same_seed_same_moments_and_same_tasks_at_every_n():
    a = sample_moments(LAW, 7, 50, torch.Generator().manual_seed(3))
    b = sample_moments(LAW, 7, 50, torch.Generator().manual_seed(3))
    c = sample_moments(LAW, 7, None, torch.Generator().manual_seed(3))
    assert torch.equal(a.cov, b.cov) and torch.equal(a.xy, b.xy)
    assert torch.equal(a.m, c.m) and torch.equal(a.query_x, c.query_x) and torch.equal(a.query_y, c.query_y)


def test_large_context_moments_are_lambda_and_zeta_m():
    c = sample_moments(LAW, 4, None, torch.Generator().manual_seed(0), dtype=torch.float64)
    lam = torch.eye(3, dtype=torch.float64) + c.m[:, :, None] * c.m[:, None, :]
    assert torch.allclose(c.cov, lam) and torch.allclose(c.xy, c.zeta[:, None] * c.m)


def test_bad_sizes_are_refused_with_a_message():
    with pytest.raises(ValueError, match="n ≥ 1"):
        sample_moments(LAW, 3, 0, torch.Generator())
