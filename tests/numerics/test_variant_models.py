"""numerics.variant_models: the LCA variants as torch modules, checked against the derivation
(numerics.variants.excess_at) by Monte Carlo, against themselves written out (forward_layers), and
against the default's ReducedLCA."""
import dataclasses
import itertools
import random
import zlib

import pytest
import torch

from mmicl.numerics.laws.language import as_law
from mmicl.numerics.models import ReducedLCA
from mmicl.numerics.sampling import sample_moments, sample_prompts
from mmicl.numerics.validate import InputError
from mmicl.numerics.variant_models import VariantLCA, sampled_excess_variant
from mmicl.numerics.variants import excess_at
from mmicl.theory import variants as tv

LAW = "sv=uniform(0.2,1.5); sr=point(0.5); d1=2; d2=1"  # bounded: s ∈ [0.7, 2], λ ≤ 3
T = 3
EPS = 2.0**-52
VARIANTS = [tv.Variant(*c) for c in itertools.product(tv.READOUTS, tv.F0S, tv.SKIPS, ("one", "two"))]


def params_of(v: tv.Variant) -> list[float]:
    """Seeded by the variant's text, in the stable range (|1 + w_V λ| < 1 for λ ≤ 3)."""
    rng = random.Random(v.text)
    draw = {"alpha": rng.uniform(0.1, 0.4), "beta": rng.uniform(-0.4, -0.1)}
    return [draw[str(p)] for p in tv.derive(v).params]


def test_the_combinations():
    assert len(VARIANTS) == 24 and len(set(VARIANTS)) == 24


# Monte Carlo at n = ∞ against the derived excess.  SAMPLES prompts: the per-prompt values are
# bounded (bounded s and ζ), so the mean is normal to far better than the 4σ tail at this size;
# Z = 4 gives a false alarm chance of 2·(1 − Φ(4)) ≈ 6.3e-5 per case (each case its own seed, so
# the 24 cases are independent: ≈ 1.5e-3 for the file).  ROUNDING: float64 error of both sides,
# T layers of products of O(1) numbers plus a quadrature over s, 64·T·ε relative to the size of
# the numbers (|excess| + E[ζ²]); it only matters were se ever 0.
SAMPLES = 2**15
Z = 4.0


@pytest.mark.parametrize("v", VARIANTS, ids=lambda v: v.text)
def test_monte_carlo_agrees_with_excess_at(v):
    params = params_of(v)
    exact = excess_at(LAW, T, v, params)
    est = sampled_excess_variant(LAW, T, v, params, n=None, samples=SAMPLES, seed=zlib.crc32(v.text.encode()))
    rounding = 64 * T * EPS * (abs(exact) + as_law(LAW).zeta.second_moment())
    assert est.se > 0
    assert abs(est.mean - exact) <= Z * est.se + rounding, (
        f"{v.text} at {params}: Monte Carlo {est.mean:.10g} ± {est.se:.3g}, excess_at {exact:.10g}, "
        f"z = {est.z(exact):.2f}")


def _roundoff(model: VariantLCA, prompts, n: int) -> torch.Tensor:
    """Per prompt: a bound on float64's error of either form.  With G = 1 + |w_S| + |w_V|·‖C‖,
    every |F^t_j| ≤ G^T |x_j|, so every term of ŷ is at most (1/n)Σ|y_i||x_i| · |x_q| · G^{2T};
    each layer's products sum ≤ n + d terms, a relative error of (n + d)·ε per layer, T layers,
    and 4 for the readout's own sums and the slack."""
    mo_cov = prompts.context_x.transpose(1, 2) @ prompts.context_x / n
    w_s, w_v = (abs(float(w.detach())) for w in model.weights(mo_cov))
    growth = 1 + w_s + w_v * torch.linalg.matrix_norm(mo_cov, ord=2)
    size = (prompts.context_y.abs() * prompts.context_x.norm(dim=-1)).mean(-1) * prompts.query_x.norm(dim=-1)
    d = prompts.x.shape[-1]
    return 4 * T * (n + d) * EPS * size * growth ** (2 * T)


