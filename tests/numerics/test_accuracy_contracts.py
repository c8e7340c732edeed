"""Accuracy contracts over the whole domain (issue 18): every call either refuses in one line or
returns a value that an independent evaluation confirms to the accuracy its docstring states.

Inputs are drawn, not named: laws near float64's edges (``uniform(a, a(1 + 10^-k))``,
``uniform(0, 10^-k)``, k ≤ 12) beside the ordinary laws of ``strategies``, depths up to a modest
cap in every form a caller may pass (int, np.int64, np.int32, an integral np.float32, a 0-d
array), and parameters in numpy types.  The references are mpmath sums over the *same* quadrature
nodes and weights (``law.rule(depth=T)``, as ``numerics.lca._rule``), so what is checked is the
float64 arithmetic, not the quadrature; ``alpha_T_mp`` (its own quadrature and root finder) is
the independent check of α_T on a few examples.

Refusals come before any work: with ``lca._rule`` (the first costly step of every function here)
replaced by one that raises, a call that refuses still refuses with the same message.
"""
from __future__ import annotations

import math
import subprocess
import sys

import mpmath as mp
import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from mmicl.numerics import lca
from mmicl.numerics.laws.scalar import Beta
from mmicl.numerics.laws.task import TaskLaw, ZetaLaw

from mmicl.testing import (beta_laws, intervals, plain_scalar_laws as scalar_laws, uniform_laws,
                          zeta_laws as zeta_law_strategy)

from test_mpmath_crosscheck import BRENT_RTOL, BRENT_XTOL, MP_TOLERANCE, U, float64_tolerance

zeta_laws = zeta_law_strategy()

MAX_MESSAGE = 300

# --------------------------------------------------------------------------- numbers near float64's edges

edge_exponents = st.integers(min_value=0, max_value=12)
"""k in 10^-k: relative widths down to 1e-12 (below float64's resolution of 1 + s at most depths)."""
edge_lows = st.floats(min_value=1e-3, max_value=5.0)


@st.composite
def narrow_intervals(draw):
    """``(a, a(1 + 10^-k))``: a support far narrower than its position."""
    a = draw(edge_lows)
    return a, a * (1 + 10.0 ** -draw(edge_exponents))


@st.composite
def tiny_intervals(draw):
    """``(0, 10^-k)``: squared norms so small that 1 + s rounds towards 1."""
    return 0.0, 10.0 ** -draw(edge_exponents)


edge_intervals = st.one_of(narrow_intervals(), tiny_intervals(), intervals())
edge_scalar_laws = st.one_of(uniform_laws(edge_intervals), beta_laws(edge_intervals), scalar_laws)
"""A Beta piece (uniform or not) on an edge or ordinary support, or any law of ``strategies``."""


zeta_scales = st.tuples(st.sampled_from([1.0, -1.0]), st.integers(-15, 15)).map(lambda sk: sk[0] * 10.0 ** sk[1])
"""ζ = const(±10^k) with E[ζ²] inside the range the laws accept ([1e-30, 1e30])."""
edge_zeta_laws = st.one_of(zeta_laws, zeta_scales.map(lambda c: ZetaLaw("const", c)))


@st.composite
def edge_task_laws(draw):
    """A task law of s from ``edge_scalar_laws`` (possibly with no signal: then a refusal) and ζ
    from ``edge_zeta_laws``."""
    return TaskLaw(s=draw(edge_scalar_laws), zeta=draw(edge_zeta_laws))


@given(sign=st.sampled_from([1.0, -1.0]), k=st.integers(-400, 400))
def test_a_zeta_constant_is_a_law_or_a_one_line_refusal(sign, k):
    """``const(±10^k)`` for any k float64 can write (and 0, inf beyond): a ζ law or a one-line
    ``ValueError`` (``LawError``), never an ``OverflowError``."""
    c = sign * 10.0 ** k if -324 < k < 309 else (0.0 if k < 0 else sign * math.inf)
    outcome(ZetaLaw, "const", c)


# --------------------------------------------------------------------------- depths and parameters

depth_kinds = st.sampled_from([int, np.int64, np.int32, np.float32, np.array])
"""The forms of an integral depth a caller may pass (np.float32 holds these depths exactly)."""


