"""Variants of the LCA as data: its readout, its initial state F⁰, its skip and its parametrisation.

mmicl's default (the convention of docs/conventions.md) is the LCA of the paper read as: keys the
raw context tokens, the query the evolved one, ``F⁰ = 0``, the skip on, tied weights
``W^S = −W^V = α I``.  The paper leaves these choices open; each other choice is a *variant*, and
everything about it is derived here from one description, ``Variant``:

- ``readout``: ``raw-keys`` (``ŷ = (1/n) Σ y_i x_iᵀ F^T_q``), ``evolved-keys`` (``Σ y_i F^Tᵀ_i x_q``)
  or ``evolved-keys-and-query`` (``Σ y_i F^Tᵀ_i F^T_q``);
- ``f0``: ``zero`` (``F⁰ = 0``) or ``tokens`` (``F⁰ = X``, every column starts at its token);
- ``skip``: ``on`` (each layer adds ``W^S x``) or ``off``;
- ``param``: ``one`` (``W^S = α I``, ``W^V = −α I``), ``two`` (``W^S = α I``, ``W^V = β I``) or
  ``untied`` (one α per layer: derived for the default only, ``theory.untied``).

In the large-context limit every column evolves by the same layer map
``F ↦ F + W^S X + W^V Λ F`` (Λ = I + m mᵀ), so ``F^T = P_T(Λ) X`` with ``P_T(λ)`` the solution of
``p_t = (1 + w_V λ) p_{t−1} + w_S``, ``p_0 = 0`` or ``1`` (``rsolve``, symbolic T), and the readout
is ``ζ √s Q a`` with ``Q = P_T(λ)`` (either raw side) or ``P_T(λ)²`` (both evolved)
(``theory.lca.readout_factor``).  The excess over Bayes per ζ² follows from
``theory.model.risk_of_coefficient``.

**Large depth.**  As ``T → ∞`` a sequence of parameters either stays fixed inside the stable set
(``|1 + w_V λ| < 1`` on the support: ``q^T → 0``, the *stable family*) or shrinks like ``φ/T``
(``q^T → e^{φ_V λ}``, the *scaled family*, ``sp.limit``); other sequences diverge or, for a law
without an atom at the top of its support, tend to a member of these two.  The *floor* of a variant
on a law is the least excess over the two families: ``numerics.variants.floor``.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from functools import lru_cache

import sympy as sp

from .errors import InputError
from .lca import READOUTS, T, alpha, beta, readout_factor  # noqa: F401 (alpha, beta: re-exported)
from .model import bayes_predictor, lam, risk_of_coefficient, s, zeta

__all__ = [
    "READOUTS", "F0S", "SKIPS", "PARAMETRISATIONS", "Variant", "DEFAULT", "VariantError",
    "VariantModel", "derive", "p", "tau", "a_scaled", "b_scaled", "ratio",
]

F0S = ("zero", "tokens")
SKIPS = ("on", "off")
PARAMETRISATIONS = ("one", "two", "untied")
_CHOICES = {"readout": READOUTS, "f0": F0S, "skip": SKIPS, "param": PARAMETRISATIONS}

p = sp.Symbol("p", real=True)  # the query factor P_T(λ), as a state
tau = sp.Symbol("tau", real=True)  # one parameter of the scaled family: α = τ/T
a_scaled, b_scaled = sp.symbols("a b", real=True)  # two parameters of the scaled family: α = a/T, β = b/T
ratio = sp.Symbol("c", real=True)  # the stable family of two parameters: P → c/λ with c = −α/β
_t = sp.Symbol("t", integer=True, nonnegative=True)


class VariantError(InputError):
    """A variant that is not one of the described choices, or that a derivation does not cover."""


@dataclass(frozen=True)
class Variant:
    """One point of the description: ``readout``, ``f0``, ``skip``, ``param`` (module docstring).
    ``Variant()`` is mmicl's default; ``Variant.parse("readout=evolved-keys-and-query")`` another."""

    readout: str = "raw-keys"
    f0: str = "zero"
    skip: str = "on"
    param: str = "one"

    def __post_init__(self):
        for f in fields(self):
            v = getattr(self, f.name)
            if v not in _CHOICES[f.name]:
                raise VariantError(f"variant {f.name}={v!r}: one of {', '.join(_CHOICES[f.name])}")

    @classmethod
    def parse(cls, text: "str | Variant | None") -> "Variant":
        """``key=value`` pairs separated by commas (keys ``readout``, ``f0``, ``skip``, ``param``;
        any left out keep the default); ``""``, ``"default"`` or None: the default."""
        if isinstance(text, Variant):
            return text
        if text is None or not str(text).strip() or str(text).strip() == "default":
            return cls()
        if not isinstance(text, str):
            raise VariantError(f"a variant is text such as 'readout=evolved-keys-and-query,skip=on', got {text!r}")
        given: dict[str, str] = {}
        for item in text.split(","):
            key, eq, value = (x.strip() for x in item.partition("="))
            if not eq or key not in _CHOICES:
                raise VariantError(f"variant {text!r}: {item.strip()!r} is not key=value with a key among "
                                   f"{', '.join(_CHOICES)} (e.g. 'readout=evolved-keys-and-query,f0=tokens')")
            if key in given:
                raise VariantError(f"variant {text!r}: {key} given twice")
            given[key] = value
        return cls(**given)

    @property
    def text(self) -> str:
        """All four choices, ``readout=…,f0=…,skip=…,param=…`` (what ``parse`` reads back)."""
        return ",".join(f"{f.name}={getattr(self, f.name)}" for f in fields(self))

    @property
    def short(self) -> str:
        """The choices that differ from the default (``"default"`` for the default itself)."""
        return ",".join(f"{f.name}={getattr(self, f.name)}" for f in fields(self)
                        if getattr(self, f.name) != f.default) or "default"

    @property
    def is_default(self) -> bool:
        return self == DEFAULT

    @property
    def unsupported(self) -> str | None:
        """Why no derivation covers this variant, or None where one does."""
        if self.param == "untied" and (self.readout == "evolved-keys-and-query" or self.f0 != "zero" or self.skip != "on"):
            return ("the untied LCA (one α per layer) is derived only with f0=zero, skip=on and a raw side in "
                    "the readout (raw-keys or evolved-keys); drop param=untied or those choices")
        return None

    def require_supported(self) -> "Variant":
        if self.unsupported:
            raise VariantError(f"variant {self.text}: {self.unsupported}")
        return self

    def __str__(self) -> str:
        return self.text


