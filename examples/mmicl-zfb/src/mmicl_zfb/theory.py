r"""The population loss of a linear predictor read by one linear self-attention layer, derived
symbolically (SymPy) from the model's definition.

The model (Zhang, Frei & Bartlett, *Trained Transformers Learn Linear Models In-Context*, JMLR 2024)
---------------------------------------------------------------------------------------------------
A prompt has N examples and a query: x_1, …, x_N, x_q i.i.d. N(0, Λ) in R^d, the task w ~ N(0, I_d)
independent of them, labels y_i = wᵀx_i without noise and the target y_q = wᵀx_q.  With the sample
covariance S = (1/N) Σ_i x_i x_iᵀ, the layer at its reduced parameters (``numerics`` explains the
reduction) predicts

    ŷ(Γ) = x_qᵀ Γ (1/N) Σ_i y_i x_i = x_qᵀ Γ S w,

and the loss is the paper's L(Γ) = ½ E[(ŷ − y_q)²].

The derivation (``derived_loss``), step by step, every expectation computed by SymPy
-----------------------------------------------------------------------------------
1. Gaussian moments from the moment generating function: for x ~ N(0, Λ),
   E[e^{tᵀx}] = exp(q), q = ½ tᵀΛt, so E[Π_a x_a^{k_a}] = (Π_a k_a!) · [t^k] q^m / m! with
   2m = Σ k_a (odd orders vanish).  ``gaussian_moment`` extracts that coefficient; nothing like
   Isserlis' pairings is typed in, they come out of the expansion.
2. ``expect(expr, xs, Λ)``: the expectation of a polynomial in the Gaussian vector xs, monomial by
   monomial with the moments of step 1; other symbols are constants.
3. Moments of S = (1/N) Σ_i x_i x_iᵀ (``sample_cov_moments``): E[S_ab] = Λ_ab and, splitting the
   double sum over (i, j) into its N diagonal terms and its N(N − 1) terms with i ≠ j
   (independent, so their expectation factorises),
   E[S_ab S_ce] = (1/N²)(N E[x_a x_b x_c x_e] + N(N − 1) Λ_ab Λ_ce), the fourth moment from step 1.
4. The loss, expectations taken in stages on the model's own squared error with S left as a
   symmetric matrix of symbols (x_q, w and S are independent): first over x_q (step 2 with Λ),
   then over w (step 2 with I), then over S (step 3, the error being quadratic in S).

The closed forms that step 4 is checked against (``check_sample_cov_identity``, ``check_loss_form``)
--------------------------------------------------------------------------------------------------
- E[S A S] = Λ A Λ + (1/N)(Λ Aᵀ Λ + tr(AΛ) Λ) for any d × d matrix A (checked entry by entry with
  symbolic A and Λ); with A = I: M := E[S²] = (1 + 1/N) Λ² + (tr Λ / N) Λ = Λ B,
  B := (1 + 1/N) Λ + (tr Λ / N) I.
- 2 L(Γ) = tr(Γᵀ Λ Γ M) − 2 tr(Λ Γ Λ) + tr Λ, valid at every d: it is steps 2–4 written with
  matrices (E_{x_q}[(x_qᵀv)²] = vᵀΛv, E_w[wᵀKw] = tr K, E[S] = Λ, E[S²] = M).  The compiled
  functions (``compiled``) use this form at any d; ``check_loss_form`` checks it equals the staged
  expectation exactly at small d.

The minimiser (``stationary_point``)
-----------------------------------
∇_Γ L = Λ Γ M − Λ²; L is a convex quadratic in Γ with Hessian M ⊗ Λ (smallest eigenvalue
μ = λ_min(Λ) λ_min(M) > 0 for Λ ≻ 0), so the stationarity condition ∇L = 0 has one solution, the
global minimiser.  ``stationary_point`` solves ∇L = 0 with ``sympy.linsolve`` on the derived loss
and ``check_minimiser`` compares the solution with the paper's closed form
Γ* = ((1 + 1/N) Λ + tr(Λ)/N · I)⁻¹ = B⁻¹ and the minimal value with
L* = ½ [tr Λ − tr(Λ² B⁻¹)]  (for Λ = diag(λ_k): L* = ½ Σ_k λ_k (λ_k + tr Λ) / ((N + 1) λ_k + tr Λ)).
"""
from __future__ import annotations

from functools import lru_cache
from math import factorial