def depths(cap: int):
    """Small depths often, any depth up to ``cap`` sometimes."""
    return st.one_of(st.integers(1, 12), st.integers(1, cap))


real_kinds = st.sampled_from([float, np.float64, np.array])
"""Forms of a real parameter that hold a float64 exactly."""


# --------------------------------------------------------------------------- outcomes

class _WorkStarted(Exception):
    """Raised by the replaced ``lca._rule``: the function got past its refusals."""


def outcome(fn, *args, **kwargs):
    """``("value", v)`` or ``("refused", message)``; a refusal must be one short line."""
    try:
        v = fn(*args, **kwargs)
        event("answered")
        return "value", v
    except ValueError as e:
        msg = str(e)
        event(f"refused: {msg[:60]}")
        assert "\n" not in msg and len(msg) < MAX_MESSAGE, f"refusal not one short line: {msg!r}"
        return "refused", msg


def refuses_before_work(fn, *args):
    """The refusal (if any) of ``fn(*args)`` with ``lca._rule`` raising: what it refuses then is
    refused before any quadrature rule is built."""
    def no_work(*a, **k):
        raise _WorkStarted

    with pytest.MonkeyPatch.context() as m:
        m.setattr(lca, "_rule", no_work)
        try:
            return outcome(fn, *args)
        except _WorkStarted:
            return "work", None


# --------------------------------------------------------------------------- mpmath references at the same nodes

def _dps(law: TaskLaw) -> int:
    """Digits for ``α(1+s) − 1`` in mpmath: 40, plus those the spread of 1 + s cancels."""
    rho = law.spread() or 1.0
    return 40 + max(0, math.ceil(-math.log10(rho)))


def _nodes(law: TaskLaw, T: int):
    rule = law.rule(depth=T)
    return rule.nodes, rule.weights


def excess_mp(law: TaskLaw, T: int, alpha: float) -> tuple[mp.mpf, float]:
    """``Σ_k w_k s_k/(1+s_k) (1 − α(1+s_k))^{2T}`` exactly (to 40 digits) at the same nodes and
    weights (the weights carry E[ζ²]), and the relative rounding bound of the float64 evaluation
    derived from ``lca._one_parameter_sums``: per node, r = α(1+s) − 1 to 4u(|α|(1+s) + 1)
    absolutely (relative 2T times that over |r| after the power), the log-scaled exponent
    n(log|r| − ℓ_max) to u·n(|log|r|| + |ℓ_max|) absolutely, 10u for A(s), the exp and the
    product; N·u for the weighted sum of N non-negative terms."""
    s, w = _nodes(law, T)
    n = 2 * T
    lo, hi = law.signal_bounds()
    with mp.workdps(_dps(law)):
        a = mp.mpf(alpha)
        ends = [abs(a * (1 + mp.mpf(x)) - 1) for x in (lo, hi)]
        lmax = float(mp.log(max(ends))) if max(ends) > 0 else 0.0
        total, weighted_rel = mp.mpf(0), mp.mpf(0)
        for sk, wk in zip(s, w):
            sk, wk = mp.mpf(sk), mp.mpf(wk)
            if sk == 0 or wk == 0:
                continue
            r = a * (1 + sk) - 1
            t = wk * sk / (1 + sk) * r ** n
            total += t
            if r == 0:
                continue
            rel = (n * 4 * U * (abs(a) * (1 + sk) + 1) / abs(r)
                   + U * n * (abs(float(mp.log(abs(r)))) + abs(lmax)) + 10 * U)
            weighted_rel += t * rel
        rel = float(weighted_rel / total) + (len(s) + 2) * U if total > 0 else math.inf
        return +total, rel


def derivative_sign_mp(law: TaskLaw, T: int, alpha: float) -> int:
    """The sign of ``dL/dα ∝ Σ_k w_k s_k (α(1+s_k) − 1)^{2T−1}`` at the same nodes, in mpmath."""
    s, w = _nodes(law, T)
    with mp.workdps(_dps(law) + 20):
        a = mp.mpf(alpha)
        d = mp.fsum(mp.mpf(wk) * mp.mpf(sk) * (a * (1 + mp.mpf(sk)) - 1) ** (2 * T - 1) for sk, wk in zip(s, w))
        return int(mp.sign(d))


