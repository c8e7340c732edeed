"""The task law: the prompt-to-prompt law of (v, r, ζ) of the latent-factor model (docs/model.md).

A prompt's task is ``m = [v; r] ∈ R^{d1+d2}`` and a label scale ``ζ``.  The theory of the reduced LCA
models only sees ``s = ‖m‖²`` and ``ζ²``; Monte Carlo needs the vectors themselves.

``ZetaLaw``  the law of ζ: normal, Rademacher, a constant, or given samples; independent of m.
``TaskLaw``  d1, d2, the law of the squared norms (``s`` for ‖m‖², or ``sv`` and ``sr`` for ‖v‖² and
             ‖r‖², one per modality; ``numerics.scalar_laws``), the direction model and the ζ law;
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
from .scalar_laws import LawError, ScalarLaw, SumLaw, _call, _finite, _num

__all__ = ["ZetaLaw", "TaskLaw"]


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
        _finite(f"{_call('const', self.value)}: c", self.value)
        if self.kind == "samples":
            if not self.samples:
                raise LawError("ζ samples: give at least one value")
            for z in self.samples:
                _finite("ζ sample", z)
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
            return f"const({_num(self.value)})"
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

    def require_bounded(self, what: str = "this theorem") -> tuple[float, float]:
        law = self.s_law()
        law.require_bounded(what)
        return law.support()

    def rule(self, depth: int = 1) -> Rule:
        """A rule for ``E[ζ² h(s)]``: the s-rule with weights scaled by ``E[ζ²]`` (ζ ⊥ m)."""
        law = self.s_law()
        law.require_bounded("an expectation over s by quadrature")
        r = law.rule(depth)
        return Rule(r.nodes, r.weights * self.zeta.second_moment())

    def expect_zeta2(self, h: Callable[[np.ndarray], np.ndarray], depth: int = 1) -> float:
        """``E[ζ² h(s)]``."""
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