import numpy as np
import sympy as sp

N_SYM = sp.Symbol("N", positive=True)


# ---------------------------------------------------------------- symbols
def symmetric_symbols(name: str, d: int, diagonal: bool = False) -> sp.Matrix:
    """A symmetric d × d matrix of symbols (``name``_ab = ``name``_ba); ``diagonal``: zero off the
    diagonal, positive symbols on it."""
    if diagonal:
        return sp.diag(*[sp.Symbol(f"{name}{a}", positive=True) for a in range(d)])
    m = sp.zeros(d, d)
    for a in range(d):
        for b in range(a, d):
            s = sp.Symbol(f"{name}{a}{b}", real=True)
            m[a, b] = m[b, a] = s
    return m


def matrix_symbols(name: str, d: int) -> sp.Matrix:
    return sp.Matrix(d, d, lambda a, b: sp.Symbol(f"{name}{a}{b}", real=True))


# ---------------------------------------------------------------- step 1–2: Gaussian moments
_T = {}


def _q_power(Lam: sp.Matrix, m: int) -> sp.Poly:
    """(½ tᵀΛt)^m / m! as a polynomial in t (the order-2m part of the Gaussian MGF)."""
    d = Lam.shape[0]
    key = (tuple(Lam), m)
    if key not in _T:
        t = sp.symbols(f"t0:{d}")
        q = sp.Rational(1, 2) * (sp.Matrix(t).T * Lam * sp.Matrix(t))[0, 0]
        _T[key] = sp.Poly(sp.expand(q**m / factorial(m)), *t)
    return _T[key]


