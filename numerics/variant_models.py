"""The LCA variants of ``theory.variants`` as torch modules, with tied scalar weights.

A variant ``Variant(readout, f0, skip, param)`` (``param`` one or two) is the stack of T layers
with W^K = W^Q = W^R = I acting on every token column j (context and query) alike:

    F^t_j = F^{t−1}_j + w_S x_j + w_V C F^{t−1}_j,      C = (1/n) Σ_{i≤n} x_i x_iᵀ,
    w_S = α (skip on) or 0 (skip off),   w_V = −α (param one) or β (param two),
    F⁰_j = 0 (f0 zero) or x_j (f0 tokens),

read out as
    raw-keys                ŷ = (1/n) Σ y_i x_iᵀ F^T_q,
    evolved-keys            ŷ = (1/n) Σ y_i (F^T_i)ᵀ x_q,
    evolved-keys-and-query  ŷ = (1/n) Σ y_i (F^T_i)ᵀ F^T_q.

**Moments.**  The map is linear and C is the same for every column, so ``F^t_j = P_t(C) x_j`` for
one matrix polynomial P_t, and the label-weighted context sum ``h^t = (1/n) Σ y_i F^t_i`` obeys the
same map, ``h^t = h^{t−1} + w_S h + w_V C h^{t−1}`` from ``h⁰ = 0`` or ``h = (1/n) Σ y_i x_i``.  The
three readouts are ``hᵀ F^T_q``, ``(h^T)ᵀ x_q`` and ``(h^T)ᵀ F^T_q``: the prediction is a function of
(C, h, x_q) only, exact at every n (n = ∞ included: C = Λ = I + m mᵀ, h = ζ m), which is
``VariantLCA.forward``; ``forward_layers`` writes out every column and every layer instead.  In
the large-context limit this is ``ŷ = ζ mᵀ Q(Λ) x_q`` with ``Q = P_T`` (one raw side) or ``P_T²``
(both evolved), ``theory.variants``' reduction.

The parameters are those ``theory.variants.derive(v).params`` names (α and/or β, in that order): a
weight the prediction does not depend on is not a parameter and is 0 here (β with the skip off and
``F⁰ = X``: w_S = 0 anyway); with ``F⁰ = 0`` and the skip off there are none and the model
predicts 0.
"""
from __future__ import annotations

import numbers

import torch
from torch import nn

from mmicl.theory import variants as tv
from .estimate import Estimate
from mmicl.numerics.laws.language import takes_law
from .models import Batch, as_moments
from .montecarlo import conditional_excess
from .sampling import Prompts
from mmicl.numerics.laws.task import TaskLaw
from .validate import MAX_DEPTH_VARIANT, InputError, check_depth, check_finite

__all__ = ["VariantLCA", "sampled_excess_variant"]


def _variant(variant) -> tv.Variant:
    """``variant`` (a ``Variant`` or its text) with tied weights, or an ``InputError`` saying what to use."""
    try:
        v = tv.Variant.parse(variant)
    except tv.VariantError as e:
        raise InputError(str(e)) from None
    if v.param == "untied":
        raise InputError(f"variant {v.text}: VariantLCA has tied weights, param=one or param=two; one α per "
                         "layer is numerics.models.UntiedReducedLCA (readout=raw-keys,f0=zero,skip=on only)")
    try:
        return v.require_supported()
    except tv.VariantError as e:
        raise InputError(str(e)) from None


