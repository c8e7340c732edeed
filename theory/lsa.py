"""Single-layer linear self-attention (LSA, Theorem 4.1 of arXiv:2602.04872), derived in SymPy.

The layer acts on ``Z = [[x_1 … x_n x_q], [y_1 … y_n 0]] ∈ R^{(d+1)×(n+1)}`` as

    f(Z) = Z + W^{PV} Z M Zᵀ W^{KQ} Z / n,        M = diag(I_n, 0),

and predicts ``ŷ = f(Z)_{d+1, n+1}``.  Write ``P = W^{PV}``, ``Q = W^{KQ}`` and the context
statistics ``Σ̂ = (1/n) Σ x_i x_iᵀ``, ``h = (1/n) Σ y_i x_i``, ``σ̂ = (1/n) Σ y_i²``.  Then
(``derive_prediction``)

    ŷ = p_xᵀ Σ̂ Q₁₁ x_q + σ̂ p_y q₂₁ᵀ x_q   +   x_qᵀ Γ h,     Γ = p_y Q₁₁ᵀ + q₂₁ p_xᵀ,

with ``[p_xᵀ, p_y]`` the last row of P, ``Q₁₁`` the top-left d×d block of Q and ``q₂₁ᵀ`` the first d
entries of its last row.  The first d rows of P and the last column of Q never enter.

The first two terms are *even* in the labels (degree 0 or 2 in y), the last is *odd* (degree 1),
and the target ``y_q`` is odd.  If the law of the prompt is invariant under ``y ↦ −y`` (all labels
flipped, tokens kept) the cross term ``E[even · (odd − y_q)]`` vanishes, so the risk splits as
``E[even²] + E[(x_qᵀ Γ h − y_q)²]`` and the best full LSA is the best *reduced* LSA
``ŷ = x_qᵀ Γ h`` (take ``p_x = 0``, ``q₂₁ = 0``, ``p_y = 1``, ``Q₁₁ = Γᵀ``: every Γ is reachable).
The flip invariance holds when ζ is symmetric (ζ ↦ −ζ) or when m is (m ↦ −m together with
u ↦ −u keeps every x and flips every y); ``flip_maps`` checks both symbolically.  This holds at
every context length n, not only in the limit.  Without it (ζ not symmetric *and* m with a
non-symmetric law, e.g. a fixed mean direction) the even terms can predict y_q from x_q alone
(in-weights learning) and the full LSA can beat every reduced one: ``two_point_counterexample``.

For the reduced LSA the risk at finite n is exact (``reduced_risk``): h is independent of the
query, ``E[h] = ζ m`` and ``Cov(h) = ζ² (I + 2 m mᵀ)/n`` (Gaussian moments), so per prompt

    E[(x_qᵀΓh − y_q)²] = ζ²/(1+s) + ζ² (Γm − m/(1+s))ᵀ Λ (Γm − m/(1+s)) + (ζ²/n) tr(ΓᵀΛΓ(I + 2mmᵀ)).

The excess over Bayes (the last two terms) depends on (Γ, m) only through six rotation invariants
(``per_prompt_excess``), which is the form the numerics compile, for any d.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from .model import bayes_predictor, gaussian_expectation
from .model import s as s_sym
from .model import zeta as zeta_sym

__all__ = [
    "LSAPrediction",
    "derive_prediction",
    "large_context_prediction",
    "flip_maps",
    "token_moments",
    "reduced_risk",
    "InvariantExcess",
    "per_prompt_excess",
    "reduced_excess_closed_form",
    "isotropic_best_gamma",
    "two_point_counterexample",
]


def _matrix(name: str, rows: int, cols: int) -> sp.Matrix:
    return sp.Matrix(rows, cols, lambda i, j: sp.Symbol(f"{name}_{i}{j}", real=True))


def _vector(name: str, dim: int) -> sp.Matrix:
    return sp.Matrix(dim, 1, lambda i, _: sp.Symbol(f"{name}_{i}", real=True))


@dataclass(frozen=True)
class LSAPrediction:
    """The LSA prediction for a d-dimensional token, as derived from an explicit prompt."""

    d: int
    P: sp.Matrix  # W^{PV}, (d+1)×(d+1) symbols
    Q: sp.Matrix  # W^{KQ}
    prediction: sp.Expr  # ŷ in terms of the context statistics below and x_q
    Sxx: sp.Matrix  # Σ̂ (symmetric symbols)
    h: sp.Matrix  # (1/n) Σ y_i x_i
    syy: sp.Symbol  # (1/n) Σ y_i²
    xq: sp.Matrix
    gamma: sp.Matrix  # Γ = p_y Q11ᵀ + q21 p_xᵀ
    odd_part: sp.Expr  # x_qᵀ Γ h
    even_part: sp.Expr  # p_xᵀ Σ̂ Q11 x_q + σ̂ p_y q21ᵀ x_q

    @property
    def entries_used(self) -> set[sp.Symbol]:
        return {e for e in self.prediction.free_symbols if e in set(self.P) | set(self.Q)}

    @property
    def entries_unused(self) -> set[sp.Symbol]:
        return (set(self.P) | set(self.Q)) - self.entries_used


@lru_cache(maxsize=None)
def derive_prediction(d: int = 2, n: int = 2) -> LSAPrediction:
    """Build ``Z`` for ``n`` symbolic context tokens in ``R^d``, apply the full layer, read the
    bottom-right entry, and rewrite it in the context statistics (Σ̂, h, σ̂).

    The rewrite is checked, not assumed: substituting the statistics' definitions back must give
    the entry computed from Z exactly (``ValueError`` otherwise).
    """
    if d < 1 or n < 1:
        raise ValueError(f"need d ≥ 1 and n ≥ 1, got d={d}, n={n}")
    P, Q = _matrix("P", d + 1, d + 1), _matrix("Q", d + 1, d + 1)
    xs = [_vector(f"x{i}", d) for i in range(n)]
    ys = [sp.Symbol(f"y{i}", real=True) for i in range(n)]
    xq = _vector("xq", d)
    Z = sp.Matrix.hstack(*[sp.Matrix.vstack(x, sp.Matrix([[y]])) for x, y in zip(xs, ys)],
                         sp.Matrix.vstack(xq, sp.Matrix([[0]])))
    M = sp.diag(*([1] * n + [0]))
    out = Z + P * Z * M * Z.T * Q * Z / n
    from_prompt = sp.expand(out[d, n])

    Sxx = sp.Matrix(d, d, lambda i, j: sp.Symbol(f"S_{min(i, j)}{max(i, j)}", real=True))
    h = _vector("h", d)
    syy = sp.Symbol("sigma_yy", real=True)
    px, py = P[d, :d].T, P[d, d]
    Q11, q21 = Q[:d, :d], Q[d, :d].T
    even = (px.T * Sxx * Q11 * xq)[0] + syy * py * (q21.T * xq)[0]
    gamma = py * Q11.T + q21 * px.T
    odd = (xq.T * gamma * h)[0]
    prediction = sp.expand(even + odd)

    defs = {Sxx[i, j]: sum(x[i] * x[j] for x in xs) / n for i in range(d) for j in range(i, d)}
    defs.update({h[i]: sum(y * x[i] for x, y in zip(xs, ys)) / n for i in range(d)})
    defs[syy] = sum(y**2 for y in ys) / n
    if sp.expand(prediction.xreplace(defs) - from_prompt) != 0:
        raise ValueError("the statistics form of the LSA prediction does not match the layer")
    return LSAPrediction(d, P, Q, prediction, Sxx, h, syy, xq, gamma, sp.expand(odd), sp.expand(even))


def large_context_prediction(pred: LSAPrediction) -> tuple[sp.Expr, sp.Matrix, sp.Symbol]:
    """The limit n → ∞ inside a prompt: ``Σ̂ → I + m mᵀ``, ``h → ζ m``, ``σ̂ → ζ²``.
    Returns ``(ŷ∞, m, ζ)``."""
    m = _vector("m", pred.d)
    zeta = sp.Symbol("zeta", real=True)
    Lam = sp.eye(pred.d) + m * m.T
    subs = {pred.Sxx[i, j]: Lam[i, j] for i in range(pred.d) for j in range(pred.d)}
    subs.update({pred.h[i]: zeta * m[i] for i in range(pred.d)})
    subs[pred.syy] = zeta**2
    return sp.expand(pred.prediction.xreplace(subs)), m, zeta


def flip_maps(pred: LSAPrediction) -> dict[str, bool]:
    """Under each symmetry of the prompt law that flips every label, is the even part unchanged
    and the odd part (and the target y_q) negated?  Works on the large-context prediction and on
    the finite-n statistics (``y ↦ −y`` sends ``h ↦ −h`` and keeps Σ̂, σ̂)."""
    yhat, m, zeta = large_context_prediction(pred)
    odd_inf = sp.expand((pred.xq.T * pred.gamma * zeta * m)[0])
    even_inf = sp.expand(yhat - odd_inf)
    neg_m = {mi: -mi for mi in m}
    finite_flip = {hi: -hi for hi in pred.h}
    return {
        "zeta->-zeta: even part invariant": sp.expand(even_inf.subs(zeta, -zeta) - even_inf) == 0,
        "zeta->-zeta: odd part negated": sp.expand(odd_inf.subs(zeta, -zeta) + odd_inf) == 0,
        # m ↦ −m with u ↦ −u keeps x_q = u m + ε and flips y_q = ζ u: x_q is held fixed here.
        "m->-m: even part invariant": sp.expand(even_inf.xreplace(neg_m) - even_inf) == 0,
        "m->-m: odd part negated": sp.expand(odd_inf.xreplace(neg_m) + odd_inf) == 0,
        "finite n, y->-y: even part invariant": sp.expand(pred.even_part.xreplace(finite_flip) - pred.even_part) == 0,
        "finite n, y->-y: odd part negated": sp.expand(pred.odd_part.xreplace(finite_flip) + pred.odd_part) == 0,
    }


@lru_cache(maxsize=None)
def token_moments(d: int = 2) -> dict[str, sp.Matrix]:
    """Moments of one token ``x = u m + ξ``, ``y = ζ u`` by Gaussian moment calculus
    (Isserlis, monomial by monomial): ``E[x xᵀ]``, ``E[y x]``, ``Cov(y x)``."""
    u = sp.Symbol("u", real=True)
    xi = [sp.Symbol(f"xi_{i}", real=True) for i in range(d)]
    m = _vector("m", d)
    zeta = sp.Symbol("zeta", real=True)
    x = u * m + sp.Matrix(xi)
    y = zeta * u
    gvars = (u, *xi)
    E = lambda e: gaussian_expectation(e, gvars)  # noqa: E731
    Exx = x * x.T
    Exx = Exx.applyfunc(E)
    Eyx = (y * x).applyfunc(E)
    second = (y**2 * x * x.T).applyfunc(E)
    return {"Exx": Exx, "Eyx": Eyx, "Cov_yx": sp.simplify(second - Eyx * Eyx.T), "m": m, "zeta": zeta}


@lru_cache(maxsize=None)
def reduced_risk(d: int = 2) -> dict[str, sp.Expr]:
    """Per-prompt risk of ``ŷ = x_qᵀ Γ h`` at context length n, from the token moments:
    h is the mean of n i.i.d. copies of ``y x`` and independent of (x_q, y_q), so
    ``E[hhᵀ] = E[yx]E[yx]ᵀ + Cov(yx)/n`` and the risk is
    ``tr(ΓᵀE[x_q x_qᵀ]Γ E[hhᵀ]) − 2 E[y_q x_q]ᵀ Γ E[h] + E[y_q²]``.
    Also the Bayes risk (best linear function of x_q, task known) and the excess."""
    mom = token_moments(d)
    m, zeta = mom["m"], mom["zeta"]
    n = sp.Symbol("n", positive=True)
    G = _matrix("G", d, d)
    Lam, Eyx = mom["Exx"], mom["Eyx"]
    Ehh = Eyx * Eyx.T + mom["Cov_yx"] / n
    risk = (G.T * Lam * G * Ehh).trace() - 2 * (Eyx.T * G * Eyx)[0] + zeta**2
    w = Lam.LUsolve(Eyx)  # the Bayes weights Λ⁻¹ E[y x]
    bayes = sp.simplify(zeta**2 - (Eyx.T * w)[0])
    return {"risk": sp.expand(risk), "bayes": bayes, "excess": sp.expand(risk) - bayes,
            "G": G, "m": m, "zeta": zeta, "n": n}


@dataclass(frozen=True)
class InvariantExcess:
    """The per-prompt excess risk of the reduced LSA over Bayes, in rotation invariants of (Γ, m).

    With ``c`` the Bayes weight along m per unit ζ (``E[y_q | x_q, task] = ζ c mᵀx_q``, so
    ``c = 1/(1+s)``, from ``theory.model.bayes_predictor``), the residual ``r = Γm − c m`` and
    ``Λ = I + mmᵀ``:

        ζ² rᵀΛr = ζ² (‖r‖² + (mᵀr)²),
        (ζ²/n) tr(ΓᵀΛΓ(I + 2mmᵀ)) = (ζ²/n)(‖Γ‖_F² + ‖Γᵀm‖² + 2‖Γm‖² + 2(mᵀΓm)²)

    (``tr(ΓᵀΛΓ) = ‖Γ‖_F² + ‖Γᵀm‖²`` and ``mᵀΓᵀΛΓm = ‖Γm‖² + (mᵀΓm)²``).  Every term is ≥ 0, and
    the residual is formed before it is squared, so the excess of a Γ close to Bayes keeps its
    digits.  ``args`` is the order of the compiled function's arguments; ``n = ∞`` gives the
    large-context limit.  ``entrywise(G, m)`` writes the invariants out for explicit matrices, which
    is how ``reduced_excess_closed_form`` checks this form against the Gaussian-moment derivation.
    """

    excess: sp.Expr
    bayes_weight: sp.Expr  # c(s)
    residual2: sp.Symbol  # ‖Γm − c m‖²
    residual_m: sp.Symbol  # mᵀ(Γm − c m)
    frobenius2: sp.Symbol  # ‖Γ‖_F²
    gamma_t_m2: sp.Symbol  # ‖Γᵀm‖²
    gamma_m2: sp.Symbol  # ‖Γm‖²
    m_gamma_m: sp.Symbol  # mᵀΓm
    zeta: sp.Symbol
    n: sp.Symbol
    s: sp.Symbol

    @property
    def args(self) -> tuple[sp.Symbol, ...]:
        return (self.residual2, self.residual_m, self.frobenius2, self.gamma_t_m2, self.gamma_m2,
                self.m_gamma_m, self.zeta, self.n)

    def entrywise(self, G: sp.Matrix, m: sp.Matrix) -> dict[sp.Symbol, sp.Expr]:
        """The invariants as expressions in the entries of ``G`` (d×d) and ``m`` (d×1)."""
        s = (m.T * m)[0]
        r = G * m - self.bayes_weight.subs(self.s, s) * m
        return {self.residual2: (r.T * r)[0], self.residual_m: (m.T * r)[0],
                self.frobenius2: sum(x**2 for x in G), self.gamma_t_m2: ((G.T * m).T * (G.T * m))[0],
                self.gamma_m2: ((G * m).T * (G * m))[0], self.m_gamma_m: (m.T * G * m)[0]}


@lru_cache(maxsize=None)
def per_prompt_excess() -> InvariantExcess:
    """The per-prompt excess ``E[(x_qᵀΓh − y_q)²] − E[(ŷ_Bayes − y_q)²]`` at context length n, in
    the invariants of ``InvariantExcess``; the Bayes weight comes from ``theory.model``."""
    c = sp.simplify(bayes_predictor().weight_along_m / zeta_sym)
    r2, rm, f2, q2, p2, t = sp.symbols("residual2 residual_m frobenius2 gamma_t_m2 gamma_m2 m_gamma_m",
                                       real=True)
    n = sp.Symbol("n", positive=True)
    excess = zeta_sym**2 * (r2 + rm**2) + zeta_sym**2 * (f2 + q2 + 2 * p2 + 2 * t**2) / n
    return InvariantExcess(excess, c, r2, rm, f2, q2, p2, t, zeta_sym, n, s_sym)


def reduced_excess_closed_form(d: int = 2) -> sp.Expr:
    """The closed form the numerics use (``per_prompt_excess``), written out in the symbols of
    ``reduced_risk(d)``: ``ζ²(Γm − m/(1+s))ᵀΛ(Γm − m/(1+s)) + (ζ²/n) tr(ΓᵀΛΓ(I + 2mmᵀ))``.
    ``reduced_risk(d)["excess"] − reduced_excess_closed_form(d)`` simplifies to 0."""
    r = reduced_risk(d)
    inv = per_prompt_excess()
    subs = inv.entrywise(r["G"], r["m"])
    return inv.excess.xreplace({**subs, inv.zeta: r["zeta"], inv.n: r["n"]})


def isotropic_best_gamma() -> dict[str, sp.Expr]:
    """Isotropic m, Γ = γI (forced by rotation invariance), n = ∞: minimise
    ``E[ζ²(γ − 1/(1+s))² s(1+s)]`` with ζ ⊥ s.  In the moments ``μ1 = E s``, ``μ2 = E s²`` and
    ``κ = E[s/(1+s)]``: ``γ* = μ1/(μ1 + μ2)``, gap ``= E[ζ²](κ − μ1²/(μ1 + μ2))``.
    By Cauchy–Schwarz ``μ1² = E[√(s(1+s))·√(s/(1+s))]² ≤ (μ1+μ2) κ`` with equality iff
    ``(1+s)²`` is a.s. constant on ``{s > 0}``: the gap vanishes iff s is a.s. constant
    *on {s > 0}* (an atom at s = 0 costs nothing: both predict 0 there)."""
    gam, s, z2 = sp.symbols("gamma s E_zeta2", real=True)
    mu1, mu2, kappa = sp.symbols("mu1 mu2 kappa", positive=True)
    per_task = sp.expand((gam - 1 / (1 + s)) ** 2 * s * (1 + s))
    # E over s, term by term: γ² s(1+s) − 2γ s + s/(1+s)
    expected = z2 * (gam**2 * (mu1 + mu2) - 2 * gam * mu1 + kappa)
    check = sp.simplify(per_task - (gam**2 * (s + s**2) - 2 * gam * s + s / (1 + s)))
    if check != 0:
        raise ValueError("isotropic per-task excess did not expand as expected")
    (g_star,) = sp.solve(sp.diff(expected, gam), gam)
    gap = sp.simplify(expected.subs(gam, g_star))
    return {"gamma": sp.simplify(g_star), "gap": gap, "symbols": (mu1, mu2, kappa, z2)}


def two_point_counterexample(a: sp.Expr = sp.Integer(1), b: sp.Expr = sp.Integer(2)) -> dict[str, sp.Expr]:
    """d = 1, ζ ≡ 1, m ∈ {a, b} (a ≠ b, both > 0, so neither ζ nor m is sign-symmetric).
    In the limit the full LSA predicts ``ŷ = c(m)·x_q`` with ``c(m) = c0 + c1 m + c2 m²``,
    ``c2 = Q p_x``, ``c1 = q21 p_x + p_y Q``, ``c0 = Q p_x + p_y q21``; the Bayes factor is
    ``m/(1+m²)``.  Solve for weights that match Bayes at both atoms (gap 0), while the reduced
    LSA ``c = γ m`` cannot (gap > 0 for any weights of the two atoms)."""
    pred = derive_prediction(1, 1)
    yhat, mvec, zeta = large_context_prediction(pred)
    mm = mvec[0]
    c = sp.expand(yhat.subs(zeta, 1) / pred.xq[0])
    px, py, Q11, q21 = pred.P[1, 0], pred.P[1, 1], pred.Q[0, 0], pred.Q[1, 0]
    target = lambda v: v / (1 + v**2)  # noqa: E731
    # fix Q11 = 1 and p_x = t; two equations in (p_y, q21) for each t; search a real solution
    t = sp.Symbol("t", real=True)
    eqs = [sp.Eq(c.subs({mm: v, Q11: 1, px: t}), target(v)) for v in (a, b)]
    for t_val in (sp.Rational(-1, 2), sp.Rational(1, 10), sp.Rational(-1, 10), sp.Integer(0), sp.Rational(1, 2)):
        sols = sp.solve([e.subs(t, t_val) for e in eqs], [py, q21], dict=True)
        real = [sol for sol in sols if all(v.is_real for v in sol.values())]
        if real:
            sol = {**real[0], Q11: 1, px: t_val}
            residuals = [sp.simplify(c.subs(sol).subs(mm, v) - target(v)) for v in (a, b)]
            return {"c_of_m": c, "weights": sol, "residuals": residuals,
                    "reduced_can_match": sp.simplify(target(a) / a - target(b) / b) == 0}
    raise ValueError("no real full-LSA weights matched Bayes at both atoms for the t values tried")
