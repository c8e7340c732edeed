"""A Monte Carlo estimate: a sample mean with its standard error.

For ``k`` independent draws ``X_1 … X_k`` of a quantity with mean ``μ``,

    mean = (1/k) Σ X_i,     se = sd/√k,     sd² = (1/(k − 1)) Σ (X_i − mean)²,

and ``z(v) = (mean − v)/se`` measures how far a value ``v`` (a closed form, say) lies from the
estimate in standard errors; ``interval95`` is ``mean ± 1.96·se`` (the normal approximation).

This is one estimate from one set of draws.  Intervals over training seeds (the testbed's
``Interval``) are a different concept and live with the testbed.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Estimate", "Z95"]

Z95 = 1.959963984540054  # the 97.5% quantile of N(0, 1)


@dataclass(frozen=True)
class Estimate:
    """``mean`` and its standard error ``se`` from ``samples`` draws (``se = inf`` for one draw)."""

    mean: float
    se: float
    samples: int

    @classmethod
    def of(cls, values) -> "Estimate":
        """The estimate from a 1-D array of draws: a numpy array (or anything numpy reads) or a
        torch tensor.  A tensor is reduced by torch itself, in float64 on its own device (detached),
        so the numbers are those torch gives; the sample standard deviation is the unbiased one."""
        if hasattr(values, "detach"):  # a torch tensor, without importing torch here
            v = values.detach().double()
            if v.ndim != 1:
                raise ValueError(f"an estimate needs a 1-D tensor of draws, got shape {tuple(v.shape)}")
            k = v.numel()
            if k == 0:
                raise ValueError("an estimate needs at least one draw")
            sd = float(v.std(unbiased=True)) if k > 1 else math.inf
            return cls(float(v.mean()), sd / math.sqrt(k), k)
        v = np.asarray(values, dtype=float)
        if v.ndim != 1:
            raise ValueError(f"an estimate needs a 1-D array of draws, got shape {v.shape}")
        k = v.size
        if k == 0:
            raise ValueError("an estimate needs at least one draw")
        sd = float(np.std(v, ddof=1)) if k > 1 else math.inf
        return cls(float(np.mean(v)), sd / math.sqrt(k), k)

    def z(self, value: float) -> float:
        """``(mean − value)/se``: 0 if se = 0 and they agree, inf if se = 0 and they differ."""
        if self.se == 0:
            return 0.0 if self.mean == value else math.inf
        return (self.mean - value) / self.se

    def interval95(self) -> tuple[float, float]:
        """``mean ± 1.96·se``."""
        half = Z95 * self.se
        return (self.mean - half, self.mean + half)

    def to_json(self) -> dict:
        return {"mean": self.mean, "se": self.se, "samples": self.samples}
