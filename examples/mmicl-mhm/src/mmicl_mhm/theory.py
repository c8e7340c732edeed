r"""The one-layer LSA's population loss and its minimiser, derived with SymPy.

**Model.** Context x_1, …, x_n and query x_q i.i.d. N(0, Σ) in R^d; a task w ~ N(0, I_d); labels
y = g(wᵀx) + ε with ε ~ N(0, s²) independent label noise (s² = ``s2_sym``) and a fixed odd function g
(``g(z) = z`` is noisy linear regression).  The noise adds s²Σ/n to M and s² to E[y²], nothing to B.  One LSA layer's
prediction, reduced to the part that is odd in the labels, is ŷ = x_qᵀ Γ h with
h = (1/n) Σ_i y_i x_i: one step of gradient descent, preconditioned by Γ, from w = 0 on the
least-squares loss (1/2n) Σ_i (y_i − wᵀx_i)², whose gradient at 0 is −h.  (The even part of the full
layer cannot lower the loss for odd g: numerics.)

**Loss.** With β = E[y x | w] and the convention L(Γ) = ½E[(ŷ − y_q)²] (the ½ as in the paper's
square loss; it changes no minimiser),

    L(Γ) = ½[tr(Γᵀ Σ Γ M) − 2 tr(Γ B) + E[y²]],   M = E[h hᵀ] = E[y² x xᵀ]/n + (1 − 1/n) B,   B = E[β βᵀ],

because x_q is independent of h given w.  ∇L = ΣΓM − B = 0 gives Γ* = Σ⁻¹ B M⁻¹.

**Isotropic Σ = I.** w ↦ Rw, x ↦ Rx (R orthogonal) leaves the law unchanged, so M = m I, B = b I
and Γ* = (b/m) I: **one step of plain gradient descent** with step η* = b/m.  Writing w·x = ρ z with
ρ = |w| (ρ² ~ χ²_d) and z ~ N(0, 1): β = (w/ρ) E_z[g(ρz) z], so b = E_ρ[E_z[g(ρz) z]²]/d, and
E[y² |x|²] = E_ρ E_z[g(ρz)²(z² + d − 1)] (the rest of x is independent of z).  The moments E[ρ^{2k}]
are integrated over the χ_d density with d a symbol; the Gaussian ones over z.  ``direct_moments``
integrates M and B again without the rotation argument, coordinate by coordinate, at d = 1, 2 (a
check of the argument, for polynomial g).

**Linear target, any Σ.** With g(z) = z, β = Σw; ``direct_moments`` at diagonal Σ = diag(s_a) with
the s_a symbols gives M and B, and Γ* solves ΣΓM = B: one step of *preconditioned* GD, with
preconditioner ((1 + 1/n)Σ + (tr Σ + s²)/n·I)⁻¹.
For a rotated Σ = U D Uᵀ, M(Σ) = U M(D) Uᵀ and B(Σ) = U B(D) Uᵀ (the law is equivariant).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import sympy as sp

__all__ = ["z", "d_sym", "n_sym", "s2_sym", "parse_target", "is_odd", "is_linear", "isotropic_moments", "optimal_step",
           "direct_moments", "stationary_gamma", "preconditioner", "compiled_isotropic",
           "linear_moments_numeric", "gamma_star", "loss", "min_loss", "TargetError"]

z = sp.Symbol("z", real=True)
rho = sp.Symbol("rho", positive=True)
_r = sp.Symbol("r", positive=True)
d_sym, n_sym = sp.symbols("d n", positive=True)
s2_sym = sp.Symbol("noise_var", nonnegative=True)  # s²; not "s2", a name the diagonal of Σ uses


class TargetError(ValueError):
    """A target function the plugin cannot take (the message says why)."""


_NAMES = {"z", "Abs", "abs", "sign"}


def parse_target(text: str) -> sp.Expr:
    """The target g(z) from text such as ``z**3`` or ``z*Abs(z)``: numbers, ``z``, ``Abs``, ``sign``,
    + − * / ** and parentheses (the text is checked against that alphabet before SymPy reads it)."""
    import re

    if not isinstance(text, str) or not re.fullmatch(r"[\sz0-9.+\-*/()A-Za-z]*", text) or \
            set(re.findall(r"[A-Za-z_]+", re.sub(r"(?<![A-Za-z_])\d*\.?\d+[eE][+-]?\d+", "1", text))) - _NAMES:
        raise TargetError(f"target={text!r} must be an expression in z alone, made of numbers, z, Abs, sign, "
                          "+ - * / ** and parentheses, e.g. z**3 or z*Abs(z)")
    try:
        g = sp.sympify(text, locals={"z": z, "Abs": sp.Abs, "abs": sp.Abs, "sign": sp.sign})
    except (sp.SympifyError, SyntaxError, TypeError) as e:
        raise TargetError(f"target={text!r} is not an expression in z ({e})") from None
    if not isinstance(g, sp.Expr) or g.free_symbols - {z}:
        raise TargetError(f"target={text!r} must be an expression in z alone, e.g. z**3 or z*Abs(z)")
    return g


def is_odd(g: sp.Expr) -> bool:
    return sp.simplify(g.subs(z, -z) + g) == 0


def is_linear(g: sp.Expr) -> bool:
    return sp.simplify(sp.diff(g, z, 2)) == 0 and g.subs(z, 0) == 0


@lru_cache(maxsize=None)
def _gauss(expr: sp.Expr) -> sp.Expr:
    """E over z ~ N(0, 1)."""
    return sp.simplify(sp.integrate(sp.expand(expr) * sp.exp(-z**2 / 2), (z, -sp.oo, sp.oo)) / sp.sqrt(2 * sp.pi))


@lru_cache(maxsize=None)
def _chi_moment(k: int) -> sp.Expr:
    """E[ρ^{2k}] for ρ² ~ χ²_d, d a symbol: the ratio of two integrals over the χ_d density."""
    num = sp.integrate(_r ** (2 * k + d_sym - 1) * sp.exp(-_r**2 / 2), (_r, 0, sp.oo), conds="none")
    den = sp.integrate(_r ** (d_sym - 1) * sp.exp(-_r**2 / 2), (_r, 0, sp.oo), conds="none")
    return sp.factor(sp.gammasimp(num / den))


def _over_rho(expr: sp.Expr) -> sp.Expr:
    """E over ρ of a polynomial in ρ² (odd powers of ρ are refused: they do not occur for odd g)."""
    poly = sp.Poly(sp.expand(expr), rho)
    out = 0
    for (k,), c in poly.terms():
        if k % 2:
            raise TargetError("a moment of the target is not a polynomial in |w|²: not derivable here")
        out += c * _chi_moment(k // 2)
    return sp.factor(sp.simplify(out))


@lru_cache(maxsize=None)
def isotropic_moments(g: sp.Expr) -> dict:
    """b, m (M = m I, B = b I) and E[y²] for Σ = I, as expressions in d and n (module docstring)."""
    gz = g.subs(z, rho * z)
    beta = _gauss(gz * z)
    b = sp.factor(_over_rho(beta**2) / d_sym)
    y2x2 = _over_rho(_gauss(gz**2 * (z**2 + d_sym - 1))) + s2_sym * d_sym  # E[ε²|x|²] = s²d
    m = sp.factor(sp.simplify(y2x2 / (d_sym * n_sym) + (1 - 1 / n_sym) * b))
    ey2 = _over_rho(_gauss(gz**2)) + s2_sym
    return {"b": b, "m": m, "ey2": ey2, "beta_given_rho": sp.simplify(beta)}


def optimal_step(g: sp.Expr) -> sp.Expr:
    """η*(d, n) = b/m: the step of the one GD step that the optimal layer takes (Σ = I)."""
    mo = isotropic_moments(g)
    return sp.factor(sp.simplify(mo["b"] / mo["m"]))


# ---------------------------------------------------------------- the direct route
@lru_cache(maxsize=None)
def _std_moment(k: int) -> sp.Expr:
    return _gauss(z**k)


def _expect(expr: sp.Expr, variables: tuple) -> sp.Expr:
    """E over independent N(0, 1) ``variables`` of a polynomial in them."""
    poly = sp.Poly(sp.expand(expr), *variables)
    return sp.expand(sum(c * sp.prod([_std_moment(k) for k in mon]) for mon, c in poly.terms()))


@lru_cache(maxsize=None)
def direct_moments(g: sp.Expr, dim: int, diagonal_sigma: bool = False) -> dict:
    """M, B (dim × dim, M in n) and E[y²], integrated coordinate by coordinate for polynomial g:
    x_a = √s_a ξ_a with ξ, w independent N(0, 1) coordinates (s_a = 1 unless ``diagonal_sigma``)."""
    if not g.is_polynomial(z):
        raise TargetError("the direct route integrates polynomial targets only")
    xi = sp.symbols(f"xi0:{dim}", real=True)
    w = sp.symbols(f"w0:{dim}", real=True)
    eps = (sp.Symbol("eps", real=True),)
    s = sp.symbols(f"s0:{dim}", positive=True) if diagonal_sigma else (sp.Integer(1),) * dim
    x = [sp.sqrt(s[a]) * xi[a] for a in range(dim)]
    y = g.subs(z, sum(w[a] * x[a] for a in range(dim))) + sp.sqrt(s2_sym) * eps[0]
    beta = [_expect(y * x[a], xi + eps) for a in range(dim)]
    B = sp.Matrix(dim, dim, lambda a, c: _expect(beta[a] * beta[c], w))
    Y2X = sp.Matrix(dim, dim, lambda a, c: _expect(y**2 * x[a] * x[c], xi + w + eps))
    M = (Y2X / n_sym + (1 - 1 / n_sym) * B).applyfunc(sp.simplify)
    return {"M": M, "B": B, "ey2": _expect(y**2, xi + w + eps), "Sigma": sp.diag(*s)}


def stationary_gamma(M: sp.Matrix, B: sp.Matrix, Sigma: sp.Matrix) -> sp.Matrix:
    """Γ solving ∇L = ΣΓM − B = 0, by linear solve over the entries of Γ."""
    dim = M.shape[0]
    G = sp.Matrix(dim, dim, lambda a, c: sp.Symbol(f"g{a}{c}"))
    eqs = list(Sigma * G * M - B)
    (sol,) = sp.linsolve(eqs, list(G))
    return sp.Matrix(dim, dim, [sp.simplify(v) for v in sol])


def preconditioner(Sigma: sp.Matrix) -> sp.Matrix:
    """The closed form of the optimal preconditioner for the linear target with label noise s²:
    ((1 + 1/n)Σ + (tr(Σ) + s²)/n · I)⁻¹."""
    return ((1 + 1 / n_sym) * Sigma + (Sigma.trace() + s2_sym) / n_sym * sp.eye(Sigma.shape[0])).inv()


# ---------------------------------------------------------------- compiled (numpy) functions
@lru_cache(maxsize=None)
def compiled_isotropic(g: sp.Expr):
    """(m, b, E y²) as numpy functions of (d, n, s²), Σ = I: ``loss`` and ``gamma_star`` build on them."""
    mo = isotropic_moments(g)
    return tuple(sp.lambdify((d_sym, n_sym, s2_sym), mo[k], "numpy") for k in ("m", "b", "ey2"))


@lru_cache(maxsize=None)
def _linear_diag(dim: int):
    mo = direct_moments(z, dim, diagonal_sigma=True)
    s = list(mo["Sigma"].diagonal())
    return (sp.lambdify([s, n_sym, s2_sym], mo["M"], "numpy"), sp.lambdify([s], mo["B"], "numpy"),
            sp.lambdify([s, s2_sym], mo["ey2"], "numpy"))


def linear_moments_numeric(Sigma: np.ndarray, n: int, noise: float = 0.0, slope: float = 1.0) -> dict:
    """M, B, E[y²] for the linear target y = slope·wᵀx + ε at a symmetric positive definite Σ: the
    diagonal derivation (at noise s/slope), rotated (Σ = U D Uᵀ ⇒ M = U M(D) Uᵀ), times slope²."""
    Sigma = np.asarray(Sigma, float)
    vals, U = np.linalg.eigh((Sigma + Sigma.T) / 2)
    fM, fB, fy = _linear_diag(Sigma.shape[0])
    s2 = (noise / slope) ** 2
    M = U @ np.asarray(fM(list(vals), n, s2), float) @ U.T
    B = U @ np.asarray(fB(list(vals)), float) @ U.T
    return {"M": slope**2 * M, "B": slope**2 * B, "ey2": slope**2 * float(fy(list(vals), s2))}


def _moments_numeric(g: sp.Expr, Sigma: np.ndarray, n: int, noise: float = 0.0) -> dict:
    Sigma = np.asarray(Sigma, float)
    d = Sigma.shape[0]
    if is_linear(g):
        mo = linear_moments_numeric(Sigma, n, noise, float(sp.diff(g, z)))
        return {**mo, "Sigma": Sigma}
    if not np.array_equal(Sigma, np.eye(d)):
        raise TargetError("a non-linear target is derived for Σ = I only")
    fm, fb, fy = compiled_isotropic(g)
    s2 = noise**2
    return {"M": float(fm(d, n, s2)) * np.eye(d), "B": float(fb(d, n, s2)) * np.eye(d), "ey2": float(fy(d, n, s2)),
            "Sigma": Sigma}


def gamma_star(g: sp.Expr, Sigma: np.ndarray, n: int, noise: float = 0.0) -> np.ndarray:
    """Γ* = Σ⁻¹ B M⁻¹ (``noise``: the standard deviation s of the label noise)."""
    mo = _moments_numeric(g, Sigma, n, noise)
    return np.linalg.solve(mo["Sigma"], mo["B"]) @ np.linalg.inv(mo["M"])


def loss(g: sp.Expr, Gamma: np.ndarray, Sigma: np.ndarray, n: int, noise: float = 0.0) -> float:
    """L(Γ) = ½[tr(ΓᵀΣΓM) − 2 tr(ΓB) + E y²]."""
    mo = _moments_numeric(g, Sigma, n, noise)
    G = np.asarray(Gamma, float)
    return float(0.5 * (np.trace(G.T @ mo["Sigma"] @ G @ mo["M"]) - 2 * np.trace(G @ mo["B"]) + mo["ey2"]))


def min_loss(g: sp.Expr, Sigma: np.ndarray, n: int, noise: float = 0.0) -> float:
    return loss(g, gamma_star(g, Sigma, n, noise), Sigma, n, noise)