@pytest.mark.parametrize("v", VARIANTS, ids=lambda v: v.text)
def test_moments_equal_the_written_out_model(v):
    n = 7
    model = VariantLCA(v, T, params_of(v))
    prompts = sample_prompts(LAW, 64, n, torch.Generator().manual_seed(5), dtype=torch.float64)
    moment, written = model(prompts), model.forward_layers(prompts)
    assert ((moment - written).abs() <= _roundoff(model, prompts, n)).all()
    assert written.abs().max() > 0 or not model.names  # only the model without parameters predicts 0


@pytest.mark.parametrize("n", [7, None])
def test_the_default_is_reduced_lca(n):
    alpha = 0.3125  # exact in float32, the dtype ReducedLCA stores α in
    model = VariantLCA(tv.DEFAULT, T, [alpha])
    reduced = ReducedLCA(T, "one", alpha).double()
    batch = sample_moments(LAW, 256, n, torch.Generator().manual_seed(3), dtype=torch.float64)
    # ReducedLCA diagonalises C (eigh, O(d·ε) per entry) and sums the T powers; 64·T·ε of the size
    growth = 1 + alpha * torch.linalg.matrix_norm(batch.cov, ord=2)
    size = batch.xy.norm(dim=-1) * batch.query_x.norm(dim=-1) * T * growth**T
    assert ((model(batch) - reduced(batch)).abs() <= 64 * T * EPS * size).all()
    assert model.params() == {"alpha": alpha}


def test_dtype_and_autograd():
    v = tv.Variant("evolved-keys-and-query", "tokens", "on", "two")
    model = VariantLCA(v, T, [0.2, -0.3])
    assert [name for name, _ in model.named_parameters()] == ["alpha", "beta"]
    b64 = sample_moments(LAW, 32, None, torch.Generator().manual_seed(0), dtype=torch.float64)
    fields = ("cov", "xy", "yy", "query_x", "query_y", "m", "zeta")
    b32 = dataclasses.replace(b64, **{k: getattr(b64, k).float() for k in fields})
    y32 = model(b32)
    assert y32.dtype == torch.float32
    torch.testing.assert_close(y32.double(), model(b64), rtol=1e-5, atol=1e-6)
    model(b64).sum().backward()
    assert model.alpha.grad is not None and model.beta.grad is not None


def test_no_parameters_predicts_zero():
    model = VariantLCA("skip=off", T, [])
    assert model.names == () and list(model.parameters()) == []
    b = sample_moments(LAW, 8, 7, torch.Generator().manual_seed(0), dtype=torch.float64)
    assert (model(b) == 0).all()


@pytest.mark.parametrize("variant, params, words", [
    ("param=untied", [0.1] * T, "UntiedReducedLCA"),
    ("readout=evolved-keys-and-query,param=untied", [0.1] * T, "param=one or param=two"),
    ("readout=sideways", [0.1], "readout"),
    (tv.DEFAULT, [0.1, 0.2], "1 parameter(s) (alpha), got 2"),
    ("param=two", [0.1], "2 parameter(s) (alpha, beta), got 1"),
    ("f0=tokens,skip=off,param=two", [0.1, 0.2], "(beta), got 2"),
    ("skip=off", [0.1], "none: it predicts 0"),
    (tv.DEFAULT, [float("nan")], "alpha"),
])
def test_bad_input(variant, params, words):
    with pytest.raises(InputError) as e:
        VariantLCA(variant, T, params)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_forward_layers_needs_tokens():
    b = sample_moments(LAW, 4, 7, torch.Generator().manual_seed(0), dtype=torch.float64)
    with pytest.raises(InputError, match="Prompts"):
        VariantLCA(tv.DEFAULT, T, [0.2]).forward_layers(b)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_matches_cpu():
    v = tv.Variant("evolved-keys", "tokens", "on", "two")
    cpu = sampled_excess_variant(LAW, T, v, [0.2, -0.3], samples=4096, seed=1)
    gpu = sampled_excess_variant(LAW, T, v, [0.2, -0.3], samples=4096, seed=1, device="cuda")
    assert abs(cpu.mean - gpu.mean) <= Z * (cpu.se + gpu.se)  # different generators: different draws
