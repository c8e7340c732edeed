"""Numerics of the LCA variants (``theory.variants``): population loss, minimiser, excess, floor.

Everything here is compiled from ``theory.variants.derive``; nothing is typed per variant.

- **The loss at depth T**, ``VariantLoss``: the expectation over the law of s (``law.rule``, which
  carries ``E[ζ²]``) of the derived excess per ζ² at the state ``P_T(λ)``, with its gradient and
  Hessian in the parameters.  ``P_T`` and its parameter derivatives are obtained by iterating
  the derived layer map T times from ``F⁰`` (a jet: the layer and its derivatives, differentiated
  by SymPy), so there is no closed form to divide by (the two-parameter ``P_T`` has a removable
  pole at β = 0) and every value is a finite sum of products.  A parameter where the state
  overflows float64 has loss ``+inf``.
- **The minimiser**, ``minimise``: the loss is not convex for every variant (with both sides
  evolved it has a branch at α < 0, where ``P_T < 0`` and ``P_T²`` still grows), so the search is
  global over the region the depth-T model can use — the scaled range ``params = φ/T`` and the
  stable set — on a grid, then a local Newton-type refinement (trust region) from the best grid
  points.  It is a search, not a certificate: ``MinimiseResult.grid`` says how many points it saw.
- **The floor**, ``floor``: the least excess as ``T → ∞``, the minimum over the stable family and
  the scaled family (``theory.variants``), each minimised the same way.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import sympy as sp
from scipy import optimize

from mmicl.theory import variants as tv
from .resolution import flag_resolution, is_below_resolution
from mmicl.theory.compile import compiled
from mmicl.theory.model import s as s_sym
from mmicl.numerics.laws.task import TaskLaw
from mmicl.numerics.laws.language import takes_law
from .validate import MAX_DEPTH_VARIANT, MAX_FLOW_EVALUATIONS, InputError, check_depth, check_finite

__all__ = ["Variant", "DEFAULT_VARIANT", "parse_variant", "VariantLoss", "MinimiseResult", "Floor", "VariantFlow",
           "FLOW_OUTCOMES", "minimise", "floor", "excess_at", "gradient_flow", "closed_form", "MAX_DEPTH_VARIANT",
           "REST_STEP", "STATIONARY_STEP", "resolution", "matrix_excess_variant"]


GRID = {1: 161, 2: 41}
"""Grid points per parameter of the global search (``minimise``, ``floor``), by the number of
parameters (a 41 × 41 grid for two)."""


Variant = tv.Variant
DEFAULT_VARIANT = tv.DEFAULT


def parse_variant(text) -> tv.Variant:
    """``Variant.parse`` with a bad text as one ``InputError`` line (the keys, values and an
    example), and a variant that no derivation covers refused the same way."""
    try:
        return tv.Variant.parse(text).require_supported()
    except tv.VariantError as e:
        raise InputError(str(e)) from None


def _key(variant: tv.Variant) -> str:
    return re.sub(r"[^A-Za-z0-9]", "_", variant.text)


def _orders(k: int) -> list[tuple[int, ...]]:
    return [()] + [(i,) for i in range(k)] + [(i, j) for i in range(k) for j in range(i, k)]


def _jet_build(variant: tv.Variant):
    """The layer and the loss as functions of the jet ``(P, ∂P, ∂²P)`` in the parameters: the
    state ``P`` is a function of the parameters, the layer and the excess are differentiated by
    SymPy and the derivatives of ``P`` replaced by state symbols."""
    model = tv.derive(variant)
    params = model.params
    orders = _orders(len(params))
    R = sp.Function("R")(*params)
    state = sp.symbols([f"p{i}" for i in range(len(orders))], real=True)
    table = {(sp.diff(R, *[params[i] for i in o]) if o else R): x for o, x in zip(orders, state)}

    def to_state(e):
        for k in sorted(table, key=lambda d: -len(getattr(d, "variables", ()))):
            e = e.subs(k, table[k])
        return e

    step = model.step.subs(tv.p, R)
    if not params:  # P_T ≡ 0 whatever the weights (F⁰ = 0, no skip): the weights drop out
        step = step.subs({tv.alpha: 0, tv.beta: 0})
    loss = model.excess_of_state.subs(tv.p, R)
    steps = [to_state(sp.diff(step, *[params[i] for i in o]) if o else step) for o in orders]
    losses = [to_state(sp.diff(loss, *[params[i] for i in o]) if o else loss) for o in orders]
    return [*steps, *losses], [*state, *params, s_sym]


def _family_build(variant: tv.Variant, which: str):
    """The excess per ζ² on the stable or the scaled family, with its gradient and Hessian in the
    family's parameters."""
    model = tv.derive(variant)
    P, params = (model.stable, model.stable_params) if which == "stable" else (model.scaled, model.scaled_params)
    e = model.excess_of_state.subs(tv.p, P)
    return [sp.diff(e, *[params[i] for i in o]) if o else e for o in _orders(len(params))], [*params, s_sym]