def bayes_excess_at_zero_mp(law: TaskLaw, T: int) -> mp.mpf:
    """The exact excess of the zero predictor (α = 0) at the same nodes: ``Σ_k w_k s_k/(1+s_k)``."""
    s, w = _nodes(law, T)
    with mp.workdps(40):
        return mp.fsum(mp.mpf(wk) * mp.mpf(sk) / (1 + mp.mpf(sk)) for sk, wk in zip(s, w))


# --------------------------------------------------------------------------- α_T


@given(law=edge_task_laws(), T=depths(10**4), kind=depth_kinds)
@settings(suppress_health_check=[HealthCheck.too_slow])
def test_alpha_T_is_a_sign_change_of_the_exact_derivative_at_its_stated_tolerance(law, T, kind):
    """For every law and depth, ``alpha_T`` refuses in one line (before any work) or returns a
    point in the bracket [1/(1+s_hi), 1/(1+s_lo)] where the exact derivative (mpmath, same nodes)
    is ≤ 0 at α − tol and ≥ 0 at α + tol, tol = xtol + rtol·α + 8u as the docstring states; the
    depth's numpy form does not change the answer."""
    got = outcome(lca.alpha_T, law, kind(T))
    assert got == outcome(lca.alpha_T, law, T)
    if got[0] == "refused":
        assert refuses_before_work(lca.alpha_T, law, kind(T)) == got
        return
    alpha = got[1]
    assert isinstance(alpha, float) and math.isfinite(alpha)
    lo, hi = law.signal_bounds()
    assert 1.0 / (1.0 + hi) <= alpha <= 1.0 / (1.0 + lo)
    if lo == hi:
        return
    tol = BRENT_XTOL + BRENT_RTOL * abs(alpha) + 8 * U
    assert derivative_sign_mp(law, T, alpha - tol) <= 0, (alpha, tol)
    assert derivative_sign_mp(law, T, alpha + tol) >= 0, (alpha, tol)


@given(law=edge_task_laws(), T=st.integers(1, 200))
@settings(max_examples=8, suppress_health_check=[HealthCheck.too_slow])
def test_alpha_T_agrees_with_alpha_T_mp(law, T):
    """Where ``alpha_T`` answers (T ≤ 200), ``alpha_T_mp`` (mpmath quadrature and root finder)
    is within the float64 tolerance (Brent's xtol + rtol·α, 8u of rounding, the Jacobi weights'
    error) plus mpmath's own."""
    got = outcome(lca.alpha_T, law, T)
    if got[0] == "refused":
        return
    a64 = got[1]
    amp = lca.alpha_T_mp(law, T)
    assert abs(float(amp) - a64) <= float64_tolerance(law.s, T, a64) + MP_TOLERANCE


# --------------------------------------------------------------------------- the one-parameter excess


@st.composite
def alphas_for(draw, law: TaskLaw):
    """None (the minimiser), or α in and beyond the stable interval (0, 2/(1+s_hi))."""
    if draw(st.booleans()) or law.signal_bounds() is None:
        return None
    hi = law.signal_bounds()[1]
    return draw(st.floats(-0.5, 1.5)) * 2.0 / (1.0 + hi)


