"""How α_T approaches α* and how fast the excess falls as the depth T → ∞, for a given law.

The expansions are derived in ``theory.asymptotics`` (endpoint analysis of the stationarity
condition); here each end of the law's support is classified and measured (``ends``), the derived
coefficients are evaluated (``alpha_expansion``, ``excess_expansion``), and both are checked against
the computed α_T and excess (``check_alpha``, ``check_excess``).

End classes (u: distance to the end; the law's weight in the stationarity condition is ``s·f(s)``):

- ``atom``: an atom at the end (b = 0);
- ``power``: a density ``∝ u^{a−1}`` there; a = 1 is a density finite and non-zero at the end,
  a > 1 one that vanishes, a < 1 one that blows up.  The weight's exponent is b = a, or a + 1 at
  s = 0, where the factor s vanishes too.

With equal exponents at the two ends, ``α* − α_T = c/T + d/T² + O(T⁻³)``; with different
exponents a logarithm enters: ``α* − α_T = (a·log T + c)/T + o(1/T)``.  The excess at α_T falls like
``E[ζ²]·L·ρ^{2T}·(2T)^{−p}``: ``ρ²`` per layer, with ``ρ = (λ_hi − λ_lo)/(λ_hi + λ_lo)``, λ = 1 + s.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from functools import lru_cache
from fractions import Fraction

import numpy as np
import sympy as sp

from mmicl.theory import asymptotics as th

from mmicl.numerics.laws.language import takes_law
from .lca import alpha_star, alpha_T, excess_risk_scaled
from mmicl.numerics.laws.scalar import Beta, Discrete, LawError, Mixture, Point, ScalarLaw, SumLaw
from mmicl.numerics.laws.task import TaskLaw
from .validate import MAX_DEPTH_ONE, MAX_DEPTH_TWO, check_depth
from mmicl.numerics.lca import minimise_two_residual

__all__ = ["End", "ends", "AlphaExpansion", "alpha_expansion", "ExcessExpansion", "excess_expansion",
           "Agreement", "check_alpha", "check_excess", "richardson", "worst_case", "minimax_alpha"]


@dataclass(frozen=True)
class End:
    """One end of the support, as the stationarity condition sees it: an atom of weight ``C0``
    (b = 0), or a weight ``u^{b−1}(C0 + C1·u + …)``; ``C1`` is None where it is not derived."""

    value: float
    kind: str
    b: float
    C0: float
    C1: float | None

    @property
    def K(self) -> float:
        """The end's strength in the leading balance: C0 for an atom, C0·Γ(b) for a power."""
        return self.C0 if self.kind == "atom" else self.C0 * math.gamma(self.b)

    @property
    def description(self) -> str:
        if self.kind == "atom":
            return "an atom"
        a = self.b - (1 if self.value == 0 else 0)
        if a == 1:
            return "a density finite and non-zero"
        return f"a density {'vanishing' if a > 1 else 'blowing up'} like u^{a - 1:g}"


# ---- the local form of a law at its ends --------------------------------------------------------
@dataclass(frozen=True)
class _Local:
    """The law of s near one end: an atom of probability ``p``, or a density ``c·u^{a−1}``."""

    kind: str
    a: float
    c: float


def _exact(x: float) -> sp.Rational:
    return sp.Rational(Fraction(repr(float(x))))


def _beta_weight(law: Beta, end: str) -> th.LocalWeight:
    w = th.beta_local_weight(*(_exact(v) for v in (law.p, law.q, law.a, law.b)), end)
    return th.LocalWeight(*(sp.N(v, 30) for v in (w.b, w.C0, w.C1)))


