"""The models of numerics.models: fast paths against the written-out definitions (float64, so the
tolerance is a few hundred ulps of the prediction's size), the reduced forms, the ablation."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from mmicl.numerics.laws.language import parse_law
from mmicl.numerics.models import LCA, LinearSelfAttention, ReducedLCA
from mmicl.numerics.sampling import moments_of, sample_moments, sample_prompts

torch.set_num_threads(1)

# -- strategies: small named pieces -------------------------------------------------------------
dims = st.tuples(st.integers(1, 3), st.integers(1, 3))
context_lengths = st.integers(1, 12)
depths = st.integers(1, 6)
seeds = st.integers(0, 2**31 - 1)
law_texts = st.sampled_from(["s=uniform(0.5,4)", "s=point(2)", "s=twopoint(0.2,3,0.5)"])


def _prompts(law_text, d1, d2, n, seed, batch=5):
    law = parse_law(f"{law_text}; d1={d1}; d2={d2}")
    return law, sample_prompts(law, batch, n, torch.Generator().manual_seed(seed), dtype=torch.float64)


def _close(a, b, rel=1e-9):
    scale = max(1.0, float(a.abs().max()), float(b.abs().max()))
    return float((a - b).abs().max()) <= rel * scale


@settings(max_examples=25, deadline=None)
@given(law_texts, dims, context_lengths, seeds)
def test_lsa_moment_path_is_the_bottom_right_entry_of_the_full_output(law_text, dim, n, seed):
    law, p = _prompts(law_text, *dim, n, seed)
    lsa = LinearSelfAttention(law.d, init_scale=0.5, generator=torch.Generator().manual_seed(seed)).double()
    assert _close(lsa.forward_full(p)[:, -1, -1], lsa(p))


def test_lsa_with_reduced_weights_is_xq_gamma_h():
    law, p = _prompts("s=uniform(0.5,4)", 2, 1, 9, 3)
    d = law.d
    lsa = LinearSelfAttention(d).double()
    gamma = torch.randn(d, d, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        lsa.value.zero_(); lsa.value[d, d] = 1.0
        lsa.key_query.zero_(); lsa.key_query[:d, :d] = gamma.T
    mo = moments_of(p)
    expected = ((mo.query_x @ gamma) * mo.xy).sum(-1)
    assert _close(lsa(p), expected)
    assert torch.allclose(lsa.gamma(), gamma)


def test_the_query_label_never_enters_the_lsa_output():
    law, p = _prompts("s=uniform(0.5,4)", 1, 2, 6, 4)
    lsa = LinearSelfAttention(law.d, init_scale=1.0).double()
    q = sample_prompts(law, 5, 6, torch.Generator().manual_seed(4), dtype=torch.float64)
    q.y[:, -1] += 100.0
    assert _close(lsa.forward_full(p), lsa.forward_full(q))


@settings(max_examples=25, deadline=None)
@given(law_texts, dims, context_lengths, depths, seeds, st.booleans())
def test_lca_query_column_path_equals_the_layer_by_layer_forward(law_text, dim, n, T, seed, tied):
    law, p = _prompts(law_text, *dim, n, seed)
    lca = LCA(law.d, T, tied=tied, init_scale=0.2, generator=torch.Generator().manual_seed(seed)).double()
    assert _close(lca.forward_layers(p), lca(p))


@settings(max_examples=25, deadline=None)
@given(law_texts, dims, context_lengths, depths, seeds, st.sampled_from(["one", "two", "noskip"]))
def test_reduced_eigenbasis_closed_form_equals_the_loop_and_the_general_stack(law_text, dim, n, T, seed, mode):
    law, p = _prompts(law_text, *dim, n, seed)
    g = torch.Generator().manual_seed(seed)
    a, b = 0.4 * torch.rand(2, generator=g).tolist()[0], -0.4 * torch.rand(1, generator=g).item()
    model = ReducedLCA(T, mode, a, b).double()
    assert _close(model(p), model.forward_loop(p))
    assert _close(model(p), model.as_lca(law.d).double().forward_layers(p))


def test_reduced_one_parameter_in_the_large_context_limit_is_the_theory_formula():
    """ŷ = ζ α Σ_{k<T} (1 − α(1+s))^k mᵀx_q when C = Λ and h = ζ m."""
    law = parse_law("s=uniform(0.5,4); d1=2; d2=2")
    mo = sample_moments(law, 50, None, torch.Generator().manual_seed(0), dtype=torch.float64)
    alpha, T = 0.25, 7  # exactly representable in float32, where the parameter is created
    s = mo.s
    gain = alpha * sum((1 - alpha * (1 + s)) ** k for k in range(T))
    expected = mo.zeta * gain * (mo.m * mo.query_x).sum(-1)
    assert _close(ReducedLCA(T, "one", alpha).double()(mo), expected)


def test_noskip_lca_predicts_zero_and_has_zero_gradient():
    law, p = _prompts("s=uniform(0.5,4)", 2, 2, 10, 1)
    lca = LCA(law.d, 4, skip=False, init_scale=0.5).double()
    out = lca(p)
    assert torch.equal(out, torch.zeros_like(out))
    ((out - p.query_y) ** 2).mean().backward()
    assert all(torch.equal(q.grad, torch.zeros_like(q)) for q in lca.parameters())
    assert "w_s" not in dict(lca.named_parameters())


@pytest.mark.parametrize("bad", [dict(d=0, T=2), dict(d=2, T=0)])
def test_bad_sizes_are_refused(bad):
    with pytest.raises(ValueError):
        LCA(**bad)
    with pytest.raises(ValueError):
        ReducedLCA(T=0)


@settings(max_examples=25, deadline=None)
@given(law_texts, dims, context_lengths, seeds)
def test_bayes_prediction_is_zeta_m_lambda_inverse_x(law_text, dim, n, seed):
    """The compiled Bayes predictor (theory.model) against ζ mᵀΛ⁻¹x_q with Λ = I + mmᵀ and Λ⁻¹m
    solved by numpy.linalg.solve, prompt by prompt."""
    import numpy as np

    from mmicl.numerics.models import bayes_prediction

    law, p = _prompts(law_text, *dim, n, seed)
    got = bayes_prediction(p).numpy()
    for k in range(got.size):
        m, xq, z = p.m[k].numpy(), p.query_x[k].numpy(), float(p.zeta[k])
        direct = z * np.linalg.solve(np.eye(m.size) + np.outer(m, m), m) @ xq
        assert abs(got[k] - direct) <= 1e-12 * max(1.0, abs(direct))


def test_bayes_prediction_keeps_dtype_and_gradient():
    from mmicl.numerics.models import bayes_prediction

    law = parse_law("s=uniform(0.5,4); d1=2; d2=1")
    for dtype in (torch.float32, torch.float64):
        mo = sample_moments(law, 8, 5, torch.Generator().manual_seed(2), dtype=dtype)
        mo.zeta.requires_grad_(True)
        out = bayes_prediction(mo)
        assert out.dtype == dtype and out.shape == (8,)
        out.sum().backward()  # ∂ŷ/∂ζ = mᵀx_q/(1+s)
        assert _close(mo.zeta.grad.double(), ((mo.m * mo.query_x).sum(-1) / (1 + mo.s)).double(), rel=1e-6)