class VariantLCA(nn.Module):
    """The LCA ``variant`` (module docstring) of depth ``T`` at ``params``: one number per name of
    ``derive(variant).params`` (α and/or β in that order; none where the model predicts 0).

    The parameters are float64 ``nn.Parameter`` scalars (``alpha``, ``beta``), so the values given
    are kept exactly; ``forward`` casts them to the batch's dtype and device (any float dtype,
    CPU or CUDA)."""

    def __init__(self, variant, T: int, params=()):
        super().__init__()
        self.variant = _variant(variant)
        self.T = check_depth(T, MAX_DEPTH_VARIANT, "VariantLCA")
        self.names = tuple(str(p) for p in tv.derive(self.variant).params)
        values = [params] if isinstance(params, numbers.Real) else list(params)
        if len(values) != len(self.names):
            raise InputError(f"variant {self.variant.text} has {len(self.names)} parameter(s) "
                             f"({', '.join(self.names) or 'none: it predicts 0'}), got {len(values)}")
        for name, value in zip(self.names, values):
            value = check_finite(name, value, InputError)
            self.register_parameter(name, nn.Parameter(torch.tensor(value, dtype=torch.float64)))

    def params(self) -> dict[str, float]:
        return {name: float(getattr(self, name).detach()) for name in self.names}

    def weights(self, like: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(w_S, w_V)`` of the layer map, in ``like``'s dtype and device (0 for a weight that is
        not a parameter)."""
        zero = torch.zeros((), dtype=like.dtype, device=like.device)
        alpha = self.alpha.to(like) if "alpha" in self.names else zero
        beta = self.beta.to(like) if "beta" in self.names else zero
        w_s = alpha if self.variant.skip == "on" else zero
        w_v = -alpha if self.variant.param == "one" else beta
        return w_s, w_v

    def forward(self, batch: Batch) -> torch.Tensor:
        """The query column and ``h^t`` side by side, columns of one (B, d, 2) state, T layers."""
        mo = as_moments(batch)
        w_s, w_v = self.weights(mo.cov)
        x = torch.stack([mo.query_x, mo.xy], dim=-1)  # (x_q, h)
        f = torch.zeros_like(x) if self.variant.f0 == "zero" else x
        for _ in range(self.T):
            f = f + w_s * x + w_v * (mo.cov @ f)
        keys = mo.xy if self.variant.readout == "raw-keys" else f[..., 1]  # h or h^T
        query = mo.query_x if self.variant.readout == "evolved-keys" else f[..., 0]  # x_q or F^T_q
        return (keys * query).sum(-1)

    def forward_layers(self, prompts: Prompts) -> torch.Tensor:
        """Every column through every layer, attention scores written out (O(B·n²·d) per layer)."""
        if not isinstance(prompts, Prompts):
            raise InputError("forward_layers writes out the token columns: it needs a Prompts batch, "
                             f"got {type(prompts).__name__} (use forward for moments)")
        x = prompts.x.transpose(1, 2)  # (B, d, n+1): the columns, the query last
        xc = x[..., :-1]
        n = xc.shape[-1]
        w_s, w_v = self.weights(x)
        f = torch.zeros_like(x) if self.variant.f0 == "zero" else x
        for _ in range(self.T):
            scores = xc.transpose(1, 2) @ f / n  # (B, n, n+1): key i · column j
            f = f + w_s * x + w_v * (xc @ scores)
        keys = xc if self.variant.readout == "raw-keys" else f[..., :-1]
        query = x[..., -1] if self.variant.readout == "evolved-keys" else f[..., -1]
        scores = (keys.transpose(1, 2) @ query[..., None]).squeeze(-1)  # (B, n)
        return (prompts.context_y * scores).sum(-1) / n


@takes_law
def sampled_excess_variant(law: TaskLaw, T: int, variant, params, *, n: int | None = None, samples: int,
                           seed: int, device="cpu") -> Estimate:
    """The excess over Bayes ``E[(ŷ − ŷ_Bayes)²]`` of ``VariantLCA(variant, T, params)`` at context
    length ``n`` (None: the large-context limit) by ``conditional_excess`` (the query integrated
    out, float64), with its standard error: a Monte Carlo check of ``numerics.variants.excess_at``."""
    return conditional_excess(VariantLCA(variant, T, params), law, n=n, samples=samples, seed=seed, device=device)