def _local(law: ScalarLaw, end: str, value: float) -> list[_Local]:
    """The pieces of ``law`` that touch ``value`` at ``end`` (lo/hi), at the level of the law of s."""
    lo, hi = law.support()
    if isinstance(law, Point):
        return [_Local("atom", 0.0, 1.0)] if law.c == value else []
    if isinstance(law, Discrete):
        return [_Local("atom", 0.0, float(p)) for v, p in zip(law.values, law.probs) if v == value and p > 0]
    if isinstance(law, Beta):
        if (lo if end == "lo" else hi) != value or law.a == law.b:
            return [_Local("atom", 0.0, 1.0)] if law.a == law.b == value else []
        a = law.p if end == "lo" else law.q
        return [_Local("power", a, 1.0 / (math.gamma(law.p) * math.gamma(law.q) / math.gamma(law.p + law.q)
                                          * (law.b - law.a) ** a))]
    if isinstance(law, Mixture):
        return [_Local(x.kind, x.a, x.c * w) for comp, w in zip(law.components, law.probs)
                for x in _local(comp, end, value)]
    if isinstance(law, SumLaw):
        f_lo, f_hi = law.first.support()
        g_lo, g_hi = law.second.support()
        ef, eg = (f_lo, g_lo) if end == "lo" else (f_hi, g_hi)
        if ef + eg != value:
            return []
        out = []
        for x in _local(law.first, end, ef):
            for y in _local(law.second, end, eg):
                if x.kind == y.kind == "atom":
                    out.append(_Local("atom", 0.0, x.c * y.c))
                elif x.kind == "atom" or y.kind == "atom":
                    dens = y if x.kind == "atom" else x
                    out.append(_Local("power", dens.a, x.c * y.c if x.kind == "atom" else dens.c * y.c))
                else:   # ∫₀^u c₁v^{a−1} c₂(u−v)^{b−1} dv = c₁c₂B(a, b) u^{a+b−1}
                    beta = math.gamma(x.a) * math.gamma(y.a) / math.gamma(x.a + y.a)
                    out.append(_Local("power", x.a + y.a, x.c * y.c * beta))
        return out
    raise LawError(f"no endpoint analysis for the law {law.spec()} ({type(law).__name__})")


@takes_law
def ends(law: TaskLaw) -> tuple[End, End]:
    """The two ends of the law's signal support (s > 0, or a density reaching 0), classified."""
    sig = law.require_signal("the T → ∞ asymptotics")
    sl = law.s_law()
    out = []
    for end, value in (("lo", sig[0]), ("hi", sig[1])):
        pieces = _local(sl, end, value)
        atoms = [x for x in pieces if x.kind == "atom"]
        if atoms:
            mass = sum(x.c for x in atoms)
            only = len(pieces) == len(atoms)
            out.append(End(value, "atom", 0.0, value * mass, 0.0 if only else None))
            continue
        if not pieces:
            raise LawError(f"could not classify the {end} end s = {value:g} of {sl.spec()}")
        a = min(x.a for x in pieces)
        c = sum(x.c for x in pieces if x.a == a)
        if isinstance(sl, Beta) and len(pieces) == 1:
            w = _beta_weight(sl, end)
            out.append(End(value, "power", float(w.b), float(w.C0), float(w.C1)))
        elif value == 0:
            out.append(End(value, "power", a + 1, c, None))
        else:
            out.append(End(value, "power", a, value * c, None))
    return out[0], out[1]


# ---- α_T ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AlphaExpansion:
    """``α* − α_T`` as T → ∞: ``(log_coefficient·log T + coefficient)/T + second/T² + …`` (the
    log term only when the ends' exponents differ; ``second`` only when it is derived)."""

    law: str
    alpha_star: float
    rho: float
    lo: End
    hi: End
    form: str
    log_coefficient: float
    coefficient: float
    second: float | None
    e1: float
    e2: float | None
    f1: float

    def _relative(self, T: int) -> float:
        """``α_T/α* − 1`` of the expansion, in the variable n = 2T − 1 in which it was derived."""
        n = 2 * T - 1
        return (self.e1 + self.f1 * math.log(n)) / n + ((self.e2 or 0.0) / n**2 if self.f1 == 0 else 0.0)

    def alpha_T(self, T: int) -> float:
        """The expansion's α_T, in the variable n = 2T − 1 in which it was derived."""
        return self.alpha_star * (1 + self._relative(T))

    def gap(self, T: int) -> float:
        """Predicted α* − α_T (as −α*·(α_T/α* − 1): no cancellation where the gap is far below α*'s
        rounding)."""
        return -self.alpha_star * self._relative(T)

    def to_json(self) -> dict:
        out = asdict(self)
        out["lo"] = asdict(self.lo) | {"description": self.lo.description}
        out["hi"] = asdict(self.hi) | {"description": self.hi.description}
        return out


def _mp(expr: sp.Expr, values: dict) -> float:
    return float(sp.N(expr.subs(values), 30))


@takes_law
def alpha_expansion(law: TaskLaw) -> AlphaExpansion:
    """The derived expansion of α* − α_T for ``law`` (cached per law: the checks, the excess and the
    command all start from it, and its coefficients are evaluated in SymPy)."""
    return _alpha_expansion(law)