@lru_cache(maxsize=None)
def _jet(variant: tv.Variant):
    return compiled("variant_jet_" + _key(variant), lambda: _jet_build(variant))


@lru_cache(maxsize=None)
def _family(variant: tv.Variant, which: str):
    return compiled(f"variant_{which}_" + _key(variant), lambda: _family_build(variant, which))


def _supported(variant) -> tv.Variant:
    v = parse_variant(variant)
    if v.param == "untied":
        raise InputError(f"variant {v.text}: the untied LCA has its own numerics (mmicl.untied_excess, "
                         "mmicl.optimal_schedule), one α per layer; these functions take param=one or param=two")
    return v


def _bounded(law: TaskLaw, T: int = 1) -> tuple[float, float]:
    """The ends of s, for a law with signal that float64 resolves at depth ``T`` (the rule of the
    default LCA, ``TaskLaw.float64_unresolved``); a ``LawError`` otherwise."""
    sig = law.require_signal("the LCA variants")
    law.require_float64_resolved("the LCA variants", T)
    return sig


def _assemble(flat: np.ndarray, k: int) -> tuple[float, np.ndarray, np.ndarray]:
    """Value, gradient and Hessian from the values in ``_orders(k)`` order."""
    grad = np.array(flat[1:1 + k], float)
    hess = np.zeros((k, k))
    for (i, j), v in zip([o for o in _orders(k) if len(o) == 2], flat[1 + k:]):
        hess[i, j] = hess[j, i] = v
    return float(flat[0]), grad, hess


