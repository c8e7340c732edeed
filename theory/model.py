"""The latent-factor model (docs/model.md) and its Bayes predictor, derived in SymPy.

For one prompt with task ``m = [v; r]``, ``s = ‖m‖²``, and label scale ``ζ``, each token is

    u ~ N(0, 1),   x = u·m + ε  (ε ~ N(0, I_d)),   y = ζ·u,

so ``Cov(x) = Λ = I + m mᵀ``.  Write ``m̂ = m/√s`` and the coordinate ``a = m̂ᵀx = √s·u + g``
with ``g = m̂ᵀε ~ N(0, 1)``.  The coordinates of ``x`` orthogonal to ``m`` are pure noise,
independent of ``(u, a)``, so every predictor that matters is a multiple of ``a`` and every risk is
an expectation over the two independent standard normals ``(u, g)``.  This module computes those
expectations exactly (Isserlis' rule for Gaussian monomials) rather than writing the answers down.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

__all__ = [
    "s",
    "zeta",
    "lam",
    "u",
    "g",
    "m_dot_x",
    "gaussian_expectation",
    "reduced_coordinate",
    "label",
    "risk_of_coefficient",
    "BayesPredictor",
    "bayes_predictor",
]

s = sp.Symbol("s", nonnegative=True)  # ‖m‖²
zeta = sp.Symbol("zeta", real=True)  # label scale
lam = 1 + s  # the eigenvalue of Λ on span{m}
u, g = sp.symbols("u g", real=True)  # latent factor, noise along m̂
m_dot_x = sp.Symbol("m_dot_x", real=True)  # mᵀx for a token x (= √s·a)

reduced_coordinate = sp.sqrt(s) * u + g  # a = m̂ᵀ x
label = zeta * u  # y


def gaussian_expectation(expr: sp.Expr, variables=(u, g)) -> sp.Expr:
    """``E[expr]`` for a polynomial in independent standard normals: ``E[z^k] = (k − 1)!!`` for even
    ``k`` and 0 for odd ``k``, applied monomial by monomial."""
    poly = sp.Poly(sp.expand(expr), *variables)
    total = sp.Integer(0)
    for powers, coeff in poly.terms():
        term = coeff
        for k in powers:
            term *= 0 if k % 2 else sp.factorial2(k - 1)
        total += term
    return sp.simplify(total)


def risk_of_coefficient(c: sp.Expr) -> sp.Expr:
    """The squared risk ``E[(y − c·a)²]`` of the predictor ``ŷ = c·a`` (for one prompt)."""
    return gaussian_expectation((label - c * reduced_coordinate) ** 2)


@dataclass(frozen=True)
class BayesPredictor:
    """``E[y | x] = coefficient · a`` (in full coordinates ``w = coefficient · m̂``) and its risk."""

    coefficient: sp.Expr
    risk: sp.Expr

    @property
    def weight_along_m(self) -> sp.Expr:
        """The factor ``k`` in ``w = k·m`` (``w = coefficient · m/√s``)."""
        return sp.simplify(self.coefficient / sp.sqrt(s))

    @property
    def prediction(self) -> sp.Expr:
        """``E[y | x] = k · mᵀx`` in the symbols ``s``, ``zeta`` and ``m_dot_x`` (= mᵀx): what a
        batch of prompts with known tasks needs (``numerics.models.bayes_prediction``)."""
        return self.weight_along_m * m_dot_x


@lru_cache(maxsize=None)
def bayes_predictor() -> BayesPredictor:
    """Derive the Bayes predictor: ``(u, a)`` are jointly Gaussian, so ``E[y | a]`` is linear in
    ``a``; its coefficient minimises the quadratic risk ``E[(y − c a)²]`` (Gaussian conditioning)."""
    c = sp.Symbol("c", real=True)
    r = risk_of_coefficient(c)
    (c_star,) = sp.solve(sp.diff(r, c), c)
    return BayesPredictor(coefficient=sp.simplify(c_star), risk=sp.simplify(r.subs(c, c_star)))