@lru_cache(maxsize=64)
def _alpha_expansion(law: TaskLaw) -> AlphaExpansion:
    # the expansion's coefficients are float64 numbers of the law: refused (one line) where float64
    # cannot resolve the spread of 1 + s at all (TaskLaw.float64_unresolved at T = 1), not called a
    # point mass
    law.require_float64_resolved("the T → ∞ expansion of α_T")
    lo, hi = ends(law)
    a_star = alpha_star(law)
    rho = (hi.value - lo.value) / (2 + lo.value + hi.value)  # (λ_hi − λ_lo)/(λ_hi + λ_lo), from s: no rounding of 1 + s
    if rho == 0:
        raise LawError(f"the law {law.spec()} is a point mass: α_T = α* at every depth, there is no expansion")
    if lo.b == hi.b:
        E = th.equal_exponent_expansion()
        vals = {th.rho: rho, th.alpha_star: a_star, th.b: lo.b, th.C0_lo: lo.C0, th.C0_hi: hi.C0}
        e1 = _mp(E.e1, vals)
        e2 = None
        if lo.C1 is not None and hi.C1 is not None:
            e2 = _mp(E.e2, vals | {th.C1_lo: lo.C1, th.C1_hi: hi.C1})
        # n = 2T − 1: 1/n = 1/(2T) + 1/(4T²) + …, 1/n² = 1/(4T²) + …
        return AlphaExpansion(law.spec(), a_star, rho, lo, hi, "c/T", 0.0, -a_star * e1 / 2,
                              None if e2 is None else -a_star * (e1 + e2) / 4, e1, e2, 0.0)
    U = th.unequal_exponent_expansion()
    vals = {th.rho: rho, th.alpha_star: a_star, th.b_lo: lo.b, th.b_hi: hi.b, th.K_lo: lo.K, th.K_hi: hi.K}
    e1, f1 = _mp(U.e1, vals), _mp(U.f1, vals)
    # log n = log(2T) + O(1/T)
    return AlphaExpansion(law.spec(), a_star, rho, lo, hi, "(a log T + c)/T", -a_star * f1 / 2,
                          -a_star * (e1 + f1 * math.log(2)) / 2, None, e1, None, f1)


# ---- the excess ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class ExcessExpansion:
    """``excess(α_T) ≈ E[ζ²]·prefactor·rate_per_layer^T·(2T)^{−power}``."""

    rate_per_layer: float
    power: float
    prefactor: float
    zeta2: float

    def log10(self, T: int) -> float:
        """log10 of the leading term at depth ``T``: log10(E[ζ²]·prefactor) + T·log10(rate_per_layer)
        − power·log10(2T), computed in logarithms so that it never underflows (the excess itself
        falls below float64's range by T of a few hundred)."""
        return math.log10(self.zeta2 * self.prefactor) + T * math.log10(self.rate_per_layer) \
            - self.power * math.log10(2 * T)


@takes_law
def excess_expansion(law: TaskLaw) -> ExcessExpansion:
    """The leading term of the excess risk at α_T as the depth T → ∞, for a bounded law.

    The excess E_T = L_T(α_T) − L_Bayes falls geometrically with T: to leading order

        E_T ≈ E[ζ²] · prefactor · rate_per_layer^T · (2T)^(−power),

    where ``rate_per_layer`` = ρ², ρ = 1 − α*(1 + s_lo) = α*(1 + s_hi) − 1 (the layer map's factor
    at either end of the support of s, equal there at α*), and ``power`` and ``prefactor`` come from
    the law's behaviour near those ends (its atom or density exponent at s_lo and s_hi, ``ends``).  The formula is derived symbolically
    (``theory`` module ``excess_leading``) and its coefficients evaluated in mpmath; ``log10(T)``
    gives the term at a depth without underflow.  Raises ``LawError`` for an unbounded law or one
    with s ≡ 0 (``TaskLaw.require_signal``).  docs/limits.md states the derivation and how it is
    checked against the computed excess.
    """
    ex = alpha_expansion(law)
    X = th.excess_leading()
    lo, hi = ex.lo, ex.hi
    vals = {th.rho: ex.rho, th.alpha_star: ex.alpha_star, th.b_lo: lo.b, th.b_hi: hi.b, th.K_lo: lo.K,
            th.K_hi: hi.K, th.lam_lo: 1 + lo.value, th.lam_hi: 1 + hi.value}
    return ExcessExpansion(_mp(X.rate_per_layer, vals), _mp(X.power, vals), _mp(X.prefactor, vals),
                           law.zeta.second_moment())


