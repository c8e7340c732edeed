"""The symbolic derivations against direct d×d matrix computations (no sampling)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from mmicl.numerics import lca
from mmicl.numerics.lca_matrix import matrix_excess, query_matrix
from mmicl.numerics.laws.scalar import Point
from mmicl.numerics.laws.task import TaskLaw
from mmicl.theory import lca as th
from mmicl.theory.compile import compiled, source_of
from mmicl.theory.model import bayes_predictor, s, zeta

# float64 rounding of ≤ 12 products of d×d matrices and of the O(ζ²) cancellation risk − Bayes
# in the matrix computation: relative 1e-9 plus absolute 1e-14·ζ²(1+s)².
REL, ABS = 1e-9, 1e-14


def random_task(rng, d):
    m = rng.standard_normal(d)
    return m * math.sqrt(rng.uniform(0.05, 4.0)) / np.linalg.norm(m)


def test_bayes_predictor_is_zeta_lambda_inverse_m():
    """The derived Bayes weight k (w = k m) and risk equal ζΛ⁻¹m and ζ²(1 − mᵀΛ⁻¹m) for random m."""
    bp = bayes_predictor()
    rng = np.random.default_rng(1)
    for d in (1, 2, 5):
        m, z = random_task(rng, d), float(rng.standard_normal())
        lam = np.eye(d) + np.outer(m, m)
        w = z * np.linalg.solve(lam, m)
        k = float(bp.weight_along_m.subs({s: m @ m, zeta: z}))
        np.testing.assert_allclose(k * m, w, rtol=1e-12)
        risk = float(bp.risk.subs({s: m @ m, zeta: z}))
        assert risk == pytest.approx(z**2 * (1 - m @ np.linalg.solve(lam, m)), rel=1e-12)


@given(seed=st.integers(0, 2**32 - 1), d1=st.integers(1, 4), d2=st.integers(1, 4), T=st.integers(1, 12))
def test_one_parameter_closed_form_matches_matrices(seed, d1, d2, T):
    """For random α, s, T, d1, d2, the SymPy excess risk equals the d×d matrix recurrence's."""
    rng = np.random.default_rng(seed)
    d = d1 + d2
    m, z = random_task(rng, d), float(rng.standard_normal())
    sv = float(m @ m)
    a = float(rng.uniform(0.0, 2.0 / (1 + sv)))
    direct = matrix_excess(m, z, a * np.eye(d), -a * np.eye(d), T)
    closed = z**2 * lca.excess_risk(TaskLaw(s=Point(sv), d1=d1, d2=d2), T, a)
    assert abs(closed - direct) <= REL * abs(direct) + ABS * z**2 * (1 + sv) ** 2


@given(seed=st.integers(0, 2**32 - 1), d=st.integers(2, 6), T=st.integers(1, 12))
def test_two_parameter_jets_match_matrices(seed, d, T):
    """The two-parameter excess from the derived layer jets equals the matrix recurrence's."""
    rng = np.random.default_rng(seed)
    m, z = random_task(rng, d), float(rng.standard_normal())
    sv = float(m @ m)
    a, b = float(rng.uniform(-0.5, 1.5)), float(rng.uniform(-2.0 / (1 + sv), 0.3))
    direct = matrix_excess(m, z, a * np.eye(d), b * np.eye(d), T)
    closed = z**2 * lca.excess_risk(TaskLaw(s=Point(sv), d1=1, d2=d - 1), T, a, b)
    assert abs(closed - direct) <= REL * abs(direct) + ABS * z**2 * (1 + sv) ** 2 * max(1.0, abs(direct))


def test_symbolic_T_closed_form_equals_T_fold_recurrence():
    """rsolve's P_T for symbolic T, at T = 1..6, equals the recurrence run T times."""
    for w_skip, w_value in ((th.alpha, -th.alpha), (th.alpha, th.beta)):
        closed = th.query_factor(w_skip, w_value)
        for T in range(1, 7):
            assert sp.simplify(closed.subs(th.T, T) - th.query_factor_at_depth(w_skip, w_value, T)) == 0


def test_query_factor_is_the_eigenvalue_of_the_query_matrix():
    """P_T(λ) is the eigenvalue of the matrix P_T on span{m} (what the readout sees)."""
    rng = np.random.default_rng(3)
    m = random_task(rng, 4)
    a, b, T = 0.2, -0.3, 7
    P = query_matrix(m, a * np.eye(4), b * np.eye(4), T)
    factor = float(th.query_factor(th.alpha, th.beta).subs({th.alpha: a, th.beta: b, th.T: T, s: m @ m}))
    np.testing.assert_allclose(P @ m, factor * m, rtol=1e-12)


