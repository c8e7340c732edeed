"""The task law: the prompt-to-prompt law of (v, r, ζ) of the latent-factor model (docs/model.md).

A prompt's task is ``m = [v; r] ∈ R^{d1+d2}`` and a label scale ``ζ``.  The theory of the reduced LCA
models only sees ``s = ‖m‖²`` and ``ζ²``; Monte Carlo needs the vectors themselves.

``ZetaLaw``  the law of ζ: normal, Rademacher, a constant, or given samples; independent of m.
``TaskLaw``  d1, d2, the law of the squared norms (``s`` for ‖m‖², or ``sv`` and ``sr`` for ‖v‖² and
             ‖r‖², one per modality; ``numerics.laws.scalar``), the direction model and the ζ law;
             it checks itself at construction.

Because ζ ⊥ m, ``E[ζ² h(s)] = E[ζ²]·E[h(s)]``: ``TaskLaw.rule`` is the s-rule with its weights
scaled by ``E[ζ²]``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .quadrature import Rule
from .scalar import LawError, ScalarLaw, SumLaw, UnboundedSupportError, call_text, finite_parameter, number_text
from ..validate import check_zeta

__all__ = ["ZetaLaw", "TaskLaw", "FLOAT64_EPS", "RESOLUTION_TOLERANCE"]

FLOAT64_EPS = 2.0**-52
"""float64's machine epsilon: the spacing of the floats in [1, 2)."""
RESOLUTION_TOLERANCE = 2.0**-10
"""The largest relative rounding of the depth-T factor that ``TaskLaw.float64_unresolved`` accepts."""


@dataclass(frozen=True)
class ZetaLaw:
    """The law of the label scale ζ, independent of m unless given as joint samples."""

    kind: str  # "normal" | "rademacher" | "const" | "samples"
    value: float = 1.0  # the constant for "const"
    samples: tuple[float, ...] = ()

    KINDS = ("normal", "rademacher", "const", "samples")

    def __post_init__(self):
        if self.kind not in self.KINDS:
            raise LawError(f"unknown ζ law {self.kind!r}; use one of normal, rademacher, const(c)")
        finite_parameter(f"{call_text('const', self.value)}: c", self.value)
        if self.kind == "samples":
            if not self.samples:
                raise LawError("ζ samples: give at least one value")
            for z in self.samples:
                finite_parameter("ζ sample", z)
        check_zeta(self.kind, self.value, self.samples, error=LawError)  # E[ζ²] in range, judged without squaring
        if self.second_moment() == 0:
            raise LawError("ζ ≡ 0: the labels carry no signal; give ζ a non-zero law")

    def second_moment(self) -> float:
        if self.kind in ("normal", "rademacher"):
            return 1.0
        if self.kind == "const":
            return self.value**2
        return float(np.mean(np.square(self.samples)))

    def fourth_moment(self) -> float:
        """``E[ζ⁴]``: 3 (normal), 1 (Rademacher), c⁴ (const c), the sample mean of ζ⁴ (samples)."""
        if self.kind == "normal":
            return 3.0
        if self.kind == "rademacher":
            return 1.0
        if self.kind == "const":
            return self.value**4
        return float(np.mean(np.asarray(self.samples, float) ** 4))

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        if self.kind == "normal":
            return rng.standard_normal(n)
        if self.kind == "rademacher":
            return rng.choice(np.array([-1.0, 1.0]), size=n)
        if self.kind == "const":
            return np.full(n, self.value)
        return rng.choice(np.asarray(self.samples), size=n)

    @property
    def is_symmetric(self) -> bool:
        """ζ and −ζ have the same law."""
        if self.kind in ("normal", "rademacher"):
            return True
        if self.kind == "const":
            return self.value == 0
        vals = np.sort(np.asarray(self.samples))
        return bool(np.allclose(vals, -vals[::-1]))

    def spec(self) -> str:
        if self.kind == "const":
            return f"const({number_text(self.value)})"
        if self.kind == "samples":
            return f"samples({len(self.samples)})"
        return self.kind


