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

import mpmath as mp
import numpy as np
import sympy as sp

from mmicl.theory import asymptotics as th
from mmicl.theory.compile import compiled

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
    (b = 0), or a weight ``u^{b−1}(C0 + C1·u + C2·u² + …)``.  ``C1`` gathers every contribution of the
    power u^b (the density's own next term, the weight's slope, and the pieces of the law whose
    exponent is b + 1), ``C2`` those of u^{b+1}; ``gaps`` are the differences between the exponents of
    the law's pieces at this end and b.  A gap strictly between 0 and 1 puts a term between the first
    and the second order (``second_reason``), one strictly between 1 and 2 a term between the second
    and the third (``third_reason``); the orders past it are then not derived."""

    value: float
    kind: str
    b: float
    C0: float
    C1: float
    C2: float = 0.0
    gaps: tuple[float, ...] = ()

    @property
    def K(self) -> float:
        """The end's strength in the leading balance: C0 for an atom, C0·Γ(b) for a power."""
        return self.C0 if self.kind == "atom" else self.C0 * math.gamma(self.b)

    @property
    def kappa(self) -> float:
        """The end's first relative correction, Γ(b + 1)·C1/K (``theory.asymptotics.end_expansion``)."""
        return math.gamma(self.b + 1) * self.C1 / self.K

    @property
    def kappa2(self) -> float:
        """The end's second relative correction, Γ(b + 2)·C2/K (``theory.asymptotics.end_expansion``)."""
        return math.gamma(self.b + 2) * self.C2 / self.K

    def _early_term(self, lo: int, where: str) -> str | None:
        """The reason an order is not the next term: a piece whose exponent exceeds b by a fraction
        between ``lo`` and ``lo + 1``; None when there is none."""
        early = [g for g in self.gaps if lo < g < lo + 1]
        if not early:
            return None
        return (f"the law has pieces at this end (s = {self.value:g}) whose exponents differ by {min(early):g}: a "
                f"term of order T^(-{1 + min(early):g}) comes {where}, and it is not derived")

    @property
    def second_reason(self) -> str | None:
        """Why the 1/T² term is not the next one at this end (None when it is)."""
        return self._early_term(0, "before 1/T²")

    @property
    def third_reason(self) -> str | None:
        """Why the 1/T³ term is not the next one after 1/T² at this end (None when it is)."""
        return self._early_term(1, "between 1/T² and 1/T³")

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
    """The law of s near one end: an atom of probability ``c`` (a = 0), or a density
    ``c·u^{a−1}(1 + d·u + e·u² + …)``."""

    kind: str
    a: float
    c: float
    d: float = 0.0
    e: float = 0.0


@lru_cache(maxsize=None)
def _rules() -> dict[str, sp.Lambda]:
    """``theory.asymptotics.local_rules`` as functions of their symbols (each returns a tuple)."""
    R, t = th.local_rules(), th
    beta_args = (t.local_p, t.local_q, t.local_width)
    one = (t.local_a1, t.local_c1, t.local_d1, t.local_e1)
    out = {"beta_lo": (beta_args, R.beta_lo), "beta_hi": (beta_args, R.beta_hi),
           "convolution": (one + (t.local_a2, t.local_c2, t.local_d2, t.local_e2), R.convolution),
           "weight_lo": (one + (t.local_s_end,), R.weight_lo), "weight_hi": (one + (t.local_s_end,), R.weight_hi),
           "weight_zero": (one, R.weight_zero)}
    return {k: sp.lambdify(args, list(exprs), modules="mpmath") for k, (args, exprs) in out.items()}