# ---- checks against the computed values ---------------------------------------------------------
def richardson(Ts, values, terms: int) -> np.ndarray:
    """Least-squares fit of ``values ≈ Σ_{k<terms} c_k T^{−k}``; returns c (c_0 is the T → ∞ limit)."""
    Ts = np.asarray(Ts, float)
    A = np.stack([Ts ** (-k) for k in range(terms)], 1)
    return np.linalg.lstsq(A, np.asarray(values, float), rcond=None)[0]


@dataclass(frozen=True)
class Agreement:
    """A derived coefficient against its extrapolation from computed values.  ``error_estimate`` is
    the change of the extrapolation between the last two windows of T (the usual a-posteriori
    estimate of an extrapolation's error); ``agrees`` when the derived value lies within twice that
    estimate (plus the float64 floor) of the last extrapolation."""

    name: str
    derived: float
    extrapolated: float
    previous: float
    error_estimate: float
    floor: float

    @property
    def difference(self) -> float:
        return abs(self.derived - self.extrapolated)

    @property
    def agrees(self) -> bool:
        return self.difference <= 2 * self.error_estimate + self.floor

    def to_json(self) -> dict:
        return asdict(self) | {"difference": self.difference, "agrees": self.agrees,
                               "relative_difference": self.difference / abs(self.derived) if self.derived else None}


@takes_law
def check_alpha(law: TaskLaw, Ts=(10**2, 10**3, 10**4, 10**5, 10**6)) -> dict:
    """The derived expansion of ``α* − α_T`` against α_T computed at each T (``numerics.lca.alpha_T``).

    Per T: ``T·(α* − α_T)`` computed and predicted (the leading term; the whole derived expansion)
    and their relative difference.  Then the leading coefficient against an extrapolation of the
    computed values: with equal exponents a Richardson fit ``T·gap = c + d/T + e/T²`` over the three
    largest T (and, for the error estimate, over the three before); with a log term the slope
    ``a = Δ(T·gap)/Δ log T`` over the last decade (and the decade before).  The float64 floor of
    ``T·gap`` is ``T_max·α*·2⁻⁵²`` per value, times 10 for the root finder and the extrapolation."""
    Ts = sorted(check_depth(T, MAX_DEPTH_ONE, "check_alpha") for T in Ts)
    if len(Ts) < 3:
        raise ValueError("check_alpha needs at least 3 depths")
    ex = alpha_expansion(law)
    rows = []
    for T in Ts:
        a = alpha_T(law, T)
        computed = T * (ex.alpha_star - a)
        leading = ex.log_coefficient * math.log(T) + ex.coefficient
        full = T * ex.gap(T)
        rows.append({"T": T, "alpha_T": a, "T_gap_computed": computed, "T_gap_leading": leading,
                     "T_gap_expansion": full, "relative_difference_expansion":
                     abs(computed - full) / abs(full) if full else None})
    floor = 10 * Ts[-1] * ex.alpha_star * 2.0**-52
    y = [r["T_gap_computed"] for r in rows]
    if ex.f1 == 0:
        last = richardson(Ts[-3:], y[-3:], 3)
        prev = richardson(Ts[-4:-1], y[-4:-1], 3) if len(Ts) >= 4 else last
        agreement = Agreement("coefficient c of 1/T", ex.coefficient, float(last[0]), float(prev[0]),
                              abs(float(last[0] - prev[0])), floor)
    else:
        slope = [(y[i + 1] - y[i]) / math.log(Ts[i + 1] / Ts[i]) for i in range(len(Ts) - 1)]
        agreement = Agreement("coefficient a of log(T)/T", ex.log_coefficient, slope[-1], slope[-2],
                              abs(slope[-1] - slope[-2]), floor)
    return {"expansion": ex.to_json(), "rows": rows, "agreement": agreement.to_json()}


@takes_law
def check_excess(law: TaskLaw, Ts=(10, 10**2, 10**3, 10**4, 10**5, 10**6), alphas: dict | None = None) -> dict:
    """log10 of the excess at α_T computed (``excess_risk_scaled``) against the derived leading term,
    per T; the difference should shrink like (log T)/T.  ``consistent``: the remainder at the
    largest T is within twice its change over the last step of T (it is on its way to 0).
    ``alphas``: α_T already computed, by T (e.g. ``check_alpha``'s rows), not found again."""
    Ts = [check_depth(T, MAX_DEPTH_ONE, "check_excess") for T in Ts]
    ex = excess_expansion(law)
    alphas = alphas or {}
    rows = []
    for T in Ts:
        computed = excess_risk_scaled(law, T, alphas.get(T)).log10
        rows.append({"T": T, "log10_computed": computed, "log10_predicted": ex.log10(T),
                     "difference": computed - ex.log10(T)})
    d = [r["difference"] for r in rows]
    return {"expansion": asdict(ex), "rows": rows,
            "consistent": len(d) >= 2 and abs(d[-1]) <= 2 * abs(d[-1] - d[-2])}