@dataclass(frozen=True)
class TaskLaw:
    """The law of a prompt's task (v, r, ζ).

    Either ``s`` (the law of ``‖m‖²``, with ``m/‖m‖`` uniform on the sphere of ``R^{d1+d2}``) or
    ``sv`` and ``sr`` (the laws of ``‖v‖²`` and ``‖r‖²``, independent, each direction uniform on its
    own sphere).  ``anisotropy_v``/``anisotropy_r`` (optional, positive) stretch the directions:
    ``v = ‖v‖ · D g / ‖D g‖`` with ``g ~ N(0, I)`` and ``D = diag(anisotropy)``.  ζ is independent
    of m.
    """

    d1: int = 1
    d2: int = 1
    s: ScalarLaw | None = None
    sv: ScalarLaw | None = None
    sr: ScalarLaw | None = None
    zeta: ZetaLaw = field(default_factory=lambda: ZetaLaw("normal"))
    anisotropy_v: tuple[float, ...] | None = None
    anisotropy_r: tuple[float, ...] | None = None

    def __post_init__(self):
        for name in ("d1", "d2"):
            val = getattr(self, name)
            if isinstance(val, bool) or not isinstance(val, (int, np.integer)) or val < 1:
                raise LawError(f"{name} must be a positive integer, got {val!r}")
        per_modality = self.sv is not None or self.sr is not None
        if (self.s is None) == (not per_modality):
            raise LawError(
                "give either s=LAW (the law of ‖m‖²) or both sv=LAW and sr=LAW "
                "(the laws of ‖v‖² and ‖r‖²), not both and not neither"
            )
        if per_modality and (self.sv is None or self.sr is None):
            raise LawError("per-modality laws need both sv=LAW and sr=LAW")
        for name, dim in (("anisotropy_v", self.d1), ("anisotropy_r", self.d2)):
            a = getattr(self, name)
            if a is not None:
                if len(a) != dim or any(not (math.isfinite(x) and x > 0) for x in a):
                    raise LawError(f"{name} needs {dim} positive finite scales, got {a}")
        if (self.anisotropy_v or self.anisotropy_r) and self.s is not None:
            raise LawError("anisotropic directions need per-modality laws sv=…, sr=…")

    @property
    def d(self) -> int:
        return self.d1 + self.d2

    def s_law(self) -> ScalarLaw:
        """The law of ``s = ‖m‖²``."""
        return self.s if self.s is not None else SumLaw(self.sv, self.sr)

    def s_bounds(self) -> tuple[float, float]:
        """``(s_lo, s_hi) = (ess inf s, ess sup s)``."""
        return self.s_law().support()

    def signal_bounds(self) -> tuple[float, float] | None:
        """``(s_lo, s_hi)`` over prompts with ``m ≠ 0`` (see ``ScalarLaw.signal_support``)."""
        return self.s_law().signal_support()

    def spread(self) -> float | None:
        """``ρ = (s_hi − s_lo)/(2 + s_lo + s_hi)`` over the signal support: the spread of λ = 1 + s
        relative to its scale, ``(λ_hi − λ_lo)/(λ_hi + λ_lo)``, computed from s (so that it is not
        rounded to 0 where 1 + s is); None where s ≡ 0 or s is unbounded."""
        sig = self.signal_bounds()
        if sig is None or not math.isfinite(sig[1]):
            return None
        lo, hi = sig
        return (hi - lo) / (2.0 + lo + hi)

    def float64_unresolved(self, T: int = 1, sampled: bool = False) -> str | None:
        """Why float64 cannot resolve this law at depth ``T``, or None where it can (and where
        the question does not arise: s ≡ 0, s unbounded, or s one value over prompts with m ≠ 0,
        which the theorems and their checks treat as their own cases).  The one test of
        resolvability: every numeric function of the LCA theory and every claim asks it.

        Derivation.  The LCA losses read the law only through the residual
        ``r(s) = α(1 + s) − 1`` at α near the minimiser, i.e. α ∈ [1/λ_hi, 1/λ_lo] (λ = 1 + s):
        there ``max |r|`` over the support is of order ``ρ = (λ_hi − λ_lo)/(λ_hi + λ_lo)``
        (exactly ρ at α* = 2/(λ_lo + λ_hi)).  float64 holds ``1 + s`` to ``eps/2`` absolutely
        (eps = 2^-52; its spacing in [1, 2)) and forms ``α(1 + s) − 1`` with absolute error about
        ``eps`` (the rounding of 1 + s and of the product; the subtraction is exact).  Hence

        - the depth-T factor ``r^{2T}`` of the excess and of its derivatives carries a relative
          rounding of about ``2T·eps/ρ`` at the ends, where the mass of the sum is;
        - α_T is known to about eps (a rounding δ in r is a shift δ/λ in α), while what depth T
          says about it, ``α* − α_T ~ ρ/T``, is of order ρ/T;

        both say that depth T needs ``q = T·eps/ρ`` small.  The law is *resolved at depth T* when
        ``q ≤ RESOLUTION_TOLERANCE = 2^-10``: r^{2T} to ≤ 2^-9 relative, α* − α_T to ≥ 10 bits.
        So ``ρ ≥ 1024·T·eps = 2.3e-13·T``: any spread of s below ~5e-13 (relative to 1 + s) is
        unresolved at every depth (``uniform(0,1e-30)``: 1 + s rounds to 1 on the whole support),
        and the quick sweep of thm6.2 (T ≤ 10^4) needs ρ ≥ 2.3e-9 (``uniform(0,1e-8)``, ρ = 5e-9,
        passes; ``uniform(1e-9,2e-9)``, ρ = 5e-10, is resolved only up to T ≈ 2000).

        ``sampled=True``: the Monte Carlo route (sampled prompts, ``numerics.montecarlo``), which
        forms ŷ − ŷ_Bayes as a T-term geometric sum minus the Bayes prediction: its absolute
        rounding is about ``T·eps·|ŷ_Bayes|`` (``excess_rounding_floor``) and its true size at the
        ends ``|r|^T·|ŷ_Bayes| ≈ ρ^T·|ŷ_Bayes|``, so ``q = T·eps/ρ^T`` (computed in log scale),
        with the same tolerance; a sampled loss below that floor has no unique minimiser in float64
        (its Hessian is rounding noise).  At T = 5 this needs ρ ≥ 0.004; at T = 10, ρ ≥ 0.07."""
        rho = self.spread()
        if rho is None or rho == 0 and self.signal_bounds()[0] == self.signal_bounds()[1]:
            return None
        T = max(int(T), 1)
        if rho == 0:
            log_q = math.inf
        else:
            log_q = math.log(T * FLOAT64_EPS) - (T if sampled else 1) * math.log(rho)
        if log_q <= math.log(RESOLUTION_TOLERANCE):
            return None
        lo, hi = self.signal_bounds()
        q = f"T·eps/ρ{'^T' if sampled else ''}"
        shown = f"10^{log_q / math.log(10):.3g}" if log_q > math.log(1e300) else f"{math.exp(log_q):.3g}"
        need = (f"ρ ≥ {RESOLUTION_TOLERANCE ** -1 * T * FLOAT64_EPS:.3g}" if not sampled else
                f"ρ ≥ {(RESOLUTION_TOLERANCE ** -1 * T * FLOAT64_EPS) ** (1 / T):.3g}")
        route = "the sampled (Monte Carlo) loss" if sampled else "the depth-T factor (1 − α(1+s))^(2T)"
        depth = "at any depth (already at T = 1)" if T == 1 else f"at depth T = {T}"
        return (f"float64 cannot resolve s over [{lo:.3g}, {hi:.3g}] {depth}: the spread of 1 + s is "
                f"ρ = (s_hi − s_lo)/(2 + s_lo + s_hi) = {rho:.3g}, and {route} carries a relative rounding "
                f"{q} = {shown} > 2^-10 (it needs {need})")

    def require_float64_resolved(self, what: str, T: int = 1, sampled: bool = False) -> None:
        """A ``LawError`` (one line, starting with ``what``) where ``float64_unresolved`` says why."""
        why = self.float64_unresolved(T, sampled)
        if why is not None:
            raise LawError(f"{what}: {why}")

    def require_bounded(self, what: str = "this theorem", hint: str | None = None) -> tuple[float, float]:
        """``(s_lo, s_hi)``, the support of s, for a law with bounded s; an ``UnboundedSupportError``
        (one line, starting with ``what``) otherwise, ending with ``hint`` where one is given: the
        function that takes the unbounded law, say (``numerics.lca.alpha_T`` points to
        ``alpha_T_unbounded``)."""
        law = self.s_law()
        try:
            law.require_bounded(what)
        except UnboundedSupportError as e:
            if hint is None:
                raise
            raise UnboundedSupportError(f"{e}; {hint}") from None
        return law.support()

    def require_signal(self, what: str = "this theorem", hint: str | None = None) -> tuple[float, float]:
        """``(s_lo, s_hi)`` over prompts with m ≠ 0, for a bounded law with signal; a ``LawError``
        (one line) for an unbounded law (with ``hint``, as in ``require_bounded``) or for s ≡ 0."""
        self.require_bounded(what, hint)
        sig = self.signal_bounds()
        if sig is None:
            raise LawError("s ≡ 0: the tokens carry no information about y (m = 0); give s a law with s > 0")
        return sig

    def rule(self, depth: int = 1) -> Rule:
        """A rule for ``E[ζ² h(s)]``: the s-rule with weights scaled by ``E[ζ²]`` (ζ ⊥ m)."""
        law = self.s_law()
        law.require_bounded("an expectation over s by quadrature")
        r = law.rule(depth)
        return Rule(r.nodes, r.weights * self.zeta.second_moment())

    def expect_zeta2(self, h: Callable[[np.ndarray], np.ndarray], depth: int = 1) -> float:
        """``E[ζ² h(s)]`` over the task law, ``s = ‖m‖²``, as a float.

        ζ is independent of m, so this is ``E[ζ²]·E[h(s)]``, computed by quadrature: the rule
        ``rule(depth)`` of the law of s (``s_law()``: the law given as ``s=``, or that of
        ``sv + sr``), its weights multiplied by ``E[ζ²]`` (``ZetaLaw.second_moment``), gives
        ``Σ_i w_i·E[ζ²]·h(s_i)``.  ``h`` is called once, on the 1-D float64 array of the nodes
        ``s_i``, and must return an array of the same shape (e.g. ``lambda s: s / (1 + s)``).

        ``depth`` (the LCA depth T, ≥ 1) sets how finely the rule resolves the ends of the support,
        where a depth-T integrand such as ``(α(1+s) − 1)^{2T}`` varies on the scale
        ``(s_hi − s_lo)/T``: a density (``beta``, ``uniform``) is integrated on pieces of its
        support that halve towards each end down to ``1/(8·depth)`` of it, 30 Gauss nodes each
        (Gauss–Jacobi on the two end pieces, which carry the density's power at that end exactly,
        Gauss–Legendre inside); atoms (``point``,
        ``twopoint``, ``discrete``) are summed exactly at any depth; a mixture joins its
        components' rules, and ``sv + sr`` is the product rule compressed piece by piece
        (``SumLaw.rule``).  The rule's own accuracy is ``ScalarLaw.rule``'s.

        Raises ``UnboundedSupportError`` (a ``LawError``) where s is unbounded (``exponential``, or a
        mixture or a sum with one): there is no quadrature rule on an unbounded support; draw
        samples instead (``sample_tasks``).  An exception raised by ``h`` goes through unchanged."""
        return self.rule(depth).expect(h)

    def sample_tasks(self, n: int, rng: np.random.Generator):
        """``n`` independent tasks: arrays ``v (n, d1)``, ``r (n, d2)``, ``zeta (n,)``."""
        if self.s is not None:
            g = rng.standard_normal((n, self.d))
            g /= np.linalg.norm(g, axis=1, keepdims=True)
            m = g * np.sqrt(self.s.sample(n, rng))[:, None]
            v, r = m[:, : self.d1], m[:, self.d1 :]
        else:
            v = _directions(n, self.d1, self.anisotropy_v, rng) * np.sqrt(self.sv.sample(n, rng))[:, None]
            r = _directions(n, self.d2, self.anisotropy_r, rng) * np.sqrt(self.sr.sample(n, rng))[:, None]
        return v, r, self.zeta.sample(n, rng)

    def spec(self) -> str:
        parts = [f"s={self.s.spec()}"] if self.s is not None else [
            f"sv={self.sv.spec()}", f"sr={self.sr.spec()}"]
        parts += [f"zeta={self.zeta.spec()}", f"d1={self.d1}", f"d2={self.d2}"]
        return "; ".join(parts)

    def __str__(self) -> str:
        return self.spec()


def _directions(n: int, dim: int, scales, rng: np.random.Generator) -> np.ndarray:
    g = rng.standard_normal((n, dim))
    if scales is not None:
        g = g * np.asarray(scales)[None, :]
    return g / np.linalg.norm(g, axis=1, keepdims=True)