def _rule(name: str, *args) -> tuple[float, ...]:
    return tuple(float(v) for v in _rules()[name](*args))


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
        return [_Local("power", *_rule(f"beta_{end}", law.p, law.q, law.b - law.a))]
    if isinstance(law, Mixture):
        return [_Local(x.kind, x.a, x.c * w, x.d, x.e) for comp, w in zip(law.components, law.probs)
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
                    dens, atom = (y, x) if x.kind == "atom" else (x, y)
                    out.append(_Local("power", dens.a, dens.c * atom.c, dens.d, dens.e))
                else:   # ∫₀^u f₁(v) f₂(u − v) dv (theory.asymptotics.local_rules)
                    out.append(_Local("power", *_rule("convolution", x.a, x.c, x.d, x.e, y.a, y.c, y.d, y.e)))
        return out
    raise LawError(f"no endpoint analysis for the law {law.spec()} ({type(law).__name__})")


def _weighted(x: _Local, end: str, value: float) -> tuple[float, float, float, float]:
    """(b, C0, C1, C2) of the stationarity weight w(s) = s times one piece, near the end at ``value``."""
    if x.kind == "atom":
        return 0.0, value * x.c, 0.0, 0.0
    if value == 0:
        return _rule("weight_zero", x.a, x.c, x.d, x.e)
    return _rule(f"weight_{end}", x.a, x.c, x.d, x.e, value)


@takes_law
def ends(law: TaskLaw) -> tuple[End, End]:
    """The two ends of the law's signal support (s > 0, or a density reaching 0), classified: the
    leading exponent b of the weight there, its coefficient C0 and the coefficient C1 of the next
    power (``End``)."""
    sig = law.require_signal("the T → ∞ asymptotics")
    sl = law.s_law()
    out = []
    for end, value in (("lo", sig[0]), ("hi", sig[1])):
        # an atom at s = 0 carries no weight (w = s vanishes there)
        pieces = [x for x in _local(sl, end, value) if not (value == 0 and x.kind == "atom")]
        if not pieces:
            raise LawError(f"could not classify the {end} end s = {value:g} of {sl.spec()}")
        weighted = [_weighted(x, end, value) for x in pieces]
        bb = min(w[0] for w in weighted)
        C0 = sum(w[1] for w in weighted if w[0] == bb)
        # the coefficient of u^{b−1+k} gathers each piece's own k-th term and the leading terms of the
        # pieces whose exponent is k more
        C1, C2 = (sum(w[1 + k - j] for w in weighted for j in range(k + 1) if w[0] == bb + j) for k in (1, 2))
        gaps = tuple(sorted({round(w[0] - bb, 12) for w in weighted if w[0] != bb}))
        out.append(End(value, "atom" if bb == 0 else "power", bb, C0, C1, C2, gaps))
    return out[0], out[1]


# ---- α_T ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AlphaExpansion:
    """``α* − α_T`` as T → ∞, ``Σ_k P_k(log T)/T^k``: the first order ``(log_coefficient·log T +
    coefficient)/T`` (the log term only when the ends' exponents differ), the second ``second`` =
    (E₀, E₁, E₂) of ``(E₀ + E₁ log T + E₂ log²T)/T²`` and the third ``third`` = (F₀, …, F₃) of
    ``(F₀ + … + F₃ log³T)/T³``, each None where it is not derived (``second_reason``,
    ``third_reason``).  In n = 2T − 1, in which it is derived: ``α_T/α* − 1 = Σ_k ν_k(log n)/n^{k+1}``,
    ``nu[k]`` the coefficients of ν_k from the constant up; ``e1``, ``f1`` the first order's (ν₀ =
    e1 + f1 log n) and ``e2`` the second's constant (all of ν₁ when the exponents are equal)."""

    law: str
    alpha_star: float
    rho: float
    lo: End
    hi: End
    form: str
    log_coefficient: float
    coefficient: float
    second: tuple[float, float, float] | None
    third: tuple[float, float, float, float] | None
    nu: tuple[tuple[float, ...], ...]
    second_reason: str | None
    third_reason: str | None

    @property
    def e1(self) -> float:
        return self.nu[0][0]

    @property
    def f1(self) -> float:
        return self.nu[0][1]

    @property
    def e2(self) -> float | None:
        return self.nu[1][0] if len(self.nu) > 1 else None

    def _relative(self, T: int, orders: int = 2) -> float:
        """``α_T/α* − 1`` of the expansion's first ``orders`` derived orders, in the variable n = 2T − 1
        in which it was derived."""
        n, L = 2 * T - 1, math.log(2 * T - 1)
        return sum(sum(c * L**j for j, c in enumerate(nu)) / n ** (k + 1) for k, nu in enumerate(self.nu[:orders]))

    def alpha_T(self, T: int) -> float:
        """The expansion's α_T (the orders up to the second where it is derived), in n = 2T − 1."""
        return self.alpha_star * (1 + self._relative(T))

    def gap(self, T: int, orders: int = 2) -> float:
        """Predicted α* − α_T from the first ``orders`` derived orders, in n = 2T − 1 (as −α*·(α_T/α* − 1):
        no cancellation where the gap is far below α*'s rounding)."""
        return -self.alpha_star * self._relative(T, orders)

    def term(self, T: int, k: int) -> float:
        """The k-th order term of ``α* − α_T`` in T (k = 1, 2, 3): ``P_k(log T)/T^k``; NaN where it is not
        derived."""
        coefs = {1: (self.coefficient, self.log_coefficient), 2: self.second, 3: self.third}[k]
        if coefs is None:
            return math.nan
        return sum(c * math.log(T) ** j for j, c in enumerate(coefs)) / T**k

    def to_json(self) -> dict:
        out = asdict(self) | {"e1": self.e1, "f1": self.f1, "e2": self.e2}
        out["lo"] = asdict(self.lo) | {"description": self.lo.description, "kappa": self.lo.kappa,
                                         "kappa2": self.lo.kappa2}
        out["hi"] = asdict(self.hi) | {"description": self.hi.description, "kappa": self.hi.kappa,
                                         "kappa2": self.hi.kappa2}
        return out


def _mp(expr: sp.Expr, values: dict) -> float:
    return float(sp.N(expr.subs(values), 30))


_EXPANSION_ARGS = (th.rho, th.alpha_star, th.b_lo, th.b_hi, th.K_lo, th.K_hi, th.kappa_lo, th.kappa_hi,
                   th.kappa2_lo, th.kappa2_hi)


def _expansion_exprs() -> tuple[list[sp.Expr], list[sp.Symbol]]:
    """The coefficients of ν₀, ν₁, ν₂ in log n and of P₁, P₂, P₃ in log T (``theory.asymptotics.end_expansion``),
    in one list, for ``theory.compile.compiled``."""
    E = th.end_expansion(3)
    nus = [v.coeff(th.log_n, j) for k, v in enumerate(E.nu) for j in range(k + 2)]
    return nus + [c for row in E.by_T for c in row], list(_EXPANSION_ARGS)


def _expansion_values(values: tuple) -> tuple[tuple[tuple[float, ...], ...], tuple[tuple[float, ...], ...]]:
    """(ν₀, ν₁, ν₂ coefficients in log n; P₁, P₂, P₃ coefficients in log T) at ``values`` (in the order of
    ``_EXPANSION_ARGS``), from the compiled formulas, in 30-digit mpmath."""
    f = compiled("lca_depth_expansion", _expansion_exprs, "mpmath")
    with mp.workdps(30):
        out = [float(v) for v in f(*(mp.mpf(x) for x in values))]
    nu, at = [], 0
    for k in range(3):
        nu.append(tuple(out[at:at + k + 2]))
        at += k + 2
    by_T = []
    for k in range(1, 4):
        by_T.append(tuple(out[at:at + k + 1]))
        at += k + 1
    return tuple(nu), tuple(by_T)


@takes_law
def alpha_expansion(law: TaskLaw) -> AlphaExpansion:
    """The derived expansion of α* − α_T for ``law`` (cached per law: the checks, the excess and the
    command all start from it)."""
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
    nu, by_T = _expansion_values((rho, a_star, lo.b, hi.b, lo.K, hi.K, lo.kappa, hi.kappa, lo.kappa2, hi.kappa2))
    if lo.b == hi.b:
        # every log coefficient carries the factor b_hi − b_lo (tests/numerics/test_asymptotics.py checks it
        # symbolically): exactly 0 here, not the 30-digit rounding of a cancellation
        nu = tuple((v[0],) + (0.0,) * (len(v) - 1) for v in nu)
        by_T = tuple((v[0],) + (0.0,) * (len(v) - 1) for v in by_T)
    second_reason = lo.second_reason or hi.second_reason
    third_reason = second_reason or lo.third_reason or hi.third_reason
    if second_reason:
        nu = nu[:1]
    elif third_reason:
        nu = nu[:2]
    form = "c/T" if lo.b == hi.b else "(a log T + c)/T"
    return AlphaExpansion(law.spec(), a_star, rho, lo, hi, form, by_T[0][1], by_T[0][0],
                          None if second_reason else by_T[1], None if third_reason else by_T[2], nu,
                          second_reason, third_reason)


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
    """A derived first-order coefficient against its extrapolation from computed values, with the
    derived second-order term subtracted first.  ``error_bound`` is twice the size of the derived
    third-order term's contribution to the extrapolation (``AlphaExpansion.term``; its monomials'
    absolute values, so that no cancellation at one T hides it), never the change between two
    windows of T; ``agrees`` when the derived value lies within that bound plus the float64 floor of
    the computed values, None (undecided) where the bound is not derived (``reason``).  ``previous``
    is the same extrapolation one window earlier, shown beside it."""

    name: str
    derived: float
    extrapolated: float
    previous: float
    error_bound: float | None
    floor: float
    reason: str | None = None

    @property
    def difference(self) -> float:
        return abs(self.derived - self.extrapolated)

    @property
    def agrees(self) -> bool | None:
        if self.error_bound is None:
            return None
        return self.difference <= self.error_bound + self.floor

    def to_json(self) -> dict:
        return asdict(self) | {"difference": self.difference, "agrees": self.agrees,
                               "relative_difference": self.difference / abs(self.derived) if self.derived else None}


def _term_size(ex: AlphaExpansion, T: int, k: int) -> float | None:
    """|P_k|(log T)/T^k with every coefficient of P_k taken in absolute value: the size of the k-th
    order term, not lowered by a cancellation between its monomials at this T; None where it is not
    derived."""
    coefs = {2: ex.second, 3: ex.third}[k]
    if coefs is None:
        return None
    return sum(abs(c) * math.log(T) ** j for j, c in enumerate(coefs)) / T**k


@takes_law
def check_alpha(law: TaskLaw, Ts=(10**2, 10**3, 10**4, 10**5, 10**6)) -> dict:
    """The derived expansion of ``α* − α_T`` against α_T computed at each T (``numerics.lca.alpha_T``).

    Per T: ``T·(α* − α_T)`` computed; the derived first-order term ``a log T + c`` (``T_gap_leading``),
    with the second order (``T_gap_two_orders``) and with the third (``T_gap_three_orders``), and the
    relative difference of the whole derived expansion (``T_gap_expansion``, in n = 2T − 1).

    The first-order coefficient against the computed values: ``y(T) = T·(α* − α_T) − T·P₂(log T)/T²``
    (the derived second order subtracted) is ``a log T + c`` up to the third order's ``T·P₃/T³``.
    With equal exponents, c is read as y at the largest T; with a log term, a as the slope
    ``Δy/Δlog T`` over the last decade.  The error bound is twice the third order's size there
    (``_term_size``), the float64 floor ``10·T_max·α*·2⁻⁵²``."""
    Ts = sorted(check_depth(T, MAX_DEPTH_ONE, "check_alpha") for T in Ts)
    if len(Ts) < 3:
        raise ValueError("check_alpha needs at least 3 depths")
    ex = alpha_expansion(law)
    rows = []
    for T in Ts:
        a = alpha_T(law, T)
        computed = T * (ex.alpha_star - a)
        leading = T * ex.term(T, 1)
        two = leading + T * ex.term(T, 2)
        full = T * ex.gap(T)
        rows.append({"T": T, "alpha_T": a, "T_gap_computed": computed, "T_gap_leading": leading,
                     "T_gap_two_orders": two, "T_gap_three_orders": two + T * ex.term(T, 3),
                     "T_gap_expansion": full, "relative_difference_expansion":
                     abs(computed - full) / abs(full) if full else None})
    floor = 10 * Ts[-1] * ex.alpha_star * 2.0**-52
    reason = ex.second_reason or ex.third_reason
    # the computed values less the derived second order: a log T + c + O(third order)
    y = [r["T_gap_computed"] - (0.0 if ex.second is None else T * ex.term(T, 2)) for r, T in zip(rows, Ts)]
    third = [None if ex.third is None else T * _term_size(ex, T, 3) for T in Ts]
    if ex.f1 == 0:
        bound = None if reason else 2 * third[-1]
        agreement = Agreement("coefficient c of 1/T", ex.coefficient, y[-1], y[-2], bound, floor, reason)
    else:
        span = [math.log(Ts[i + 1] / Ts[i]) for i in range(len(Ts) - 1)]
        slope = [(y[i + 1] - y[i]) / span[i] for i in range(len(Ts) - 1)]
        bound = None if reason else 2 * (third[-1] + third[-2]) / span[-1]
        agreement = Agreement("coefficient a of log(T)/T", ex.log_coefficient, slope[-1], slope[-2], bound, floor,
                              reason)
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