@dataclass
class VariantLoss:
    """The excess over Bayes of ``variant`` at depth ``T`` on ``law``, ``E[ζ² e(s, P_T(λ))]``, as a
    function of the parameters (``model.params``).  ``jet(θ)`` gives ``(value, gradient, Hessian)``;
    ``values(Θ)`` the value at many parameter points at once (rows of Θ)."""

    law: TaskLaw
    T: int
    variant: tv.Variant

    def __post_init__(self):
        self.variant = _supported(self.variant)
        self.T = check_depth(self.T, MAX_DEPTH_VARIANT, "the variant's loss")
        _bounded(self.law, self.T)
        self.model = tv.derive(self.variant)
        self.k = len(self.model.params)
        self.rule = self.law.rule(depth=self.T)
        self._f = _jet(self.variant)
        self._n = len(_orders(self.k))

    def _states(self, theta: np.ndarray) -> list[np.ndarray]:
        """The jet of ``P_T`` at parameter rows ``theta`` (shape (G, k)), each (G, N)."""
        G, nodes = theta.shape[0], self.rule.nodes[None, :]
        cols = [theta[:, i:i + 1] for i in range(self.k)]
        state = [np.full((G, nodes.shape[1]), float(self.model.p0))] + [np.zeros((G, nodes.shape[1]))] * (self._n - 1)
        with np.errstate(over="ignore", invalid="ignore"):
            for _ in range(self.T):
                out = self._f(*state, *cols, nodes)
                state = [np.broadcast_to(np.asarray(x, float), (G, nodes.shape[1])) for x in out[:self._n]]
        return state

    def _losses(self, theta: np.ndarray) -> np.ndarray:
        state = self._states(theta)
        G, nodes = theta.shape[0], self.rule.nodes[None, :]
        cols = [theta[:, i:i + 1] for i in range(self.k)]
        with np.errstate(over="ignore", invalid="ignore"):
            out = self._f(*state, *cols, nodes)[self._n:]
            terms = [np.broadcast_to(np.asarray(x, float), (G, nodes.shape[1])) for x in out]
            return np.array([t @ self.rule.weights for t in terms])  # (n, G)

    def grid_values(self, theta) -> np.ndarray:
        """The excess at each row of ``theta`` from the closed form in symbolic T (one power per
        node instead of T layers: the search's grid only chooses where to refine, and every value
        it returns comes from ``jet``); ``+inf`` where it is not finite (an overflow, or β = 0
        exactly, where the two-parameter form divides by 0)."""
        theta = np.atleast_2d(np.asarray(theta, float)).reshape(-1, self.k)
        f = _closed(self.variant)
        cols = [theta[:, i:i + 1] for i in range(self.k)]
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            t = np.broadcast_to(np.asarray(f(*cols, self.rule.nodes[None, :], float(self.T))[0], float),
                                (theta.shape[0], self.rule.nodes.size))
            v = t @ self.rule.weights
        return np.where(np.isfinite(v), v, np.inf)

    def values(self, theta) -> np.ndarray:
        """The excess at each row of ``theta``; ``+inf`` where float64 overflows."""
        theta = np.atleast_2d(np.asarray(theta, float)).reshape(-1, self.k) if self.k else np.zeros((1, 0))
        v = self._losses(theta)[0]
        return np.where(np.isfinite(v), v, np.inf)

    def jet(self, theta) -> tuple[float, np.ndarray, np.ndarray]:
        """Value, gradient and Hessian at ``theta``.  The last point's jet is kept: scipy asks for
        the value, the gradient and the Hessian at one point in three calls, and each would
        otherwise iterate the T layers again."""
        theta = np.asarray(theta, float).reshape(1, self.k)
        key = theta.tobytes()
        if getattr(self, "_last", (None,))[0] != key:
            self._last = (key, _assemble(self._losses(theta)[:, 0], self.k))
        v, g, h = self._last[1]
        return v, g.copy(), h.copy()  # copies: a caller may change its arrays in place


@dataclass
class MinimiseResult:
    """``params``: the minimiser found (a tuple, empty where the loss does not depend on the
    parameters); ``excess``: the loss there (a ``numerics.resolution.BelowResolution`` at or below
    ``resolution``); ``grid``: points searched; ``gradient_norm`` at the
    minimiser; ``unique``: False where another grid basin came within ``1e-9`` relative of it;
    ``resolved``: False where the excess is at or below ``resolution``, the excess that a residual
    λP_T − 1 of 64·T·eps produces, E[ζ² s/(1+s)]·(64·T·eps)² (a bound: the iterated layer forms P_T
    to about T·u): there neither the excess nor ``params`` is guaranteed, since the loss may be
    flat to float64 around them (the default's specialised numerics, ``mmicl.alpha_T`` and
    ``mmicl.minimise_two``, work in log scale and resolve it).

    A parameter in which the loss is even (flipping its sign leaves the loss unchanged to
    rounding: only its square enters, as ``a`` of ``readout=evolved-keys-and-query,param=two``) has
    two mirror minimisers; the one returned is the representative with that parameter ≥ 0, on every
    platform, and the mirror image does not count against ``unique``."""

    params: tuple[float, ...]
    excess: float
    grid: int
    gradient_norm: float
    unique: bool
    note: str = ""
    resolution: float = 0.0
    resolved: bool = True
    stationary: bool = True
    """Whether the point found is a strict local minimum by Newton's step: the Hessian positive
    definite and ``|H⁻¹∇L|`` below ``STATIONARY_STEP`` of the parameters' scale.  Where float64
    overflows over most of the parameter range (a wide law at a large depth), the search can end
    on the few finite grid points, far from any minimum: then False, and ``resolved`` is False."""


