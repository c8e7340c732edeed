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
from fractions import Fraction

import numpy as np
import sympy as sp

from mmicl.theory import asymptotics as th

from .law_language import takes_law
from .lca import alpha_star, alpha_T, excess_risk_scaled
from .scalar_laws import Beta, Discrete, LawError, Mixture, Point, ScalarLaw, SumLaw
from .task_law import TaskLaw
from .validate import check_depth

__all__ = ["End", "ends", "AlphaExpansion", "alpha_expansion", "ExcessExpansion", "excess_expansion",
           "check_alpha", "check_excess", "richardson"]


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
    law.require_bounded("the T → ∞ asymptotics")
    sig = law.signal_bounds()
    if sig is None:
        raise LawError("s ≡ 0: the tokens carry no information; give s a law with s > 0")
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

    def alpha_T(self, T: int) -> float:
        """The expansion's α_T, in the variable n = 2T − 1 in which it was derived."""
        n = 2 * T - 1
        eps = (self.e1 + self.f1 * math.log(n)) / n + ((self.e2 or 0.0) / n**2 if self.f1 == 0 else 0.0)
        return self.alpha_star * (1 + eps)

    def gap(self, T: int) -> float:
        """Predicted α* − α_T."""
        return self.alpha_star - self.alpha_T(T)

    def to_json(self) -> dict:
        out = asdict(self)
        out["lo"] = asdict(self.lo) | {"description": self.lo.description}
        out["hi"] = asdict(self.hi) | {"description": self.hi.description}
        return out


def _mp(expr: sp.Expr, values: dict) -> float:
    return float(sp.N(expr.subs(values), 30))


@takes_law
def alpha_expansion(law: TaskLaw) -> AlphaExpansion:
    lo, hi = ends(law)
    a_star = alpha_star(law)
    l_lo, l_hi = 1 + lo.value, 1 + hi.value
    rho = (l_hi - l_lo) / (l_hi + l_lo)
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
        return math.log10(self.zeta2 * self.prefactor) + T * math.log10(self.rate_per_layer) \
            - self.power * math.log10(2 * T)


@takes_law
def excess_expansion(law: TaskLaw) -> ExcessExpansion:
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


@takes_law
def check_alpha(law: TaskLaw, Ts=(10**2, 10**3, 10**4, 10**5, 10**6)) -> dict:
    """The derived expansion against α_T computed at each T (``numerics.lca.alpha_T``).

    Per T: ``T·(α* − α_T)`` computed and predicted (leading term, and with the second term where it
    is derived), and their difference.  For equal exponents, a Richardson fit of the computed
    ``T·(α* − α_T) = c + d/T + e/T²`` over the three largest T gives c and d, set beside the
    derived ones (their relative difference is the agreement in digits)."""
    Ts = [check_depth(T) for T in Ts]
    ex = alpha_expansion(law)
    rows = []
    for T in Ts:
        a = alpha_T(law, T)
        computed = T * (ex.alpha_star - a)
        leading = ex.log_coefficient * math.log(T) + ex.coefficient
        rows.append({"T": T, "alpha_T": a, "T_gap_computed": computed, "T_gap_leading": leading,
                     "T_gap_two_terms": None if ex.second is None else leading + ex.second / T,
                     "T_gap_expansion": T * ex.gap(T),
                     "residual_leading": computed - leading,
                     "residual_expansion": computed - T * ex.gap(T)})
    out = {"expansion": ex.to_json(), "rows": rows}
    if ex.f1 == 0 and len(Ts) >= 3:
        top = rows[-3:]
        c, d, e = richardson([r["T"] for r in top], [r["T_gap_computed"] for r in top], 3)
        out["richardson"] = {"Ts": [r["T"] for r in top], "c": c, "d": d, "e": e,
                             "relative_difference_c": abs(c - ex.coefficient) / abs(ex.coefficient)
                             if ex.coefficient else abs(c),
                             "relative_difference_d": None if ex.second is None or ex.second == 0
                             else abs(d - ex.second) / abs(ex.second)}
    else:
        # with a log term: fit T·gap − a·log T = c + (a₂ log T + c₂)/T over all T and compare c
        Tv = np.array([r["T"] for r in rows], float)
        y = np.array([r["T_gap_computed"] for r in rows]) - ex.log_coefficient * np.log(Tv)
        A = np.stack([np.ones_like(Tv), np.log(Tv) / Tv, 1 / Tv], 1)
        fit, *_ = np.linalg.lstsq(A, y, rcond=None)
        out["fit"] = {"c": float(fit[0]), "relative_difference_c": abs(fit[0] - ex.coefficient) / abs(ex.coefficient)
                      if ex.coefficient else abs(float(fit[0])),
                      "residuals": (y - A @ fit).tolist()}
    return out


@takes_law
def check_excess(law: TaskLaw, Ts=(10, 10**2, 10**3, 10**4, 10**5, 10**6)) -> dict:
    """log10 of the excess at α_T computed (``excess_risk_scaled``) against the derived leading term,
    per T; the difference should shrink like (log T)/T."""
    Ts = [check_depth(T) for T in Ts]
    ex = excess_expansion(law)
    rows = []
    for T in Ts:
        computed = excess_risk_scaled(law, T).log10
        rows.append({"T": T, "log10_computed": computed, "log10_predicted": ex.log10(T),
                     "difference": computed - ex.log10(T)})
    return {"expansion": asdict(ex), "rows": rows}