def test_one_parameter_excess_is_A_times_r_power_2T():
    """depth_factorisation returns an amplitude free of T that reproduces the expression."""
    e = th.one_parameter().excess_per_zeta2
    base = th.alpha * (1 + s) - 1
    amp = th.depth_factorisation(e, base, 2 * th.T)
    assert not amp.has(th.T)
    for vals in ({th.alpha: 0.3, s: 1.7, th.T: 4}, {th.alpha: 0.1, s: 0.2, th.T: 9}):
        assert float((amp * base ** (2 * th.T)).subs(vals)) == pytest.approx(float(e.subs(vals)), rel=1e-13)


def test_no_skip_model_predicts_zero():
    """W^S = 0 with F⁰ = 0: the query factor is 0 at every depth, the excess is E[ζ² s/(1+s)]."""
    ns = th.no_skip()
    assert sp.simplify(ns.factor) == 0
    assert sp.simplify(ns.excess_per_zeta2 - s / (1 + s)) == 0


def test_alpha_star_is_the_minimax_point():
    expr, (lo, hi) = th.alpha_star_expr()
    assert sp.simplify(expr - 2 / (2 + lo + hi)) == 0


def test_compiled_functions_are_cached_as_source(tmp_path, monkeypatch):
    """A second process-level load reads the source text and does not call the builder."""
    import mmicl.theory.compile as tc

    monkeypatch.setenv("MMICL_CACHE", str(tmp_path))
    calls = []

    def build():
        calls.append(1)
        x = sp.Symbol("x")
        return [x**2 + 1, sp.sin(x)], [x]

    f = compiled("test_fn", build)
    assert f(2.0) == (5.0, math.sin(2.0))
    files = list(tmp_path.glob("test_fn__numpy__*.py"))
    assert len(files) == 1 and "def f(x)" in files[0].read_text()
    tc._LOADED.clear()
    g = compiled("test_fn", build)
    assert g(3.0)[0] == 10.0 and len(calls) == 1
    tc._LOADED.clear()


def test_mpmath_source_uses_mpmath():
    x = sp.Symbol("x")
    assert "mpmath.sin" in source_of("f", [sp.sin(x)], [x], "mpmath")


def test_readouts_by_matrices():
    """The readout convention (docs/model.md): keys raw / query evolved equals keys evolved / query raw in the
    large-context limit; evolving both squares the factor (a different model, not the same limit).
    Checked against d×d matrices: F^T_i = P x_i for every column."""
    rng = np.random.default_rng(7)
    d, a, T = 4, 0.25, 6
    m = random_task(rng, d)
    P = query_matrix(m, a * np.eye(d), -a * np.eye(d), T)
    # (1/n) Σ y_i k_iᵀ q → E[y kᵀ] q with y = ζu: E[y x] = ζ m, E[y P x] = ζ P m
    raw_keys = m @ P            # ζ mᵀ P x_q  (ζ dropped on both sides)
    evolved_keys = (P @ m)      # ζ (P m)ᵀ x_q
    both = (P @ m) @ P          # ζ (P m)ᵀ P x_q
    factor = th.query_factor(th.alpha, -th.alpha)
    vals = {th.alpha: a, th.T: T, s: m @ m}
    for kind, vec in (("raw-keys", raw_keys), ("evolved-keys", evolved_keys), ("evolved-keys-and-query", both)):
        k = float(th.readout_factor(kind, factor).subs(vals))
        np.testing.assert_allclose(vec, k * m, rtol=1e-12, err_msg=kind)
    assert not np.allclose(raw_keys, both)
    with pytest.raises(ValueError, match="unknown readout"):
        th.readout_factor("softmax", factor)


def test_two_parameter_closed_form_for_symbolic_T_matches_matrices():
    """rsolve's closed form (symbolic T, removable pole at β = 0) against the d×d recurrence."""
    e = th.two_parameter().excess_per_zeta2
    rng = np.random.default_rng(11)
    for _ in range(5):
        m, z = random_task(rng, 3), float(rng.standard_normal())
        sv, T = float(m @ m), int(rng.integers(1, 9))
        a, b = float(rng.uniform(0.05, 1.0)), float(rng.uniform(-1.5 / (1 + sv), -0.05))
        closed = z**2 * float(e.subs({th.alpha: a, th.beta: b, th.T: T, s: sv}))
        direct = matrix_excess(m, z, a * np.eye(3), b * np.eye(3), T)
        assert abs(closed - direct) <= REL * abs(direct) + ABS * z**2 * (1 + sv) ** 2


# -- formulas the numerics compile from theory/ ---------------------------------------------------