def gaussian_moment(k: tuple[int, ...], Lam: sp.Matrix) -> sp.Expr:
    """E[Π_a x_a^{k_a}] for x ~ N(0, Λ): k! times the coefficient of t^k in the MGF exp(½tᵀΛt)."""
    total = sum(k)
    if total % 2:
        return sp.Integer(0)
    coeff = _q_power(Lam, total // 2).coeff_monomial(tuple(k))
    return sp.expand(coeff * sp.prod([factorial(ki) for ki in k]))


def expect(expr: sp.Expr, xs: list[sp.Symbol], Lam: sp.Matrix) -> sp.Expr:
    """E over xs ~ N(0, Λ) of the polynomial ``expr`` in xs (other symbols: constants)."""
    poly = sp.Poly(sp.expand(expr), *xs)
    return sp.expand(sum(c * gaussian_moment(mon, Lam) for mon, c in poly.terms()))


# ---------------------------------------------------------------- step 3: sample covariance
def sample_cov_moments(Lam: sp.Matrix, N=N_SYM):
    """(S, first, second): S a symmetric matrix of symbols s_ab, and the functions giving E[s_ab]
    and E[s_ab s_ce] for S = (1/N) Σ_i x_i x_iᵀ (the module docstring, step 3)."""
    d = Lam.shape[0]
    S = symmetric_symbols("s", d)
    x = sp.symbols(f"xa0:{d}")  # one example x_i
    x2 = sp.symbols(f"xb0:{d}")  # another, independent, x_j (j ≠ i)

    def first(a, b):
        return expect(x[a] * x[b], list(x), Lam)

    def second(a, b, c, e):
        same = expect(x[a] * x[b] * x[c] * x[e], list(x), Lam)  # the N terms with i = j
        # the N(N − 1) terms with i ≠ j: independent examples
        other = expect(expect(x[a] * x[b] * x2[c] * x2[e], list(x), Lam), list(x2), Lam)
        return sp.expand((N * same + N * (N - 1) * other) / N**2)

    return S, first, second


def expect_sample_cov(expr: sp.Expr, Lam: sp.Matrix, N=N_SYM) -> sp.Expr:
    """E over S of a polynomial of degree ≤ 2 in the entries of S (the symbols of
    ``sample_cov_moments``)."""
    S, first, second = sample_cov_moments(Lam, N)
    d = Lam.shape[0]
    index = {}
    for a in range(d):
        for b in range(a, d):
            index[S[a, b]] = (a, b)
    syms = list(index)
    poly = sp.Poly(sp.expand(expr), *syms)
    out = 0
    for mon, c in poly.terms():
        factors = [s for s, k in zip(syms, mon) for _ in range(k)]
        if len(factors) == 0:
            val = 1
        elif len(factors) == 1:
            val = first(*index[factors[0]])
        elif len(factors) == 2:
            val = second(*index[factors[0]], *index[factors[1]])
        else:
            raise ValueError("expect_sample_cov takes a polynomial of degree ≤ 2 in S")
        out += c * val
    return sp.expand(out)


def sas_derived(Lam: sp.Matrix, A: sp.Matrix, N=N_SYM) -> sp.Matrix:
    """E[S A S], entry by entry from the moments of S."""
    S, _, _ = sample_cov_moments(Lam, N)
    SAS = S * A * S
    return SAS.applyfunc(lambda e: expect_sample_cov(e, Lam, N))


def sas_identity(Lam: sp.Matrix, A: sp.Matrix, N=N_SYM) -> sp.Matrix:
    """The general identity E[S A S] = ΛAΛ + (ΛAᵀΛ + tr(AΛ)Λ)/N."""
    return Lam * A * Lam + (Lam * A.T * Lam + (A * Lam).trace() * Lam) / N


def check_sample_cov_identity(d: int, diagonal: bool = False) -> bool:
    """The derived E[S A S] equals the identity, for symbolic Λ (general or diagonal), symbolic A
    (not symmetric) and symbolic N."""
    Lam = symmetric_symbols("l", d, diagonal)
    A = matrix_symbols("a", d)
    diff = (sas_derived(Lam, A) - sas_identity(Lam, A)).applyfunc(sp.simplify)
    return diff == sp.zeros(d, d)


# ---------------------------------------------------------------- step 4: the loss
def second_moment_S(Lam: sp.Matrix, N=N_SYM) -> sp.Matrix:
    """M = E[S²] = Λ B (the identity at A = I)."""
    return sas_identity(Lam, sp.eye(Lam.shape[0]), N)


def B_matrix(Lam: sp.Matrix, N=N_SYM) -> sp.Matrix:
    """B = (1 + 1/N) Λ + tr(Λ)/N · I, whose inverse is the paper's Γ*."""
    return (1 + 1 / N) * Lam + Lam.trace() / N * sp.eye(Lam.shape[0])


def loss_matrix_form(G: sp.Matrix, Lam: sp.Matrix, N=N_SYM) -> sp.Expr:
    """L(Γ) = ½[tr(ΓᵀΛΓM) − 2 tr(ΛΓΛ) + tr Λ] (valid at every d; module docstring)."""
    M = second_moment_S(Lam, N)
    return ((G.T * Lam * G * M).trace() - 2 * (Lam * G * Lam).trace() + Lam.trace()) / 2


def derived_loss(G: sp.Matrix, Lam: sp.Matrix, N=N_SYM) -> sp.Expr:
    """L(Γ) = ½ E[(x_qᵀ Γ S w − wᵀ x_q)²], by expectations in stages on the model's own error
    (module docstring, step 4).  Cost grows fast with d: for d ≤ 3."""
    d = Lam.shape[0]
    S, _, _ = sample_cov_moments(Lam, N)
    xq = sp.symbols(f"xq0:{d}")
    w = sp.symbols(f"w0:{d}")
    r = (G * S - sp.eye(d)) * sp.Matrix(w)  # ŷ − y_q = x_qᵀ r
    # stage 1: over x_q ~ N(0, Λ), with r as d free symbols (then substituted)
    rs = sp.symbols(f"r0:{d}")
    err = sum(xq[a] * rs[a] for a in range(d)) ** 2 / 2
    e1 = expect(err, list(xq), Lam)
    e1 = e1.subs(dict(zip(rs, list(r))), simultaneous=True)
    # stage 2: over w ~ N(0, I)
    e2 = expect(e1, list(w), sp.eye(d))
    # stage 3: over S
    return expect_sample_cov(e2, Lam, N)


def check_loss_form(d: int, diagonal: bool) -> bool:
    """The staged expectation equals the matrix form exactly (symbolic Γ, Λ, N)."""
    G = matrix_symbols("g", d)
    Lam = symmetric_symbols("l", d, diagonal)
    return sp.simplify(sp.expand(derived_loss(G, Lam) - loss_matrix_form(G, Lam))) == 0


# ---------------------------------------------------------------- the minimiser
def stationary_point(d: int, diagonal: bool):
    """Solve ∇_Γ L = 0 for the derived loss (symbolic Λ and N): (Γ_solution, L at it, Λ)."""
    G = matrix_symbols("g", d)
    Lam = symmetric_symbols("l", d, diagonal)
    L = derived_loss(G, Lam) if d <= 2 or diagonal else loss_matrix_form(G, Lam)
    unknowns = list(G)
    grad = [sp.diff(L, g) for g in unknowns]
    (sol,) = sp.linsolve(grad, unknowns)
    Gsol = sp.Matrix(d, d, [sp.simplify(v) for v in sol])
    Lmin = sp.simplify(L.subs(dict(zip(unknowns, Gsol)), simultaneous=True))
    return Gsol, Lmin, Lam


def min_loss_closed_form(Lam: sp.Matrix, N=N_SYM) -> sp.Expr:
    """L* = ½ [tr Λ − tr(Λ² B⁻¹)]."""
    return (Lam.trace() - (Lam * Lam * B_matrix(Lam, N).inv()).trace()) / 2


def check_minimiser(d: int, diagonal: bool) -> dict:
    """The solved stationary point against the paper's Γ* = B⁻¹, and the minimal value against
    ½[tr Λ − tr(Λ² B⁻¹)]: symbolic equalities (simplify of the difference is 0)."""
    Gsol, Lmin, Lam = stationary_point(d, diagonal)
    gamma_ok = (Gsol - B_matrix(Lam).inv()).applyfunc(sp.simplify) == sp.zeros(d, d)
    value_ok = sp.simplify(Lmin - min_loss_closed_form(Lam)) == 0
    return {"d": d, "diagonal_Lambda": diagonal, "gamma_star_equal": bool(gamma_ok),
            "min_loss_equal": bool(value_ok), "solution": str(Gsol.tolist()) if d == 1 or diagonal else "(general Λ)"}


# ---------------------------------------------------------------- the LSA layer's gradient blocks
def lsa_block_structure(d: int, N: int) -> dict:
    """Which blocks of the full LSA layer receive a population gradient at the paper's init.

    Checked with min(N, 2) context columns: ŷ is a sum over the context columns of terms of one
    form (each column enters Z Zᵀ the same way), so the symbolic facts below at two columns hold
    at every N (and the symbolic expansion at N = 5, d = 3 takes 7 s instead of 1.4 s).

    The layer: Z = [[x_1 … x_N, x_q], [y_1 … y_N, 0]] ∈ R^{(d+1)×(N+1)},
    f(Z) = Z + W^{PV} Z (Zᵀ W^{KQ} Z) / N, ŷ = f(Z)_{d+1, N+1} (the residual entry there is 0).
    Blocks: W = [[W11, w12], [w21ᵀ, w22]] for both matrices.  With the label symbols y_i free:

    - a block with ∂ŷ/∂θ ≡ 0 (symbolically) never gets a gradient: it stays at its init;
    - on the set P = {w21^{PV} = 0, w21^{KQ} = 0} (other blocks free), the gradient integrand
      (ŷ − y_q) ∂ŷ/∂θ of w21^{PV} and w21^{KQ} is odd under y → −y (checked symbolically); since
      w → −w maps the prompt law to itself and flips every label, its expectation is 0, so P is
      invariant under the flow and, the paper's init lying in P, those blocks stay at 0;
    - the rest (W11^{KQ}, w22^{PV}) are the flow's variables (their gradient at init is nonzero,
      ``numerics.init_gradient`` shows it numerically).

    Returns {block: "no effect on ŷ" | "zero on P by parity" | "moves"}."""
    N = min(N, 2)
    x = sp.Matrix(d, N + 1, lambda a, i: sp.Symbol(f"x{a}_{i}", real=True))
    y = sp.symbols(f"y0:{N + 1}")  # y[N] is y_q, not in the prompt
    Z = x.col_join(sp.Matrix([[*y[:N], 0]]))
    PV = matrix_symbols("p", d + 1)
    KQ = matrix_symbols("k", d + 1)
    zq = Z[:, N]
    # ŷ = (row d+1 of W^{PV}) · Z · Zᵀ · (W^{KQ} z_q) / N
    yhat = sp.expand(((PV[d, :] * Z) * (Z.T * (KQ * zq)))[0, 0] / N)
    blocks = {
        "W11_PV": [PV[a, b] for a in range(d) for b in range(d)], "w12_PV": [PV[a, d] for a in range(d)],
        "w21_PV": [PV[d, a] for a in range(d)], "w22_PV": [PV[d, d]],
        "W11_KQ": [KQ[a, b] for a in range(d) for b in range(d)], "w12_KQ": [KQ[a, d] for a in range(d)],
        "w21_KQ": [KQ[d, a] for a in range(d)], "w22_KQ": [KQ[d, d]],
    }
    on_P = {s: 0 for s in blocks["w21_PV"] + blocks["w21_KQ"]}
    flip = {yi: -yi for yi in y}
    out = {}
    for name, params in blocks.items():
        derivs = [sp.diff(yhat, p) for p in params]
        if all(dv == 0 for dv in derivs):
            out[name] = "no effect on ŷ"
            continue
        if name in ("w21_PV", "w21_KQ"):
            odd = True
            for dv in derivs:
                g = sp.expand(((yhat - y[N]) * dv).subs(on_P))
                odd &= sp.expand(g.subs(flip, simultaneous=True) + g) == 0
            out[name] = "zero on P by parity" if odd else "moves"
        else:
            out[name] = "moves"
    return out


# ---------------------------------------------------------------- compiled (numpy) functions
@lru_cache(maxsize=None)
def compiled(d: int):
    """(loss, grad, min_loss, B) as numpy functions of (Γ, Λ, N), from the matrix form with
    symbolic Γ, symmetric Λ and N via ``sympy.lambdify`` (cse); grad returns a d × d array."""
    G = matrix_symbols("g", d)
    Lam = symmetric_symbols("l", d)
    L = loss_matrix_form(G, Lam)
    grad = sp.Matrix(d, d, lambda a, b: sp.diff(L, G[a, b]))
    Gs = [[G[a, b] for b in range(d)] for a in range(d)]
    Ls = [[Lam[a, b] for b in range(d)] for a in range(d)]
    Bm = B_matrix(Lam)
    # L* from the closed form: ½[tr Λ − tr(Λ² B⁻¹)], with B⁻¹ as a matrix argument (Binv)
    Bi = matrix_symbols("bi", d)
    Lstar = ((Lam.trace() - (Lam * Lam * Bi).trace()) / 2)
    Bis = [[Bi[a, b] for b in range(d)] for a in range(d)]
    f_loss = sp.lambdify([Gs, Ls, N_SYM], L, "numpy", cse=True)
    f_grad = sp.lambdify([Gs, Ls, N_SYM], grad, "numpy", cse=True)
    f_B = sp.lambdify([Ls, N_SYM], Bm, "numpy", cse=True)
    f_Lstar = sp.lambdify([Ls, Bis], Lstar, "numpy", cse=True)
    return f_loss, f_grad, f_Lstar, f_B


def loss(G, Lam, N) -> float:
    """The derived L(Γ) (compiled)."""
    Lam = np.asarray(Lam, float)
    return float(compiled(Lam.shape[0])[0](np.asarray(G, float), Lam, N))


def grad(G, Lam, N) -> np.ndarray:
    """∇_Γ L (compiled)."""
    Lam = np.asarray(Lam, float)
    return np.asarray(compiled(Lam.shape[0])[1](np.asarray(G, float), Lam, N), float)


def gamma_star(Lam, N) -> np.ndarray:
    """The paper's Γ* = ((1 + 1/N)Λ + tr(Λ)/N · I)⁻¹ (B compiled, inverted numerically)."""
    Lam = np.asarray(Lam, float)
    return np.linalg.inv(np.asarray(compiled(Lam.shape[0])[3](Lam, N), float))


def min_loss(Lam, N) -> float:
    """L* = ½[tr Λ − tr(Λ² B⁻¹)] (compiled)."""
    Lam = np.asarray(Lam, float)
    return float(compiled(Lam.shape[0])[2](Lam, gamma_star(Lam, N)))


def strong_convexity(Lam, N) -> float:
    """μ = λ_min(Λ)·λ_min(M), M = E[S²] = Λ B: the smallest eigenvalue of L's Hessian M ⊗ Λ, so
    ‖Γ − Γ*‖_F ≤ ‖∇_Γ L(Γ)‖_F / μ for every Γ."""
    Lam = np.asarray(Lam, float)
    M = Lam @ np.linalg.inv(gamma_star(Lam, N))
    return float(np.linalg.eigvalsh(Lam)[0] * np.linalg.eigvalsh((M + M.T) / 2)[0])
