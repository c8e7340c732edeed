"""The untied one-parameter LCA: one scalar per layer (an extension beyond arXiv:2602.04872).

Layer t has ``W^S_t = −W^V_t = α_t I`` (the paper ties ``α_t = α``).  In the large-context limit
(``theory.untied``) the Bayes residual of a prompt with ``λ = 1 + s`` is ``q(λ) = ∏_t (1 − α_t λ)``,
a polynomial of degree T with ``q(0) = 1``, and the population excess risk over Bayes is

    L(α_1 … α_T) = E[ζ² A(s) q(1 + s)²],      A(s) = s/(1 + s).

**The best schedule.**  With ``μ`` the measure of ``λ = 1 + s`` weighted by ``E[ζ²]·A(s)`` (ζ ⊥ s),
``L = ∫ q² dμ``: a least-squares problem over polynomials of degree ≤ T with ``q(0) = 1``.  Its
minimum is ``1/K_T(0, 0)`` with ``K_T(0, 0) = Σ_{k=0}^{T} π_k(0)²`` (``π_k`` the orthonormal
polynomials of μ), reached by ``q = K_T(·, 0)/K_T(0, 0)``, which is orthogonal to every polynomial of
degree < T with respect to ``λ dμ(λ)``: its roots are the T-point Gauss nodes of ``λ dμ``, and
``α_t = 1/node_t`` (any order).  Where μ lives on ``m ≤ T`` points (a law with m atoms of s > 0) the
minimum is exactly 0: the roots sit on the atoms.

**How it is computed** (``optimal_schedule``).  μ is discretised by a Gauss rule of the law of s
(``excess_rule``: Gauss–Jacobi for Beta pieces, atoms as they are, the product of the two modalities'
rules compressed to its Gauss rule, certified by its Chebyshev moments) with ``n = T + 1 + margin`` nodes.
That rule is exact for polynomials of degree ``2n − 1`` against the law, so for ``A(s)·poly`` of
degree ≤ 2T + 1 its error is
the best-approximation error of the rational factor ``A`` of degree ``2·margin``, which falls like
``ρ^{−2·margin}`` with ``ρ = (√κ + 1)/(√κ − 1)``, ``κ = (1 + s_hi)/(1 + s_lo)`` (``A`` has its pole at
``s = −1``); ``margin`` makes that below ``10^{−2·DIGITS}``.  (The law's own rule, ``TaskLaw.rule``, has
30 Gauss nodes per piece and wide middle pieces: it is exact to degree 59 per piece, and its optimum
is measurably wrong from T ≈ 100 on: by 3.6 decades of 10^{−214} at T = 200 on uniform(0.5,4).)
The Lanczos process with full re-orthogonalisation (float64, ``numerics.laws.quadrature.lanczos``) gives
the Jacobi matrix ``J_{T+1}`` of the discretised μ; ``Σ π_k(0)²`` follows from the three-term
recurrence at 0 (outside the support, ``π_k(0)`` is the dominant solution, so the forward
recurrence is stable) in log scale; the Gauss nodes of ``λ dμ`` are the eigenvalues of the leading
T×T block of ``Lᵀ L`` where ``J_{T+1} = L Lᵀ`` (the Christoffel transform by the factor λ, a Cholesky
step: J is positive definite since λ ≥ 1).

**Accuracy** (measured by the tests and the ``ext.untied`` claim): the optimum's relative error is
below 1e-9 up to T = 1000 (the same optimum with a doubled margin, and against
``optimal_schedule_mp``: 40-digit Stieltjes procedure on mpmath's own Gauss–Jacobi discretisation);
each α_t to about 1e-13 relative.

**Rates.**  As T → ∞, on a support ``[s_lo, s_hi]`` carrying a regular density, the excess falls per
layer like ``((√κ − 1)/(√κ + 1))²`` untied against ``((κ − 1)/(κ + 1))²`` tied (``predicted_rates``,
derived in ``theory.untied.rate_exprs``); ``measured_rate`` fits the rate from optimal excesses.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import mpmath as mp
import numpy as np
import sympy as sp
from mmicl.theory import untied as th
from mmicl.theory.compile import compiled
from mmicl.theory.model import s as s_sym

from mmicl.numerics.laws.language import takes_law
from .lca import ScaledValue, signal_bounds_for, excess_risk_scaled
from mmicl.numerics.laws.quadrature import Rule, gauss_jacobi, lanczos
from mmicl.numerics.laws.scalar import Beta, Discrete, LawError, Mixture, Point, ScalarLaw, SumLaw
from mmicl.numerics.laws.task import TaskLaw
from .validate import MAX_DEPTH_UNTIED, InputError, check_depth
from mmicl.numerics.laws.quadrature import discrete_gauss

__all__ = [
    "amplitude_fn",
    "cached_excess_rule",
    "multiplier_fn",
    "as_schedule",
    "signal_range",
    "DIGITS",
    "MAX_DEPTH",
    "RateFit",
    "UntiedSchedule",
    "excess_rule",
    "matrix_excess_untied",
    "measured_rate",
    "optimal_schedule",
    "optimal_schedule_mp",
    "predicted_rates",
    "untied_excess",
]

DIGITS = 20
"""The discretisation of μ keeps ``ρ^{−margin} ≤ 10^{−DIGITS}`` (module docstring): its relative
error on the quadratic forms is ``ρ^{−2·margin} ≤ 1e-40`` times the polynomial (in T) ratio of a
polynomial's maximum to its μ-norm, far below float64's rounding."""

MAX_DEPTH = MAX_DEPTH_UNTIED
"""``numerics.validate.MAX_DEPTH_UNTIED`` (2000): the Lanczos process costs O(T²·n) with n ≈ T +
margin nodes: about 1.5 s at T = 1000 and 25 s at T = 2000 on one core."""

# ---------------------------------------------------------------------------------------------
# compiled per-prompt formulas (theory.untied)
# ---------------------------------------------------------------------------------------------


def amplitude_fn(module: str = "numpy"):
    """``A(s)`` with per-prompt ``excess/ζ² = A(s)·q(1+s)²``."""
    return compiled("untied_amplitude", lambda: ([th.excess_amplitude()], [s_sym]), module)


def multiplier_fn(module: str = "numpy"):
    """``(m, ∂m/∂α)`` of one layer on the Bayes residual: ``ρ_t = m(α_t, s)·ρ_{t−1}``."""
    def build():
        m = th.residual_multiplier()
        return [m, sp.diff(m, th.alpha)], [th.alpha, s_sym]

    return compiled("untied_multiplier", build, module)


def _rates_fn():
    def build():
        tied, untied, (lo, hi) = th.rate_exprs()
        return [tied, untied], [lo, hi]

    return compiled("untied_rates", build)


# ---------------------------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------------------------


@takes_law
def signal_range(law: TaskLaw, T: int = 1) -> tuple[float, float]:
    """``(s_lo, s_hi)`` over the prompts with m ≠ 0 (atoms at s = 0 weigh nothing: A(0) = 0); a
    law that float64 cannot resolve at depth ``T`` is refused (``TaskLaw.float64_unresolved``: each
    factor 1 − α_t(1 + s) is formed with rounding ~eps against a size ~ρ, so ∏_t of 2T of them
    carries ~2T·eps/ρ, the tied model's bound)."""
    return signal_bounds_for(law, T)


def as_schedule(alphas) -> np.ndarray:
    """The schedule as a 1-D float array of finite values, one per layer (depth = its length)."""
    try:
        a = np.asarray(alphas, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"alphas must be a sequence of numbers (one α_t per layer), got {alphas!r}") from None
    if a.ndim != 1:
        raise InputError(f"alphas must be a 1-D sequence (one α_t per layer), got shape {a.shape}")
    check_depth(a.size)
    if not np.all(np.isfinite(a)):
        raise InputError(f"every α_t must be finite, got {a.tolist()}")
    return a


def _depth(T) -> int:
    return check_depth(T, MAX_DEPTH, "the untied optimum (its cost grows like T³)")


# ---------------------------------------------------------------------------------------------
# the discretisation of μ
# ---------------------------------------------------------------------------------------------


def _rho(law: TaskLaw) -> float:
    """``ρ = (√κ + 1)/(√κ − 1)`` on the hull of the law's support (atoms at 0 included): the
    Bernstein-ellipse parameter of ``A(s) = s/(1+s)``, whose pole is at ``s = −1``."""
    lo, hi = law.s_bounds()
    k = (1.0 + hi) / (1.0 + lo)
    return math.inf if k == 1 else (math.sqrt(k) + 1) / (math.sqrt(k) - 1)


def _margin(law: TaskLaw, digits: float | None = None) -> int:
    """Nodes beyond T + 1 so that ``ρ^{−margin} ≤ 10^{−digits}`` (default ``DIGITS``), plus 10 for
    the polynomial factors."""
    digits = DIGITS if digits is None else digits
    rho = _rho(law)
    return 0 if math.isinf(rho) else math.ceil(digits / math.log10(rho)) + 10


def _gauss_rule(law: ScalarLaw, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights (summing to 1) of a rule for ``E[h(S)]`` exact for polynomials of degree
    ≤ 2n − 1; atoms are exact for every h."""
    if isinstance(law, (Point, Discrete)):
        r = law.rule()
        return np.asarray(r.nodes, float), np.asarray(r.weights, float)
    if isinstance(law, Beta):
        x, w = gauss_jacobi(n, law.q - 1.0, law.p - 1.0)  # weight (1 − x)^(q−1) x^(p−1) on [0, 1]
        return law.a + (law.b - law.a) * x, w
    if isinstance(law, Mixture):
        parts = [(_gauss_rule(c, n), p) for c, p in zip(law.components, law.probs) if p > 0]
        return np.concatenate([x for (x, _), _ in parts]), np.concatenate([w * p for (_, w), p in parts])
    if isinstance(law, SumLaw):
        (x1, w1), (x2, w2) = _gauss_rule(law.first, n), _gauss_rule(law.second, n)
        x, w = (x1[:, None] + x2[None, :]).ravel(), (w1[:, None] * w2[None, :]).ravel()
        if x.size <= 2 * n or (law.first.is_atomic and law.second.is_atomic):
            return x, w  # atoms stay atoms (exact for every h)
        lo, hi = float(x.min()), float(x.max())
        c, h = (hi + lo) / 2, (hi - lo) / 2
        t, g = _product_gauss((x - c) / h, w, n)  # the n-point Gauss rule of the product measure
        return np.clip(c + h * t, lo, hi), g
    raise LawError(f"{law.spec()}: no Gauss rule for a law of type {type(law).__name__}")


def _product_gauss(x: np.ndarray, w: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The n-point Gauss rule of ``Σ_k w_k δ(x_k)`` (``x`` in [−1, 1], far more than n points: the
    product of the two modalities' rules), in O(N) memory where a stored Lanczos basis needs n·N
    numbers: the Lanczos process keeping its last two vectors (each new one orthogonalised against
    them twice), then Golub–Welsch.  Losing orthogonality would give ghost nodes; instead of watching
    the basis, the rule is certified by what is needed of it: it must reproduce the measure's
    Chebyshev moments ``∫ T_j``, ``j < 2n`` (an n-point rule with positive weights that does is the
    Gauss rule, exact to degree 2n − 1) within ``CERTIFY`` (rounding of the Chebyshev recurrence
    and of the sums over N nodes, ~2n·eps).  Otherwise ``quadrature.discrete_gauss`` (stored basis,
    full re-orthogonalisation) where its basis fits in ``MAX_BASIS_BYTES``, else an error.  Dot products
    through ``einsum``: a threaded BLAS on long vectors stalls on a shared machine."""
    from scipy.linalg import eigh_tridiagonal

    mass = float(w.sum())
    a, b = np.empty(n), np.empty(n - 1)
    prev, cur = np.zeros_like(x), np.sqrt(w / mass)
    for k in range(n):
        xq = x * cur
        a[k] = np.einsum("i,i->", cur, xq)
        if k == n - 1:
            break
        r = xq - a[k] * cur - (b[k - 1] * prev if k else 0.0)
        for _ in range(2):
            r -= np.einsum("i,i->", cur, r) * cur + np.einsum("i,i->", prev, r) * prev
        b[k] = math.sqrt(np.einsum("i,i->", r, r))
        prev, cur = cur, r / b[k]
    nodes, vecs = eigh_tridiagonal(a, b)
    weights = mass * vecs[0] ** 2
    if _chebyshev_mismatch(x, w, nodes, weights, 2 * n) <= CERTIFY * mass:
        return nodes, weights
    if 8.0 * n * x.size > MAX_BASIS_BYTES:
        raise ArithmeticError(f"the {n}-point Gauss rule of a product of {x.size} nodes lost orthogonality and "
                              f"its stored-basis fallback needs over {MAX_BASIS_BYTES / 1e9:g} GB; use a smaller T")

    return discrete_gauss(x, w, n)


CERTIFY = 1e-11
"""Largest ``|Σ_G T_j − Σ_μ T_j|`` (relative to the mass) accepted for a compressed product rule,
``j < 2n``: ``|T_j| ≤ 1`` on [−1, 1], and the recurrence and the sums over N ≤ 4·10⁶ nodes round to a
few 1e-13 at 2n ≤ 4000."""

MAX_BASIS_BYTES = 2e9
"""Largest stored Lanczos basis for the fallback of ``_product_gauss``."""


def _chebyshev_mismatch(x, w, nodes, weights, K: int) -> float:
    """``max_{j<K} |Σ_i weights_i T_j(nodes_i) − Σ_k w_k T_j(x_k)|`` (the Chebyshev recurrence on both)."""
    worst = abs(float(weights.sum()) - float(w.sum()))
    p0, p1 = np.ones_like(x), x.copy()
    g0, g1 = np.ones_like(nodes), nodes.copy()
    for j in range(1, K):
        if j > 1:
            p0, p1 = p1, 2 * x * p1 - p0
            g0, g1 = g1, 2 * nodes * g1 - g0
        worst = max(worst, abs(float(np.einsum("i,i->", weights, g1)) - float(np.einsum("i,i->", w, p1))))
    return worst


@lru_cache(maxsize=64)
def cached_excess_rule(law: TaskLaw, T: int) -> Rule:
    signal_range(law, T)
    scalar = law.s_law()
    n = T + 1 + _margin(law)
    x, w = _gauss_rule(scalar, n)
    keep = w > 0
    rule = Rule(x[keep], w[keep] * law.zeta.second_moment())
    for a in (rule.nodes, rule.weights):
        a.flags.writeable = False
    return rule


@takes_law
def excess_rule(law: TaskLaw, T: int) -> Rule:
    """The rule for ``E[ζ² h(s)]`` that the untied excess at depth ``T`` is integrated with: a Gauss
    rule of the law of s with ``T + 1 + margin`` nodes (atoms kept as they are), exact for
    ``A(s)·q(1+s)²`` up to ``ρ^{−2·margin}`` (module docstring).  Cached per (law, T)."""
    return cached_excess_rule(law, check_depth(T))


def _mu(law: TaskLaw, T: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes ``λ_k = 1 + s_k`` and weights of the discretised μ (``E[ζ²] A(s) dP``, s > 0 only)."""
    rule = cached_excess_rule(law, T)
    w = rule.weights * amplitude_fn()(rule.nodes)[0]
    keep = w > 0
    return 1.0 + rule.nodes[keep], w[keep]


def _jacobi(lam: np.ndarray, w: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The first ``n`` diagonal and ``n − 1`` off-diagonal entries of the Jacobi matrix of
    ``Σ w_k δ(λ_k)`` (fewer if it lives on fewer points), by Lanczos with full re-orthogonalisation
    on the nodes mapped onto [−1, 1]."""
    lo, hi = float(lam.min()), float(lam.max())
    if lo == hi:
        return np.array([lo]), np.array([])
    c, h = (hi + lo) / 2, (hi - lo) / 2
    _, a, b = lanczos((lam - c) / h, w, n, full=True)
    return c + h * a, h * b


def _log_kernel_at_zero(a: np.ndarray, b: np.ndarray, mass: float, T: int) -> float:
    """``log Σ_{k=0}^{T} π_k(0)²`` from the recurrence ``b_k π_{k+1} = (x − a_k) π_k − b_{k−1} π_{k−1}``,
    ``π_0 = 1/√mass``, with π kept as mantissa × e^scale (it grows geometrically)."""
    logs = np.empty(T + 1)
    logs[0] = -math.log(mass)
    prev, cur, scale = 0.0, 1.0, -0.5 * math.log(mass)  # π_k = cur·e^scale, π_{k−1} = prev·e^scale
    for k in range(T):
        nxt = (-a[k] * cur - (b[k - 1] * prev if k else 0.0)) / b[k]
        size = abs(nxt)
        prev, cur, scale = cur / size, nxt / size, scale + math.log(size)
        logs[k + 1] = 2 * scale
    top = logs.max()
    return top + math.log(np.exp(logs - top).sum())


def _christoffel_nodes(a: np.ndarray, b: np.ndarray, T: int) -> np.ndarray:
    """The T-point Gauss nodes of ``λ dμ`` from the Jacobi matrix ``J_{T+1}`` of μ: with
    ``J_{T+1} = L Lᵀ`` (Cholesky, L lower bidiagonal), the Jacobi matrix of ``λ dμ`` is the leading
    T×T block of ``Lᵀ L``."""
    from scipy.linalg import eigh_tridiagonal

    n = T + 1
    d, e = np.empty(n), np.empty(n - 1)
    d[0] = math.sqrt(a[0])
    for k in range(n - 1):
        e[k] = b[k] / d[k]
        piv = a[k + 1] - e[k] ** 2
        if not piv > 0:
            raise ArithmeticError(f"the Jacobi matrix of μ is not positive definite at row {k + 1} (pivot {piv:g})")
        d[k + 1] = math.sqrt(piv)
    diag = d[:T] ** 2 + e[:T] ** 2
    off = e[: T - 1] * d[1:T]
    if T == 1:
        return diag.copy()
    return eigh_tridiagonal(diag, off, eigvals_only=True)


# ---------------------------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class UntiedSchedule:
    """The best depth-T schedule of the untied model on one law.

    ``alphas``: ``α_1 ≤ … ≤ α_T`` (the layers may be taken in any order: the residual is a product);
    ``log10_excess``: log10 of the minimal excess risk over Bayes (``-inf`` when it is exactly 0);
    ``excess``: its float64 value, ``None`` where float64 cannot hold it; ``exact_zero``: μ lives on
    ``atoms ≤ T`` points and the optimum is exactly 0 (then the first ``atoms`` α's are 1/λ at the
    atoms and the others repeat them: any value would do; atoms closer than about 1e-13 of the
    support's width are one point to float64); ``nodes``: size of the discretisation of μ;
    ``method``: how it was computed."""

    T: int
    alphas: tuple[float, ...]
    log10_excess: float
    excess: float | None
    exact_zero: bool
    atoms: int | None
    nodes: int
    method: str

    def to_json(self) -> dict:
        out = {"T": self.T, "alphas": list(self.alphas), "excess": self.excess,
               "log10_excess": self.log10_excess if math.isfinite(self.log10_excess) else None,
               "exact_zero": self.exact_zero, "atoms": self.atoms, "nodes": self.nodes, "method": self.method}
        if self.excess is None:
            out["excess_null_reason"] = f"10^{self.log10_excess:.2f} is outside float64's range; see log10_excess"
        if not math.isfinite(self.log10_excess):
            out["log10_excess_null_reason"] = "the optimal excess is exactly 0"
        return out


def _scaled_from_log(log_value: float) -> tuple[float, float | None]:
    """``(log10, float64 value or None)`` of ``e^log_value``."""
    log10 = log_value / math.log(10)
    return log10, (math.exp(log_value) if -745 < log_value < 709 else None)


def _zero_schedule(T: int, atoms: np.ndarray, nodes: int, method: str) -> UntiedSchedule:
    """μ on ``len(atoms) ≤ T`` points: roots on the atoms, the remaining layers repeat them."""
    base = np.sort(1.0 / np.asarray(atoms, float))
    alphas = np.sort(np.resize(base, T))
    return UntiedSchedule(T, tuple(float(x) for x in alphas), -math.inf, 0.0, True, len(atoms), nodes,
                          method + "; μ lives on ≤ T points: the optimum is exactly 0")


@takes_law
def optimal_schedule(law: TaskLaw, T: int) -> UntiedSchedule:
    """The schedule ``(α_1 … α_T)`` that minimises the untied excess ``E[ζ² A(s) ∏(1 − α_t(1+s))²]``,
    and the minimum ``1/Σ_{k≤T} π_k(0)²`` (see the module docstring for the method and accuracy).

    **Accuracy** (measured, not proved: the module docstring says how): the optimum's relative
    error below 1e-9 up to T = 1000, each α_t to about 1e-13 relative."""
    T = _depth(T)
    lam, w = _mu(law, T)
    mass = float(w.sum())
    a, b = _jacobi(lam, w, T + 1)
    method = (f"Lanczos (float64, full re-orthogonalisation) on a {lam.size}-node Gauss discretisation of μ; "
              "1/Σπ_k(0)² in log scale; α_t = 1/(Gauss nodes of λ dμ) by a Cholesky (Christoffel) step")
    if a.size <= T:  # μ lives on a.size points (to rounding): their Gauss rule is μ itself
        from scipy.linalg import eigh_tridiagonal

        atoms = eigh_tridiagonal(a, b, eigvals_only=True) if a.size > 1 else a
        return _zero_schedule(T, atoms, lam.size, method)
    log_min = -_log_kernel_at_zero(a, b, mass, T)
    nodes = _christoffel_nodes(a, b, T)
    log10, value = _scaled_from_log(log_min)
    return UntiedSchedule(T, tuple(float(x) for x in np.sort(1.0 / nodes)), log10, value, False, None,
                          lam.size, method)


@takes_law
def untied_excess(law: TaskLaw, alphas: Sequence[float], rule: Rule | None = None) -> ScaledValue:
    """The population excess risk over Bayes of the schedule ``alphas`` (one α_t per layer, depth
    = its length): ``E[ζ² A(s) ∏_t (1 − α_t(1+s))²]`` on ``excess_rule(law, T)`` (or on ``rule``, a
    rule for ``E[ζ² h(s)]`` such as ``law.rule(depth=T)``), in log scale (a ``ScaledValue``:
    ``.value`` is ``None`` where float64 cannot hold it, ``.log10`` always holds)."""
    a = as_schedule(alphas)
    _depth(a.size)  # its rule has ~T + margin nodes: the same limit as the optimum's
    rule = cached_excess_rule(law, a.size) if rule is None else rule
    s = rule.nodes
    m, _ = multiplier_fn()(a[None, :], s[:, None])
    amp = amplitude_fn()(s)[0]
    with np.errstate(divide="ignore"):
        logq = np.log(np.abs(m)).sum(axis=1)  # −inf where a layer's root sits on a node
    live = (rule.weights * amp > 0) & np.isfinite(logq)
    if not live.any():
        return ScaledValue(0.0, 0.0)
    top = float(logq[live].max())
    terms = np.where(live, rule.weights * amp * np.exp(np.where(live, 2 * (logq - top), 0.0)), 0.0)
    return ScaledValue(float(terms.sum()), 2 * top)


# ---------------------------------------------------------------------------------------------
# the independent route: mpmath
# ---------------------------------------------------------------------------------------------


@lru_cache(maxsize=32)
def _gauss_jacobi_mp(n: int, p: float, q: float, dps: int) -> tuple[tuple, tuple]:
    """mpmath's own n-point Gauss rule of Beta(p, q) on [0, 1] (weights summing to 1)."""
    with mp.workdps(dps):
        x, w = mp.gauss_quadrature(n, "jacobi", mp.mpf(q) - 1, mp.mpf(p) - 1)  # (1−x)^(q−1)(1+x)^(p−1)
        total = mp.fsum(w)
        return tuple((1 + xi) / 2 for xi in x), tuple(wi / total for wi in w)


def _gauss_rule_mp(law: ScalarLaw, n: int, dps: int) -> list[tuple]:
    """``[(s, w), …]`` in mpmath: ``_gauss_rule`` computed independently (mpmath's Gauss–Jacobi;
    products of the modalities kept whole)."""
    if isinstance(law, (Point, Discrete)):
        r = law.rule()
        return [(mp.mpf(float(x)), mp.mpf(float(w))) for x, w in zip(r.nodes, r.weights)]
    if isinstance(law, Beta):
        xs, ws = _gauss_jacobi_mp(n, law.p, law.q, dps)
        a, width = mp.mpf(law.a), mp.mpf(law.b) - mp.mpf(law.a)
        return [(a + width * x, w) for x, w in zip(xs, ws)]
    if isinstance(law, Mixture):
        return [(x, mp.mpf(p) * w) for c, p in zip(law.components, law.probs) if p > 0
                for x, w in _gauss_rule_mp(c, n, dps)]
    if isinstance(law, SumLaw):
        return [(x1 + x2, w1 * w2) for x1, w1 in _gauss_rule_mp(law.first, n, dps)
                for x2, w2 in _gauss_rule_mp(law.second, n, dps)]
    raise LawError(f"{law.spec()}: no Gauss rule for a law of type {type(law).__name__}")


def _stieltjes_mp(x: list, w: list, n: int, zero_tol) -> tuple[list, list, list]:
    """The discretised Stieltjes procedure in mpmath on nodes ``x`` in [−1, 1]: monic recurrence
    coefficients ``a_k``, ``b_k = h_k/h_{k−1}`` and norms ``h_k = Σ w p_k²`` for k < n; fewer where
    ``h_k ≤ zero_tol·h_0·4^{−k}``, the measure then living on k points (on [−1, 1] a measure with a
    density has ``h_k/h_0`` of order ``4^{−k}``, while the k-th norm of a k-point measure is rounding)."""
    p_prev, p = [mp.mpf(0)] * len(x), [mp.mpf(1)] * len(x)
    a, b, h = [], [], []
    for k in range(n):
        hk = mp.fsum(wi * pi * pi for wi, pi in zip(w, p))
        if k and hk <= zero_tol * h[0] * mp.mpf(4) ** (-k):
            break
        ak = mp.fsum(wi * xi * pi * pi for wi, xi, pi in zip(w, x, p)) / hk
        bk = hk / h[-1] if k else mp.mpf(0)
        a.append(ak)
        b.append(bk)
        h.append(hk)
        p_prev, p = p, [(xi - ak) * pi - bk * qi for xi, pi, qi in zip(x, p, p_prev)]
    return a, b, h


@takes_law
def optimal_schedule_mp(law: TaskLaw, T: int, dps: int = 40) -> UntiedSchedule:
    """``optimal_schedule`` by an independent route, for moderate T (cost O(T·n) mpmath operations
    plus mpmath's Gauss–Jacobi rule, O(n³)): mpmath's Gauss–Jacobi discretisation of μ with a margin
    for ``ρ^{−margin} ≤ 10^{−dps/2 − 5}`` (finer than the float64 route's), the Stieltjes procedure
    (not Lanczos) at ``dps`` digits, in the variable ``t = (λ − c)/h`` that maps the nodes' hull onto
    [−1, 1] (in λ itself a narrow support loses a digit per layer to cancellation), on μ for
    ``1/Σ π_k(0)²`` and on ``λ dμ`` directly (not the Christoffel step) for its Gauss nodes."""
    T = check_depth(T)
    signal_range(law)
    amp = amplitude_fn("mpmath")
    with mp.workdps(dps):
        n = T + 1 + _margin(law, dps / 2 + 5)
        pairs = [(x, w) for x, w in _gauss_rule_mp(law.s_law(), n, dps) if x > 0 and w > 0]
        z2 = mp.mpf(law.zeta.second_moment())
        lam = [1 + x for x, _ in pairs]
        w_mu = [z2 * w * amp(x)[0] for x, w in pairs]
        method = (f"mpmath ({dps} digits): Stieltjes procedure on a {len(lam)}-node mpmath Gauss discretisation "
                  "of μ for 1/Σπ_k(0)², and on λ dμ for its Gauss nodes")
        c, half = (max(lam) + min(lam)) / 2, (max(lam) - min(lam)) / 2
        if half == 0:  # one value of s: one layer at α = 1/λ is exact
            return _zero_schedule(T, [float(lam[0])], len(lam), method)
        t = [(x - c) / half for x in lam]
        zero_tol = mp.mpf(10) ** (-(dps // 2))
        a, b, h = _stieltjes_mp(t, w_mu, T + 1, zero_tol)
        if len(a) <= T:
            atoms = mp.eigsy(_jacobi_mp(a, b), eigvals_only=True) if len(a) > 1 else [a[0]]
            return _zero_schedule(T, [float(c + half * v) for v in atoms], len(lam), method)
        t0 = -c / half  # λ = 0
        p_prev, p, K = mp.mpf(0), mp.mpf(1), mp.mpf(0)
        for k in range(T + 1):  # monic p_k(t0) by the recurrence; π_k(0)² = p_k(t0)²/h_k
            K += p * p / h[k]
            if k < T:
                p_prev, p = p, (t0 - a[k]) * p - b[k] * p_prev
        an, bn, _ = _stieltjes_mp(t, [wi * li for wi, li in zip(w_mu, lam)], T, mp.mpf(0))
        nodes = mp.eigsy(_jacobi_mp(an, bn), eigvals_only=True) if T > 1 else [an[0]]
        alphas = sorted(float(1 / (c + half * v)) for v in nodes)
        log_min = -float(mp.log(K))
    log10, value = _scaled_from_log(log_min)
    return UntiedSchedule(T, tuple(alphas), log10, value, False, None, len(lam), method)


def _jacobi_mp(a: list, b: list) -> mp.matrix:
    """The symmetric Jacobi matrix from monic coefficients (off-diagonal ``√b_k``)."""
    n = len(a)
    J = mp.zeros(n, n)
    for k in range(n):
        J[k, k] = a[k]
        if k:
            J[k, k - 1] = J[k - 1, k] = mp.sqrt(b[k])
    return J


# ---------------------------------------------------------------------------------------------
# rates
# ---------------------------------------------------------------------------------------------


@takes_law
def predicted_rates(law: TaskLaw) -> dict[str, float]:
    """``{"tied": ((κ−1)/(κ+1))², "untied": ((√κ−1)/(√κ+1))²}``, ``κ = (1 + s_hi)/(1 + s_lo)`` over the
    prompts with m ≠ 0 (``theory.untied.rate_exprs``): the per-layer factors ``lim excess^{1/T}`` of
    the tied model at α_T and of the optimal untied schedule, for a law whose s has a regular density
    on the whole of ``[s_lo, s_hi]``.  For any other bounded law the untied value is an upper bound
    on the rate (a law on a smaller set, with gaps or atoms, allows faster)."""
    lo, hi = signal_range(law)
    if lo == hi:  # one value of s: a single layer at α = 1/(1+s) is already exact, tied or not
        return {"tied": 0.0, "untied": 0.0}
    tied, untied = _rates_fn()(lo, hi)
    return {"tied": float(tied), "untied": float(untied)}


@dataclass(frozen=True)
class RateFit:
    """The per-layer rate of an excess fitted on depths ``Ts``: least squares of
    ``log10 excess_T = intercept + T·log10_rate``; ``residual_rms``/``residual_max``: the fit's
    residuals in log10 units (the deviation from exact geometric decay, e.g. the O(1/T) correction
    of a finite depth)."""

    model: str
    Ts: tuple[int, ...]
    log10_excess: tuple[float, ...]
    log10_rate: float
    intercept: float
    residual_rms: float
    residual_max: float

    @property
    def rate(self) -> float:
        return 10.0**self.log10_rate

    def to_json(self) -> dict:
        return {"model": self.model, "T": list(self.Ts), "log10_excess": list(self.log10_excess),
                "rate": self.rate, "log10_rate": self.log10_rate, "intercept": self.intercept,
                "residual_rms": self.residual_rms, "residual_max": self.residual_max}


MODELS = ("untied", "tied")


@takes_law
def measured_rate(law: TaskLaw, Ts: Sequence[int], model: str = "untied") -> RateFit:
    """The per-layer rate of the optimal excess over the depths ``Ts`` (``model="untied"``: the
    optimal schedule; ``"tied"``: the tied model at its α_T, ``numerics.lca``), by a least-squares
    line through ``(T, log10 excess_T)``."""
    if model not in MODELS:
        raise InputError(f"model must be one of {', '.join(MODELS)}, got {model!r}")
    try:
        depths = sorted({_depth(T) for T in Ts})
    except TypeError:
        raise InputError(f"Ts must be a sequence of depths, got {Ts!r}") from None
    if len(depths) < 2:
        raise InputError(f"a rate needs at least two different depths, got {list(Ts)!r}")
    if model == "untied":
        ys = [optimal_schedule(law, T).log10_excess for T in depths]
    else:
        ys = [excess_risk_scaled(law, T).log10 for T in depths]
    zero = [T for T, y in zip(depths, ys) if not math.isfinite(y)]
    if zero:
        raise InputError(f"the {model} excess is exactly 0 at T = {zero} (s takes at most {min(zero)} value(s) "
                         f"over prompts with m ≠ 0): it has no per-layer rate there; use depths below {min(zero)}")
    x, y = np.asarray(depths, float), np.asarray(ys)
    slope, intercept = np.polyfit(x, y, 1)
    resid = y - (intercept + slope * x)
    return RateFit(model, tuple(depths), tuple(float(v) for v in ys), float(slope), float(intercept),
                   float(np.sqrt(np.mean(resid**2))), float(np.abs(resid).max()))


# ---------------------------------------------------------------------------------------------
# d×d matrices
# ---------------------------------------------------------------------------------------------


def matrix_excess_untied(m: np.ndarray, zeta: float, alphas: Sequence[float]) -> float:
    """Excess risk over Bayes of one task of the large-context untied LCA, by d×d matrices: with
    ``Λ = I + m mᵀ``, ``P_t = P_{t−1} + α_t I − α_t Λ P_{t−1}``, ``P_0 = 0``, the readout
    ``ŷ = ζ mᵀ P_T x_q = w_effᵀ x_q`` and, for ``x ~ N(0, Λ)``, ``y = ζu``,
    ``risk = ζ² − 2ζ w_effᵀ m + w_effᵀ Λ w_eff``, Bayes risk ``ζ²(1 − mᵀΛ⁻¹m)``.  No reduction to
    span{m}, no closed form: a check of ``theory.untied``."""
    m = np.asarray(m, float)
    d = m.size
    lam = np.eye(d) + np.outer(m, m)
    P = np.zeros((d, d))
    for a in as_schedule(alphas):
        P = P + a * np.eye(d) - a * lam @ P
    w_eff = zeta * P.T @ m
    risk = zeta**2 - 2 * zeta * w_eff @ m + w_eff @ lam @ w_eff
    bayes = zeta**2 * (1 - m @ np.linalg.solve(lam, m))
    return float(risk - bayes)