@pytest.mark.parametrize("d", [1, 3])
def test_invariant_excess_is_the_gaussian_moment_derivation(d):
    """The per-prompt LSA excess in rotation invariants (what the numerics compile) equals the
    excess derived from the token moments by Isserlis' rule, entry by entry (d = 2 is checked by
    tests/numerics/test_lsa.py and by the thm4.1 claim)."""
    from mmicl.theory import lsa as tl

    r = tl.reduced_risk(d)
    assert sp.simplify(r["excess"] - tl.reduced_excess_closed_form(d)) == 0


def _direct_lsa_excess(G, m, z, n):
    """E[(x_qᵀΓh − y_q)²] − E[(ζ mᵀΛ⁻¹x_q − y_q)²] by matrices: E[x_q x_qᵀ] = Λ = I + mmᵀ,
    E[h hᵀ] = ζ² mmᵀ + ζ²(Λ + mmᵀ)/n, E[y_q x_q] = ζ m, and the Bayes risk ζ²(1 − mᵀΛ⁻¹m)
    with Λ⁻¹m by numpy.linalg.solve."""
    d = m.size
    lam = np.eye(d) + np.outer(m, m)
    ehh = z**2 * np.outer(m, m) + (0.0 if n is None else z**2 * (lam + np.outer(m, m)) / n)
    risk = np.trace(G.T @ lam @ G @ ehh) - 2 * z**2 * m @ G @ m + z**2
    bayes = z**2 * (1 - m @ np.linalg.solve(lam, m))
    return risk - bayes


def test_compiled_lsa_excess_equals_matrices():
    """numerics.lsa.per_prompt_excess (theory's invariant form, compiled) against a direct d×d
    computation, for random Γ, m, ζ, n and d up to 6, n = ∞ included."""
    from mmicl.numerics.lsa import per_prompt_excess

    rng = np.random.default_rng(5)
    for _ in range(40):
        d = int(rng.integers(1, 7))
        G, m, z = rng.normal(size=(d, d)), random_task(rng, d), float(rng.standard_normal())
        n = None if rng.random() < 0.3 else int(rng.integers(1, 100))
        direct = _direct_lsa_excess(G, m, z, n)
        got = per_prompt_excess(G, m[None, :], np.array([z]), n)[0]
        assert got == pytest.approx(direct, rel=1e-10, abs=1e-13 * z**2 * (1 + m @ m) ** 3)


def test_compiled_lsa_excess_of_the_bayes_weights_is_zero():
    """Γ = I/(1 + s) is the Bayes predictor along m: the excess is exactly 0 in the limit (the
    residual is formed before it is squared), and the 1/n term alone at finite n."""
    from mmicl.numerics.lsa import per_prompt_excess

    rng = np.random.default_rng(6)
    m = random_task(rng, 4)
    G = np.eye(4) / (1 + m @ m)
    assert per_prompt_excess(G, m[None, :], np.array([1.3]), None)[0] <= 1e-30
    assert per_prompt_excess(G, m[None, :], np.array([1.3]), 7)[0] == pytest.approx(
        _direct_lsa_excess(G, m, 1.3, 7), rel=1e-12)


def test_operators_target_prints_no_module_and_runs_on_tensors(tmp_path, monkeypatch):
    import torch

    import mmicl.theory.compile as tc

    monkeypatch.setenv("MMICL_CACHE", str(tmp_path))
    x, y = sp.symbols("x y")
    src = source_of("f", [x**2 / (1 + y) - sp.Rational(1, 2) * y], [x, y], "operators")
    assert "import" not in src and "numpy" not in src
    f = compiled("test_operators", lambda: ([x**2 / (1 + y) - sp.Rational(1, 2) * y], [x, y]), "operators")
    t = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    (out,) = f(t, torch.tensor(3.0, dtype=torch.float64))
    out.sum().backward()
    assert torch.allclose(out.detach(), torch.tensor([0.25 - 1.5, 1.0 - 1.5], dtype=torch.float64))
    assert torch.allclose(t.grad, 2 * t.detach() / 4)
    tc._LOADED.clear()


def test_operators_target_refuses_functions():
    x = sp.Symbol("x")
    for expr in (sp.sqrt(x), sp.exp(x), x ** sp.Rational(1, 3)):
        with pytest.raises(ValueError, match="operators"):
            source_of("f", [expr], [x], "operators")
    with pytest.raises(ValueError, match="module must be one of"):
        source_of("f", [x], [x], "torch")


@pytest.mark.subprocess
def test_theory_does_not_import_torch():
    """theory/ derives and compiles (the operators target included) without loading torch."""
    import subprocess
    import sys

    code = ("import sys, sympy as sp\n"
            "from mmicl.theory import compile, lca, lsa, model\n"
            "x = sp.Symbol('x')\n"
            "compile.source_of('f', [x / (1 + x)], [x], 'operators')\n"
            "lsa.per_prompt_excess(); model.bayes_predictor().prediction\n"
            "assert 'torch' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True)