# ---- the minimax reading ------------------------------------------------------------------------
@takes_law
def worst_case(law: TaskLaw, alphas) -> np.ndarray:
    """``max over the signal support of |r| = |α(1+s) − 1|`` for each α: the worst prompt's residual
    factor per layer (its 2T-th power bounds every prompt's excess/(ζ²A) at depth T)."""
    law.require_bounded("the worst case over the support")
    sig = law.signal_bounds()
    if sig is None:
        raise LawError("s ≡ 0: no prompt carries signal")
    a = np.asarray(alphas, float)
    return np.maximum(np.abs(a * (1 + sig[0]) - 1), np.abs(a * (1 + sig[1]) - 1))


@takes_law
def minimax_alpha(law: TaskLaw) -> float:
    """The α minimising ``worst_case`` (a convex, piecewise-linear function of α), by golden-section
    search to a bracket narrower than 1e-14 — independent of the closed form α* it is compared with
    (Brent's parabolic steps stall at the kink)."""
    sig = law.signal_bounds()
    if sig is None:
        raise LawError("s ≡ 0: no prompt carries signal")
    f = lambda a: float(worst_case(law, a))  # noqa: E731
    lo, hi = 0.0, 2.0 / (1 + sig[0])
    g = (math.sqrt(5) - 1) / 2
    x1, x2 = hi - g * (hi - lo), lo + g * (hi - lo)
    f1, f2 = f(x1), f(x2)
    while hi - lo > 1e-14:
        if f1 <= f2:
            hi, x2, f2 = x2, x1, f1
            x1 = hi - g * (hi - lo)
            f1 = f(x1)
        else:
            lo, x1, f1 = x1, x2, f2
            x2 = lo + g * (hi - lo)
            f2 = f(x2)
    return (lo + hi) / 2


# ---- the two-parameter model, measured ----------------------------------------------------------
@takes_law
def two_parameter_limits(law: TaskLaw, Ts=(5, 10, 20, 30, 50, 70, 100)) -> dict:
    """How the two-parameter minimiser (α_T, β_T) approaches (α*, −α*), measured (no derived
    expansion): per T, α_T, β_T, γ_T = α_T + β_T (``numerics.lca.minimise_two_residual``, which keeps
    γ_T accurate far below α's rounding) and ``T·(α* − α_T)``.  Fits: the rate per layer of γ_T
    (least squares of log|γ_T| on T over the larger half of the depths, with its residual) set
    beside ρ = (λ_hi − λ_lo)/(λ_hi + λ_lo); the limit of ``T·(α* − α_T)`` by a Richardson fit
    ``c + d/T`` over the two largest T, set beside the one-parameter coefficient."""

    Ts = sorted(check_depth(T, MAX_DEPTH_TWO, "two_parameter_limits") for T in Ts)
    if len(Ts) < 4 or Ts[0] < 2:
        raise ValueError("two_parameter_limits needs at least 4 depths, each ≥ 2")
    ex = alpha_expansion(law)
    rows = []
    for T in Ts:
        g, beta = minimise_two_residual(law, T)
        a = g - beta
        rows.append({"T": T, "alpha_T": a, "beta_T": beta, "gamma_T": g, "T_gap": T * (ex.alpha_star - a)})
    half = [r for r in rows if r["T"] >= Ts[len(Ts) // 2] and r["gamma_T"] != 0]
    fit = None
    if len(half) >= 2:
        x = np.array([r["T"] for r in half], float)
        y = np.log(np.abs([r["gamma_T"] for r in half]))
        slope, icpt = np.polyfit(x, y, 1)
        fit = {"rate_per_layer": float(np.exp(slope)), "prefactor": float(np.exp(icpt)),
               "max_residual_log": float(np.max(np.abs(y - (slope * x + icpt)))), "Ts": x.tolist()}
    c, d = richardson([r["T"] for r in rows[-2:]], [r["T_gap"] for r in rows[-2:]], 2)
    return {"rows": rows, "gamma_decay": fit, "rho": ex.rho,
            "T_gap_limit": {"c": float(c), "d": float(d), "one_parameter_c": ex.coefficient,
                            "one_parameter_form": ex.form}}