DEFAULT = Variant()


@dataclass(frozen=True)
class VariantModel:
    """What ``derive`` gives for one variant (tied or two-parameter).

    ``params``: the parameters the prediction depends on (none where it is 0 at every parameter:
    ``F⁰ = 0`` with the skip off); ``w_skip``, ``w_value``, ``p0``: the layer map
    ``p ↦ (1 + w_value λ) p + w_skip`` from ``p0``; ``factor``: ``P_T(λ)`` for symbolic ``T``;
    ``readout``: ``Q`` as an expression in the state ``p``; ``excess_of_state``: the excess over
    Bayes per ζ² as a function of ``p`` and ``s``; ``excess``: the same at ``p = P_T(λ)``;
    ``stable``: ``lim P_T`` for fixed parameters in the stable set (in ``ratio`` for two
    parameters), with ``stable_params``; ``scaled``: ``lim P_T`` along ``params = φ/T`` with
    ``scaled_params`` (φ)."""

    variant: Variant
    params: tuple[sp.Symbol, ...]
    w_skip: sp.Expr
    w_value: sp.Expr
    p0: sp.Expr
    factor: sp.Expr
    readout: sp.Expr
    excess_of_state: sp.Expr
    excess: sp.Expr
    stable: sp.Expr
    stable_params: tuple[sp.Symbol, ...]
    scaled: sp.Expr
    scaled_params: tuple[sp.Symbol, ...]

    @property
    def step(self) -> sp.Expr:
        """One layer acting on the state ``p``."""
        return (1 + self.w_value * lam) * p + self.w_skip


def _factor(w_skip: sp.Expr, w_value: sp.Expr, p0: sp.Expr) -> sp.Expr:
    f = sp.Function("P")
    sol = sp.rsolve(f(_t + 1) - (1 + w_value * lam) * f(_t) - w_skip, f(_t), {f(0): p0})
    if sol is None:
        raise RuntimeError("rsolve could not solve the layer recurrence")
    return sp.simplify(sol.subs(_t, T))


@lru_cache(maxsize=None)
def derive(variant: Variant) -> VariantModel:
    """The model of ``variant`` (see ``VariantModel``); ``VariantError`` for an untied variant (the
    untied LCA is ``theory.untied``) or one that ``Variant.unsupported`` names."""
    variant = Variant.parse(variant).require_supported()
    if variant.param == "untied":
        raise VariantError("the untied LCA has one parameter per layer: its model is theory.untied, not derive()")
    skip = 1 if variant.skip == "on" else 0
    if variant.param == "one":
        w_skip, w_value, scaled_by = skip * alpha, -alpha, {alpha: tau / T}
        stable_sub, stable_params, scaled_params = {}, (), (tau,)
    else:
        w_skip, w_value, scaled_by = skip * alpha, beta, {alpha: a_scaled / T, beta: b_scaled / T}
        stable_sub, stable_params, scaled_params = {alpha: -ratio * beta}, (ratio,), (a_scaled, b_scaled)
    p0 = sp.Integer(0 if variant.f0 == "zero" else 1)
    factor = _factor(w_skip, w_value, p0)
    params = tuple(x for x in (alpha, beta) if factor.has(x))
    scaled_params = tuple(x for x, q in zip(scaled_params, [alpha, beta]) if q in params) if params else ()
    stable_params = stable_params if alpha in params and skip else ()
    readout = readout_factor(variant.readout, p)
    c = sp.Symbol("c_readout", real=True)
    per_zeta2 = (risk_of_coefficient(c).subs(c, zeta * sp.sqrt(s) * readout) - bayes_predictor().risk) / zeta**2
    excess_of_state = sp.factor(sp.simplify(sp.expand(per_zeta2)))
    if excess_of_state.has(zeta):
        raise RuntimeError(f"{variant}: the excess is not ζ² times a function of s and the state")
    # fixed parameters in the stable set: every power q^T → 0
    stable = sp.simplify(factor.subs(stable_sub).replace(lambda x: x.is_Pow and x.exp.has(T), lambda x: sp.Integer(0)))
    scaled = sp.simplify(sp.limit(factor.subs(scaled_by), T, sp.oo)) if params else factor
    return VariantModel(
        variant=variant, params=params, w_skip=w_skip, w_value=w_value, p0=p0, factor=factor,
        readout=readout, excess_of_state=excess_of_state,
        excess=sp.simplify(excess_of_state.subs(p, factor)),
        stable=stable, stable_params=stable_params, scaled=scaled, scaled_params=scaled_params,
    )