@given(data=st.data(), law=edge_task_laws(), T=depths(10**4), kind=depth_kinds, akind=real_kinds)
@settings(suppress_health_check=[HealthCheck.too_slow])
def test_excess_risk_scaled_agrees_with_the_mp_sum_at_the_same_nodes(data, law, T, kind, akind):
    """``excess_risk_scaled(law, T, α)`` refuses in one line (before any work) or equals the
    mpmath sum Σ w·s/(1+s)·(1 − α(1+s))^{2T} at the same nodes within its rounding bound (derived
    from the code; see ``excess_mp``); never a silent 0 where that bound resolves the value."""
    alpha = data.draw(alphas_for(law))
    args = (law, kind(T)) if alpha is None else (law, kind(T), akind(alpha))
    got = outcome(lca.excess_risk_scaled, *args)
    if got[0] == "refused":
        assert refuses_before_work(lca.excess_risk_scaled, *args) == got
        return
    v = got[1]
    a = lca.alpha_T(law, T) if alpha is None else alpha
    exact, rel = excess_mp(law, T, a)
    if exact > 0 and rel < 0.5:
        assert v.mantissa != 0, f"a silent 0: the excess is 10^{float(mp.log10(exact)):.1f}"
    if rel >= 0.5:
        event("the rounding bound does not resolve the value")
    else:
        assert abs(v.mp - exact) <= 2 * rel * exact, (v, exact, rel)
        assert abs(v.log10 - float(mp.log10(exact))) <= -math.log10(1 - 2 * rel) + 1e-12


# --------------------------------------------------------------------------- the two-parameter loss at α = 0


betas = st.one_of(st.floats(-10.0, 10.0), st.sampled_from([0.0, -1.0, 1.0, -5e-324, 1e-300]))


@given(law=edge_task_laws(), T=depths(100), kind=depth_kinds, beta=betas, bkind=real_kinds,
       coordinates=st.sampled_from(["alpha-beta", "gamma-beta"]))
@settings(suppress_health_check=[HealthCheck.too_slow])
def test_two_parameter_excess_at_alpha_zero_is_the_zero_predictors(law, T, kind, beta, bkind, coordinates):
    """At α = 0 the predictor is 0, so for every β the two-parameter excess is Σ w·s/(1+s) at the
    nodes: ``TwoParameterLoss(law, T).terms_and_bounds`` returns it within the bound it returns
    (in (γ, β) coordinates at γ = β), or the constructor refuses in one line before any work."""
    got = outcome(lca.TwoParameterLoss, law, kind(T), coordinates)
    if got[0] == "refused":
        assert refuses_before_work(lca.TwoParameterLoss, law, kind(T), coordinates) == got
        return
    loss = got[1]
    p1 = 0.0 if coordinates == "alpha-beta" else beta
    exact = bayes_excess_at_zero_mp(law, T)
    for full in (True, False):
        terms, bounds = loss.terms_and_bounds(bkind(p1), bkind(beta), full=full)
        assert math.isfinite(terms[0]) and math.isfinite(bounds[0]), (terms[0], bounds[0])
        with mp.workdps(40):
            assert abs(mp.mpf(terms[0]) - exact) <= mp.mpf(bounds[0]), (terms[0], exact, bounds[0])


# --------------------------------------------------------------------------- minimise_two: finishes, refuses first


@given(law=edge_task_laws(), T=st.one_of(st.integers(-2, 3), st.integers(lca.MAX_DEPTH_TWO - 1, lca.MAX_DEPTH_TWO + 2),
                                          st.integers(1, 10**7)),
       kind=depth_kinds)
def test_minimise_two_refuses_before_any_work(law, T, kind):
    """``minimise_two`` either gets to its work (the quadrature rule) or refuses in one line,
    and a depth beyond its limit, T < 1 or T = 1 (no unique minimiser) is always a refusal."""
    what = refuses_before_work(lca.minimise_two, law, kind(T) if T > 0 else T)
    if T < 2 or T > lca.MAX_DEPTH_TWO:
        assert what[0] == "refused"


_MINIMISE = """
import math, sys
from mmicl.numerics import lca
try:
    a, b = lca.minimise_two(sys.argv[1], int(sys.argv[2]))
except ValueError as e:
    m = str(e); assert "\\n" not in m and len(m) < {limit}, m
    print("refused")
else:
    assert math.isfinite(a) and math.isfinite(b), (a, b)
    print("value", a, b)
""".format(limit=MAX_MESSAGE)


@pytest.mark.slow
@given(law=edge_task_laws(), T=st.integers(2, 30))
@settings(max_examples=4)
def test_minimise_two_finishes(law, T):
    """``minimise_two`` finishes within 60 s (in a subprocess) with a finite pair or a one-line
    refusal, on every law and depth."""
    proc = subprocess.run([sys.executable, "-c", _MINIMISE, law.spec(), str(T)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
