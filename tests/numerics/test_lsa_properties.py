"""Properties of the best LSA over random task laws (Hypothesis)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mmicl.numerics import lca, lsa
from mmicl.numerics.laws.scalar import Point
from mmicl.numerics.laws.task import TaskLaw, ZetaLaw
from mmicl.testing import (atoms, beta_laws, dims, discrete_laws, grid_norms, has_signal, per_modality_task_laws,
                          separated_scalar_laws, squared_norms, task_laws_from as task_laws, uniform_laws,
                          zeta_laws as zeta_law_strategy)

zeta_laws = zeta_law_strategy()

SETTINGS = settings(suppress_health_check=[HealthCheck.too_slow])

# Strategies (mmicl.testing): the law of s, or per-modality laws with v-directions that may be
# stretched; point masses, Beta pieces and atoms at least 1/4 apart (so "gap > 0" is well above
# rounding whenever it holds).
isotropic_laws = task_laws(separated_scalar_laws, require_signal=False)
task_law = st.one_of(isotropic_laws,
                     per_modality_task_laws(separated_scalar_laws, separated_scalar_laws, anisotropic=True))
laws_with_signal = task_law.filter(has_signal)
isotropic_laws_with_signal = isotropic_laws.filter(has_signal)
context_length = st.integers(1, 200)
grid_atoms_or_points = discrete_laws(grid_norms) | atoms()


# --------------------------------------------------------------------------- properties


def _normal_equation_gap(law: TaskLaw, best) -> tuple[float, float]:
    """``(E[ζ²](κ − bᵀγ*), its scale E[ζ²](κ + Σ|b_i γ_i|))`` with b = E[m²] and κ = E[s/(1+s)]
    on the rule that ``best_lsa`` uses: at a solution of A γ = b, γᵀAγ − 2bᵀγ + κ = κ − bᵀγ."""
    blocks = lsa.norm_blocks(law)
    mu2, _ = lsa.conditional_moments(blocks, blocks.nodes)
    b = blocks.weights @ mu2
    s = blocks.nodes.sum(1)
    kappa = float(blocks.weights @ (s / (1 + s)))
    return blocks.zeta2 * (kappa - float(b @ best.gamma)), blocks.zeta2 * (kappa + float(np.abs(b * best.gamma).sum()))


@SETTINGS
@given(task_law, st.one_of(st.none(), context_length))
def test_the_lsa_never_beats_bayes_because_its_normal_equations_say_so(law, n):
    """The gap is computed as an average of squares (so ≥ 0 by construction); its other form,
    E[ζ²](κ − bᵀγ*) from the normal equations, is a difference that is ≥ 0 only because the
    moments κ, b, A belong to one law (Cauchy–Schwarz).  The two agree, to 1e-12 of the scale of
    the difference: the dot products over ≤ ~10³ nodes (≤ 10³u) and the first-order residual
    bᵀδγ of the solve (≲ cond·u, cond ≤ 10³ after Jacobi scaling)."""
    best = lsa.best_lsa(law, n)
    other, scale = _normal_equation_gap(law, best)
    assert other >= -1e-12 * scale
    assert best.gap == pytest.approx(other, abs=1e-12 * scale)


@SETTINGS
@given(dims, dims, squared_norms, zeta_laws)
def test_the_gap_vanishes_on_point_laws(d1, d2, c, zeta):
    law = TaskLaw(d1=d1, d2=d2, s=Point(c), zeta=zeta)
    assert lsa.best_lsa(law).gap <= 1e-24 * zeta.second_moment()


@SETTINGS
@given(dims, dims, uniform_laws() | beta_laws(), zeta_laws)
def test_the_gap_is_positive_on_continuous_laws(d1, d2, s, zeta):
    law = TaskLaw(d1=d1, d2=d2, s=s, zeta=zeta)
    assert lsa.best_lsa(law).gap > 1e-12


@SETTINGS
@given(task_law)
def test_the_best_lsa_is_no_worse_than_predicting_zero(law):
    """Γ = 0 is an LSA with risk E[ζ²]."""
    assert lsa.best_lsa(law).lsa_risk <= law.zeta.second_moment() * (1 + 1e-12)


@SETTINGS
@given(laws_with_signal)
def test_the_lca_at_depth_one_with_its_best_alpha_is_no_better_than_the_best_lsa(law):
    a1 = lca.alpha_T(law, 1)
    assert lca.excess_risk(law, 1, a1) >= lsa.best_lsa(law).gap * (1 - 1e-9) - 1e-15


@SETTINGS
@given(isotropic_laws_with_signal)
def test_for_isotropic_laws_the_depth_one_lca_is_the_best_lsa(law):
    """Γ = γI by rotation invariance, and the T = 1 LCA is exactly ŷ = α ζ mᵀx_q."""
    best = lsa.best_lsa(law)
    a1 = lca.alpha_T(law, 1)
    assert best.gamma_scalar == pytest.approx(a1, rel=1e-9)
    assert lca.excess_risk(law, 1, a1) == pytest.approx(best.gap, rel=1e-8, abs=1e-15)


@SETTINGS
@given(laws_with_signal, context_length, context_length)
def test_the_gap_falls_with_the_context_length(law, n1, n2):
    lo, hi = sorted((n1, n2))
    g_lo, g_hi, g_inf = (lsa.best_lsa(law, n).gap for n in (lo, hi, None))
    assert g_lo >= g_hi * (1 - 1e-12) and g_hi >= g_inf * (1 - 1e-12)


@SETTINGS
@given(task_law, st.one_of(st.none(), context_length), st.sampled_from([1e-2, -1e-2]), st.data())
def test_the_best_gamma_is_a_minimum(law, n, eps, data):
    """Moving any determined coordinate of γ* (one with E[m_i²] > 0) raises the excess."""
    best = lsa.best_lsa(law, n)
    determined = [i for i in range(law.d) if i not in best.undetermined]
    i = data.draw(st.sampled_from(determined) if determined else st.nothing(), label="coordinate")
    g = best.gamma.copy()
    g[i] += eps
    assert lsa.lsa_excess(law, g, n) >= best.gap


@SETTINGS
@given(task_law, st.floats(0.1, 10.0))
def test_scaling_zeta_scales_the_gap_and_leaves_gamma(law, c):
    scaled = TaskLaw(d1=law.d1, d2=law.d2, s=law.s, sv=law.sv, sr=law.sr, zeta=ZetaLaw("const", c),
                     anisotropy_v=law.anisotropy_v)
    base = TaskLaw(d1=law.d1, d2=law.d2, s=law.s, sv=law.sv, sr=law.sr, zeta=ZetaLaw("const", 1.0),
                   anisotropy_v=law.anisotropy_v)
    b0, b1 = lsa.best_lsa(base), lsa.best_lsa(scaled)
    np.testing.assert_allclose(b1.gamma, b0.gamma, rtol=1e-12, atol=1e-15)
    assert b1.gap == pytest.approx(c**2 * b0.gap, rel=1e-10, abs=1e-28)


@SETTINGS
@given(isotropic_laws_with_signal)
def test_isotropic_gap_is_the_closed_form(law):
    """E[ζ²](κ − μ1²/(μ1 + μ2)) from ``theory.lsa.isotropic_best_gamma``, moments by the same rule."""
    r = law.s.rule()
    mu1, mu2 = r.expect(lambda s: s), r.expect(lambda s: s**2)
    kappa = r.expect(lambda s: s / (1 + s))
    want = lsa.isotropic_gap_exact(mu1, mu2, kappa, law.zeta.second_moment())
    # the closed form subtracts two O(E ζ²) numbers: its own rounding is ~1e-16·E[ζ²]
    assert lsa.best_lsa(law).gap == pytest.approx(want, rel=1e-10, abs=1e-13 * law.zeta.second_moment())


@SETTINGS
@given(st.one_of(
    st.builds(lambda d1, d2, s, z: TaskLaw(d1=d1, d2=d2, s=s, zeta=z), dims, dims, discrete_laws(grid_norms), zeta_laws),
    st.builds(lambda d1, d2, a, b, z: TaskLaw(d1=d1, d2=d2, sv=a, sr=b, zeta=z),
              dims, dims, grid_atoms_or_points, grid_atoms_or_points, zeta_laws)))
def test_the_gap_vanishes_exactly_when_one_over_one_plus_s_is_constant_where_each_block_lives(law):
    """Discrete laws (exact sums): gap = 0 iff s is a.s. constant on {S_b > 0} for every block b —
    e.g. s ∈ {0, c} has gap 0 although s is not a.s. constant."""
    from mmicl.proofs.claims.lsa import zero_gap_expected

    gap = lsa.best_lsa(law).gap
    if zero_gap_expected(law):
        assert gap <= 1e-24 * law.zeta.second_moment()
    else:
        assert gap > 1e-14