def _grid_axes(law: TaskLaw, T: int, names: tuple[sp.Symbol, ...]) -> list[np.ndarray]:
    """The parameter values the search visits: for α and β, the scaled range ±12/(T(1 + s_lo))
    joined with the stable range of W^V = −α or β (|1 + w_V λ| < 1 up to 2/(1 + s_lo)), so that
    every regime the large-depth analysis names is visited; where s is wide (1 + s_hi more than
    4 times 1 + s_lo), the same two ranges at the scale of 1 + s_hi too, where the loss is finite
    when the others overflow float64."""
    lo, hi = _bounded(law, T)
    n = GRID.get(len(names), 1)
    lams = [1.0 + lo] + ([1.0 + hi] if (1.0 + hi) > 4 * (1.0 + lo) else [])
    parts = []
    for lam in lams:
        parts.append(np.sinh(np.linspace(-4, 4, n // 2)) / math.sinh(4) * 12.0 / (T * lam))
        parts.append(np.linspace(-2.2 / lam, 2.2 / lam, n - n // 2))
    axis = np.unique(np.concatenate(parts))
    return [axis for _ in names]


STATIONARY_STEP = 1e-6
"""``MinimiseResult.stationary``: the Newton step at the point found is below this fraction of the
parameters' scale (the larger of ``|θ|`` and the scale the caller gives, ``1/(T(1 + s_hi))`` for the
depth-T model: a refined minimiser sits at ~1e-12 of it, a point far from any minimum at O(1))."""


def _canonical(jet, x: tuple[float, ...], v: float) -> tuple[tuple[float, ...], tuple[int, ...]]:
    """``x`` with each coordinate in which the loss is even (the loss at ``x`` with that
    coordinate's sign flipped is within 8 ulps of ``v``) made ≥ 0, and those coordinates."""
    even = []
    x = list(x)
    for i, xi in enumerate(x):
        if xi == 0.0:
            continue
        y = np.array(x, float)
        y[i] = -xi
        w = jet(y)[0]
        if np.isfinite(w) and abs(w - v) <= 8 * np.spacing(abs(v)):
            even.append(i)
            x[i] = abs(xi)
    return tuple(x), tuple(even)


def _refine(jet, x0: np.ndarray, v0: float) -> np.ndarray:
    """A trust-region Newton refinement of the grid point ``x0`` (value ``v0``) with the exact
    gradient and Hessian; where the loss or its Hessian is not finite along the way (a start
    next to float64's overflow), or the refinement ends higher than it began, ``x0`` itself."""
    scale = v0 if v0 > 0 else 1.0  # the loss relative to its value at the start: gtol is then relative

    try:
        with np.errstate(over="ignore", invalid="ignore"):
            res = optimize.minimize(lambda x: jet(x)[0] / scale, x0, jac=lambda x: jet(x)[1] / scale,
                                    hess=lambda x: jet(x)[2] / scale, method="trust-exact",
                                    options={"gtol": 1e-12, "maxiter": 500})
    except (ValueError, np.linalg.LinAlgError):  # scipy refuses a non-finite Hessian
        return x0
    return res.x if np.isfinite(res.fun) and res.fun * scale <= v0 else x0


def _search(fun_values, jet, axes: list[np.ndarray], k: int, scale: float = 0.0) -> MinimiseResult:
    if k == 0:
        v = float(fun_values(np.zeros((1, 0)))[0])
        return MinimiseResult((), v, 1, 0.0, True, "the prediction does not depend on the parameters")
    mesh = np.stack([m.ravel() for m in np.meshgrid(*axes, indexing="ij")], axis=1)
    vals = fun_values(mesh)
    order = np.argsort(vals)
    tried = []
    for idx in order[: 4]:
        if not np.isfinite(vals[idx]):
            break
        x0 = mesh[idx]
        v0 = jet(x0)[0]
        if not np.isfinite(v0):  # the grid's value came from another route (closed form): skip the point
            continue
        x = _refine(jet, x0, v0)
        v, g, _ = jet(x)
        tried.append((v, tuple(float(t) for t in x), float(np.linalg.norm(g))))
    if not tried:
        raise InputError("the loss overflows float64 at every grid point: the depth is too large for this law")
    tried.sort()
    v, x, gn = tried[0]
    x, even = _canonical(jet, x, v)
    fold = lambda y: tuple(abs(c) if i in even else c for i, c in enumerate(y))  # noqa: E731 (mirror images)
    unique = all(abs(w - v) > 1e-9 * max(abs(v), 1e-300) or np.allclose(fold(y), x, rtol=1e-6, atol=1e-12)
                 for w, y, _ in tried[1:])
    _, g, h = jet(np.array(x, float))
    step = _newton_step(g, h)
    stationary = bool(step is not None and step <= STATIONARY_STEP * max(float(np.linalg.norm(x)), scale))
    return MinimiseResult(x, float(v), int(mesh.shape[0]), gn, bool(unique), stationary=stationary)


def _closed_build(variant: tv.Variant):
    model = tv.derive(variant)
    return [model.excess], [*model.params, s_sym, tv.T]


@lru_cache(maxsize=None)
def _closed(variant: tv.Variant):
    return compiled("variant_closed_" + _key(variant), lambda: _closed_build(variant))


def closed_form(variant):
    """The excess per ζ² of one prompt from the closed form in symbolic T (``derive(...).excess``),
    as ``f(params, s, T)``: a second route to ``VariantLoss`` (it divides by ``w_V λ`` where there
    are two parameters, so it is not used near β = 0)."""
    f = _closed(_supported(variant))
    return lambda params, s, T: float(f(*[float(x) for x in params], float(s), int(T))[0])


@takes_law
def minimise(law: TaskLaw, T: int, variant) -> MinimiseResult:
    """The minimiser of ``variant``'s population loss at depth ``T`` (module docstring)."""
    loss = VariantLoss(law, T, variant)
    hi = _bounded(law, loss.T)[1]
    r = _search(loss.grid_values if loss.k else loss.values, loss.jet, _grid_axes(law, loss.T, loss.model.params), loss.k,
                scale=1.0 / (loss.T * (1.0 + hi)))
    r.resolution = resolution(law, loss.T)
    r.resolved = loss.k == 0 or bool(r.excess > r.resolution) and r.stationary
    r.excess = flag_resolution(r.excess, r.resolution)        # below it: a BelowResolution, never a plain number
    if not r.resolved and not r.stationary and r.excess > r.resolution:
        r.note = (f"the search ended at {r.params}, which is not a minimum (gradient norm {r.gradient_norm:.3g}): "
                  "float64 overflows the iterated layer over most of the parameter range at this depth, so the "
                  "search saw too few finite points; neither the excess nor the parameters are a result")
    elif not r.resolved:
        r.note = (f"the least excess {float(r.excess):.3g} is below the rounding bound of the iterated layer at this depth "
                  f"({r.resolution:.3g}): neither it nor the parameters are guaranteed (for the default LCA, "
                  "alpha_T and minimise_two work in log scale and resolve them)")
    return r


@takes_law
def resolution(law: TaskLaw, T: int) -> float:
    """E[ζ² s/(1+s)]·(64·T·eps)²: the excess that a residual λP_T − 1 of 64·T·eps produces, below
    which the variants' iterated loss is rounding (``MinimiseResult.resolved``)."""
    return float(law.rule(1).expect(lambda s: s / (1 + s))) * (64 * T * 2.0**-52) ** 2


@takes_law
def excess_at(law: TaskLaw, T: int, variant, params) -> float:
    """``variant``'s excess over Bayes at depth ``T`` and the parameters ``params``: a float, or, at or
    below the rounding bound ``resolution(law, T)`` of the iterated layer, a ``BelowResolution``
    (``numerics.resolution``: it prints and writes as ``below resolution r``)."""
    loss = VariantLoss(law, T, variant)
    try:
        params = tuple(np.atleast_1d(np.asarray(params, float))) if loss.k else ()
    except (TypeError, ValueError):
        raise InputError(f"the parameters of variant {loss.variant.text} are numbers, got {params!r}") from None
    for p in params:
        check_finite("a variant's parameter", p, InputError)
    if len(params) != loss.k:
        raise InputError(f"variant {loss.variant.text} has {loss.k} parameter(s) "
                         f"({', '.join(map(str, loss.model.params)) or 'none'}), got {len(params)}")
    return flag_resolution(float(loss.values(np.array([params]))[0]), resolution(law, T))


@dataclass
class Floor:
    """The least excess of a variant as ``T → ∞``: ``value``; ``regime`` (``"stable"`` or
    ``"scaled"``) where it is attained, with the family's parameters there (``params``, named
    ``names``); both families' minima (``stable``, ``scaled``)."""

    value: float
    regime: str
    params: tuple[float, ...]
    names: tuple[str, ...]
    stable: float
    scaled: float
    variant: str = ""
    details: dict = field(default_factory=dict)
    zero: bool = False
    """True where ``value`` is at most ``ZERO_FLOOR`` of the zero predictor's excess E[ζ² s/(1+s)]:
    0 up to the rounding of ``(s/λ)(λ·(1/λ) − 1)²``.  ``value`` (and ``stable``, ``scaled``) is then a
    ``numerics.resolution.BelowResolution``: it prints as ``below resolution r``, not as the rounding."""


ZERO_FLOOR = 1e-12
"""A floor at most this fraction of the zero predictor's excess is 0 to rounding (``Floor.zero``)."""


@takes_law
def floor(law: TaskLaw, variant) -> Floor:
    """The floor of ``variant`` on ``law`` (module docstring): the smaller of the minima over the
    stable family (fixed parameters with ``|1 + w_V λ| < 1`` on the support) and the scaled family
    (``params = φ/T``)."""
    v = _supported(variant)
    lo, hi = _bounded(law)
    model = tv.derive(v)
    rule = law.rule(depth=1)
    out = {}
    for which, names in (("stable", model.stable_params), ("scaled", model.scaled_params)):
        f = _family(v, which)
        n = len(_orders(len(names)))

        def values(theta, f=f, k=len(names)):
            cols = [theta[:, i:i + 1] for i in range(k)]
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                t = np.broadcast_to(np.asarray(f(*cols, rule.nodes[None, :])[0], float), (theta.shape[0], rule.nodes.size))
                r = t @ rule.weights
            return np.where(np.isfinite(r), r, np.inf)

        def jet(x, f=f, k=len(names), n=n):
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                terms = [np.broadcast_to(np.asarray(t, float), rule.nodes.shape) @ rule.weights
                         for t in f(*[float(c) for c in x], rule.nodes)]
            return _assemble(np.array(terms[:n]), k)

        half = GRID.get(len(names), 1) // 2
        axes = [np.concatenate([-np.geomspace(30, 1e-3, half), np.geomspace(1e-3, 30, half)]) for _ in names]
        out[which] = (_search(values, jet, axes, len(names), scale=1.0 / (1.0 + hi)), tuple(map(str, names)))
    (best, names) = min(out.values(), key=lambda r: r[0].excess)
    regime = "stable" if out["stable"][0] is best else "scaled"
    # 0 to rounding: at most ZERO_FLOOR of the zero predictor's excess (a BelowResolution, numerics.resolution)
    floor_resolution = ZERO_FLOOR * float(rule.expect(lambda s: s / (1 + s)))
    value, stable, scaled = (flag_resolution(x, floor_resolution)
                             for x in (best.excess, out["stable"][0].excess, out["scaled"][0].excess))
    return Floor(value, regime, best.params, names, stable, scaled, v.text,
                 {"unique": best.unique, "gradient_norm": best.gradient_norm, "stationary": best.stationary},
                 is_below_resolution(value))


def matrix_excess_variant(m: np.ndarray, zeta: float, variant, params, T: int) -> float:
    """The excess over Bayes of one prompt (task ``m``, label scale ``ζ``) computed with d×d
    matrices in the large-context limit, independently of the scalar reduction: every column of
    F evolves as ``M ↦ M + W^S + W^V Λ M`` (``F^t = M_t X``, ``M_0 = 0`` or ``I``, Λ = I + m mᵀ),
    the readout weight is ``w = M_T ζ m`` (one raw side) or ``M_Tᵀ M_T ζ m`` (both evolved), and
    the excess of ``ŷ = wᵀ x`` is ``wᵀΛw − 2ζ wᵀm + ζ² s/(1+s)``."""
    v = _supported(variant)
    d = m.size
    Lam = np.eye(d) + np.outer(m, m)
    names = tuple(map(str, tv.derive(v).params))
    vals = dict(zip(names, params))
    a, b = float(vals.get("alpha", 0.0)), float(vals.get("beta", 0.0))
    w_s = a if v.skip == "on" else 0.0
    w_v = -a if v.param == "one" else b
    M = np.zeros((d, d)) if v.f0 == "zero" else np.eye(d)
    for _ in range(T):
        M = M + w_s * np.eye(d) + w_v * Lam @ M
    h = zeta * m
    w = {"raw-keys": M.T @ h, "evolved-keys": M @ h, "evolved-keys-and-query": M.T @ (M @ h)}[v.readout]
    s = float(m @ m)
    return float(w @ Lam @ w - 2 * zeta * (w @ m) + zeta**2 * s / (1 + s))


FLOW_OUTCOMES = ("minimum", "stationary", "moving", "overflow", "budget", "solver-failure")
"""How a variant's flow ends (``VariantFlow.outcome``): at rest at a strict local minimum (the only
one that is ``converged``); at a point whose gradient is exactly 0 but which is not a strict
minimum; still moving at ``t_max``; at a point where the loss or its gradient overflows float64
(the flow left the region the depth-T model can represent); after ``MAX_FLOW_EVALUATIONS``
evaluations of the loss, not at rest; or the integrator failed (its message in ``reason``)."""


@dataclass
class VariantFlow:
    """The end of the gradient flow ``θ' = −∇L_T(θ)`` of a variant from ``start``: ``params`` at
    ``t_end``, ``converged`` (within ``REST_STEP`` of a strict local minimum of the population
    loss, by Newton's step), the loss and gradient norm there, and ``outcome`` (one of
    ``FLOW_OUTCOMES``) with the ``reason`` in words."""

    params: tuple[float, ...]
    converged: bool
    t_end: float
    excess: float
    gradient_norm: float
    reason: str
    outcome: str = "minimum"


REST_STEP = 1e-12
"""The flow is at rest where the Hessian is positive definite and the Newton step ``|H⁻¹∇L|`` is
below ``REST_STEP·(1 + |θ|)`` (the minimiser is then that close), or where the gradient is exactly
0 (a stationary point the flow cannot leave)."""


def _newton_step(g: np.ndarray, h: np.ndarray) -> float | None:
    """``|H⁻¹g|`` where H is positive definite, else None."""
    if not (np.all(np.isfinite(h)) and np.all(np.isfinite(g))):
        return None
    try:  # through the Cholesky factor: a definite H whose LU solve would call it singular is still solved
        c = np.linalg.cholesky(h)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            step = float(np.linalg.norm(np.linalg.solve(c.T, np.linalg.solve(c, g))))
    except np.linalg.LinAlgError:
        return None
    return step if np.isfinite(step) else None


@takes_law
def gradient_flow(law: TaskLaw, T: int, variant, start=None, t_max: float = 1e9) -> VariantFlow:
    """Integrate ``θ' = −∇L_T(θ)`` (LSODA with the derived Hessian as Jacobian) from ``start``
    (default: every parameter 0, the LCA's usual start) until the gradient norm is below
    ``REST_STEP`` away from a strict local minimum by Newton's step, or ``t_max``.  The flow follows the loss downhill: where the loss has
    more than one basin (both sides evolved) it ends in the basin of its start, which need not be
    the global one (``minimise``)."""
    from scipy.integrate import solve_ivp

    loss = VariantLoss(law, T, variant)
    if loss.k == 0:
        v = float(loss.values(np.zeros((1, 0)))[0])
        return VariantFlow((), True, 0.0, v, 0.0, "the loss does not depend on the parameters")
    if start is None:
        x0 = np.zeros(loss.k)
    else:
        try:
            x0 = np.asarray(start, float).reshape(loss.k)
        except (TypeError, ValueError):
            raise InputError(f"the start of variant {loss.variant.text}'s flow is {loss.k} number(s), got {start!r}") from None
        for c in x0:
            check_finite("a flow's start", float(c), InputError)
    if isinstance(t_max, bool) or not isinstance(t_max, (int, float)) or not (0 < t_max < math.inf):
        raise InputError(f"t_max is a finite time > 0, got {t_max!r}")
    calls = [0]
    last = [x0.copy(), 0.0]

    class _Stop(Exception):
        def __init__(self, outcome: str, why: str):
            self.outcome, self.why = outcome, why

    def evaluate(t, x):
        calls[0] += 1
        if calls[0] > MAX_FLOW_EVALUATIONS:
            raise _Stop("budget", f"not at rest after {MAX_FLOW_EVALUATIONS} evaluations of the loss, at t = {t:.3g}")
        v, g, h = loss.jet(x)
        if not (np.isfinite(v) and np.all(np.isfinite(g)) and np.all(np.isfinite(h))):
            raise _Stop("overflow", f"the loss overflows float64 at {tuple(float(c) for c in x)}, t = {t:.3g}: the "
                                    "flow left the region where the depth-T model's state is representable")
        last[0], last[1] = np.array(x, float), float(t)
        return v, g, h

    def rest(t, x):
        v, g, h = evaluate(t, x)
        if not np.any(g):
            return -1.0
        step = _newton_step(g, h)
        return 1.0 if step is None else step - REST_STEP * (1 + float(np.linalg.norm(x)))
    rest.terminal = True

    stopped = None
    try:
        evaluate(0.0, x0)
        sol = solve_ivp(lambda t, x: -evaluate(t, x)[1], (0.0, float(t_max)), x0, method="LSODA", rtol=1e-10,
                        atol=1e-14, jac=lambda t, x: -evaluate(t, x)[2], events=rest)
        x, t_end = sol.y[:, -1], float(sol.t[-1])
        if sol.status < 0:
            stopped = ("solver-failure", f"the integrator failed at t = {t_end:.3g}: {sol.message}")
    except _Stop as e:
        (x, t_end), stopped = last, (e.outcome, e.why)
    except (np.linalg.LinAlgError, ValueError, FloatingPointError) as e:
        (x, t_end), stopped = last, ("solver-failure", f"the integrator failed ({type(e).__name__}: {e})")
    v, g, h = loss.jet(x)
    finite = bool(np.isfinite(v) and np.all(np.isfinite(g)))
    with np.errstate(over="ignore"):
        gn = float(np.linalg.norm(g)) if finite else math.inf
    step = _newton_step(g, h) if finite else None
    at_min = step is not None and step <= REST_STEP * (1 + float(np.linalg.norm(x))) * 1.0001
    if at_min:
        outcome, reason = "minimum", "at rest at a strict local minimum"
    elif stopped is not None:
        outcome, reason = stopped
    elif finite and not np.any(g):
        outcome, reason = "stationary", ("stuck at a stationary point that is not a strict minimum (the gradient is "
                                         "exactly 0 there)")
    else:
        outcome, reason = "moving", f"not at rest by t = {t_end:.3g} (gradient norm {gn:.3g})"
    return VariantFlow(tuple(float(c) for c in x), bool(at_min), float(t_end), float(v), gn, reason, outcome)
