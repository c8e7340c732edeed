"""The architectures of docs/model.md (LSA, LCA) as torch modules.

Every model maps a batch of prompts to its query predictions ``ŷ_q`` of shape ``(B,)``.  A batch
is either a ``Prompts`` (the tokens) or a ``PromptMoments`` (the context reduced to
``C = (1/n)Σ x_i x_iᵀ``, ``h = (1/n)Σ y_i x_i``, ``(1/n)Σ y_i²``): every model here reads the
context only through these moments, so the fast paths take either.

``LinearSelfAttention``  the full single LSA layer: value-projection ``W^{PV}`` and
                         key-query ``W^{KQ}``, both (d+1)×(d+1); the query is masked out as a key;
                         ``1/n``.  ``forward_full`` builds the whole output matrix; ``forward`` reads
                         its bottom-right entry through the moments.
``LCA``                  the general LCA stack with per-layer or tied W^S, W^V, W^K, W^Q and
                         a readout W^R; ``skip=False`` is the no-skip ablation (W^S ≡ 0).
                         ``forward_layers`` runs every token column through every layer with the
                         attention written out; ``forward`` runs the query column only (columns do
                         not interact except through C, which is formed once per prompt).
``ReducedLCA``           W^K = W^Q = W^R = I, W^S = αI, W^V = βI: ``mode="one"`` (β = −α),
                         ``"two"`` (α, β free), ``"noskip"`` (α ≡ 0, β free).  ``forward`` is the
                         closed form in the eigenbasis of C:
                         ``F^T_q = α Σ_{k<T} (I + βC)^k x_q``, so with ``C = Q diag(λ) Qᵀ``
                         ``ŷ = Σ_j (Qᵀh)_j (Qᵀx_q)_j · α Σ_{k<T} (1 + βλ_j)^k``.
                         ``as_lca()`` gives the same model as a general ``LCA`` (for tests).
``UntiedReducedLCA``     W^K = W^Q = W^R = I, W^S_t = −W^V_t = α_t I with one α_t per layer (an
                         extension beyond the paper, docs/untied.md); ``forward`` runs the derived
                         layer ``p ↦ (1 − α_t ℓ) p + α_t`` on the eigenvalues ℓ of C.
``build_model``          the model of each name in ``MODELS`` with its standard start (what
                         ``mmicl train`` and the sweep kind ``montecarlo`` train).
"""
from __future__ import annotations

import numbers
from functools import lru_cache
from typing import Callable, Literal, Union

import torch
from torch import nn

from mmicl.numerics.laws.language import takes_law
from .sampling import PromptMoments, Prompts, moments_of
from mmicl.numerics.laws.task import TaskLaw
from .validate import check_depth, check_finite

Batch = Union[Prompts, PromptMoments]

__all__ = ["Batch", "as_moments", "LinearSelfAttention", "LCA", "ReducedLCA", "UntiedReducedLCA",
           "bayes_prediction", "MODELS", "build_model"]


def as_moments(batch: Batch) -> PromptMoments:
    return batch if isinstance(batch, PromptMoments) else moments_of(batch)


def bayes_prediction(batch: Batch) -> torch.Tensor:
    """``E[y_q | x_q, task] = ζ mᵀ Λ⁻¹ x_q = ζ mᵀ x_q / (1 + s)`` (the task known).

    The formula is ``theory.model.bayes_predictor().prediction`` compiled to Python operators, so
    it runs on the batch's tensors as they are (device, dtype, autograd); here only ``s = ‖m‖²`` and
    ``mᵀx_q`` are formed."""
    m = batch.m
    (pred,) = _bayes_formula()((m**2).sum(-1), batch.zeta, (m * batch.query_x).sum(-1))
    return pred


@lru_cache(maxsize=1)
def _bayes_formula() -> Callable:
    """``f(s, ζ, mᵀx) -> (ŷ_Bayes,)`` from ``theory.compile`` (SymPy loads here, on first use)."""
    from mmicl.theory.compile import compiled
    from mmicl.theory.model import bayes_predictor, m_dot_x, s, zeta

    return compiled("bayes_prediction", lambda: ([bayes_predictor().prediction], [s, zeta, m_dot_x]), "operators")


def _small(shape, scale: float, generator: torch.Generator | None) -> torch.Tensor:
    return scale * torch.randn(*shape, generator=generator)


# ---------------------------------------------------------------------------------------------
# Single-layer linear self-attention
# ---------------------------------------------------------------------------------------------


class LinearSelfAttention(nn.Module):
    """One linear self-attention layer on ``Z = [[x_1 … x_n x_q], [y_1 … y_n 0]]``:

        out = Z + (1/n) W^{PV} Z M Zᵀ W^{KQ} Z,     M = diag(1, …, 1, 0)  (the query is no key)

    and ``ŷ_q = out[d, n]`` (bottom-right).  Since ``(1/n) Z M Zᵀ = G = [[C, h], [hᵀ, ȳ²]]``,
    ``ŷ_q = (W^{PV})_{d,:} G W^{KQ} [x_q; 0]``; with ``W^{PV}_{d,:} = (0, 1)`` and
    ``W^{KQ} = [[Γᵀ, 0], [0, 0]]`` this is the reduced form ``x_qᵀ Γ h``.

    Both matrices are trained whole, initialised ``N(0, init_scale²)`` entrywise (0 is a saddle:
    the prediction is bilinear in the two matrices).
    """

    def __init__(self, d: int, init_scale: float = 0.1, generator: torch.Generator | None = None):
        super().__init__()
        if d < 1:
            raise ValueError(f"d must be ≥ 1, got {d}")
        self.d = d
        self.value = nn.Parameter(_small((d + 1, d + 1), init_scale, generator))  # W^{PV}
        self.key_query = nn.Parameter(_small((d + 1, d + 1), init_scale, generator))  # W^{KQ}

    @staticmethod
    def embed(prompts: Prompts) -> torch.Tensor:
        """``Z`` of shape (B, d+1, n+1): tokens as columns, labels in the last row, query label 0."""
        y = prompts.y.clone()
        y[:, -1] = 0
        return torch.cat([prompts.x, y[..., None]], dim=-1).transpose(1, 2)

    def forward_full(self, prompts: Prompts) -> torch.Tensor:
        """The whole output matrix (B, d+1, n+1), written as in the definition."""
        z = self.embed(prompts)
        n = z.shape[-1] - 1
        mask = torch.ones(n + 1, dtype=z.dtype, device=z.device)
        mask[-1] = 0
        attn = (z * mask) @ z.transpose(1, 2) @ self.key_query @ z / n
        return z + self.value @ attn

    def forward(self, batch: Batch) -> torch.Tensor:
        mo = as_moments(batch)
        b, d = mo.query_x.shape
        gram = torch.empty(b, d + 1, d + 1, dtype=mo.cov.dtype, device=mo.cov.device)
        gram[:, :d, :d] = mo.cov
        gram[:, :d, d] = mo.xy
        gram[:, d, :d] = mo.xy
        gram[:, d, d] = mo.yy
        zq = torch.cat([mo.query_x, torch.zeros_like(mo.query_x[:, :1])], dim=-1)
        return ((self.value[d] @ gram) * (zq @ self.key_query.T)).sum(-1)

    def gamma(self) -> torch.Tensor:
        """The Γ of the reduced form when the weights have the reduced shape (used for reports):
        ``W^{PV}_{d,d} · (W^{KQ}_{:d,:d})ᵀ``."""
        d = self.d
        return self.value[d, d] * self.key_query[:d, :d].T


# ---------------------------------------------------------------------------------------------
# The general LCA stack
# ---------------------------------------------------------------------------------------------


class LCA(nn.Module):
    """T layers of linearised cross-attention with a skip, then a linear-attention readout.

        F⁰ = 0,   F^t = F^{t−1} + W^S_t X + (1/n) W^V_t X_c X_cᵀ (W^K_t)ᵀ W^Q_t F^{t−1},
        ŷ_q = (1/n) Σ_{i≤n} y_i x_iᵀ W^R F^T_q.

    ``tied``: one set of matrices for all layers (else one per layer).  ``skip=False``: W^S ≡ 0,
    not trained (the ablation of Appendix F of arXiv:2602.04872; with F⁰ = 0 the model then predicts 0).
    Initialisation: W^K = W^Q = W^R = I plus ``N(0, init_scale²)`` noise, W^S and W^V pure noise
    (pass ``identity_init=False`` for pure noise everywhere).
    """

    def __init__(self, d: int, T: int, tied: bool = True, skip: bool = True, init_scale: float = 0.01,
                 identity_init: bool = True, generator: torch.Generator | None = None):
        super().__init__()
        if isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 1:
            raise ValueError(f"the dimension d must be a positive integer, got {d!r}")
        T = check_depth(T)
        self.d, self.T, self.tied, self.skip = d, T, tied, skip
        shape = (d, d) if tied else (T, d, d)
        eye = torch.eye(d).expand(shape).clone() if identity_init else torch.zeros(shape)
        self.w_v = nn.Parameter(_small(shape, init_scale, generator))
        self.w_k = nn.Parameter(eye + _small(shape, init_scale, generator))
        self.w_q = nn.Parameter(eye + _small(shape, init_scale, generator))
        self.w_r = nn.Parameter(torch.eye(d) * float(identity_init) + _small((d, d), init_scale, generator))
        if skip:
            self.w_s = nn.Parameter(_small(shape, init_scale, generator))
        else:
            self.register_buffer("w_s", torch.zeros(shape))

    def layer(self, t: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """(W^S, W^V, W^K, W^Q) of layer t (0-based)."""
        if self.tied:
            return self.w_s, self.w_v, self.w_k, self.w_q
        return self.w_s[t], self.w_v[t], self.w_k[t], self.w_q[t]

    def forward_layers(self, prompts: Prompts) -> torch.Tensor:
        """Every column through every layer, attention scores written out (O(B·n²·d) per layer)."""
        x = prompts.x.transpose(1, 2)  # (B, d, n+1)
        xc = x[..., :-1]
        n = xc.shape[-1]
        f = torch.zeros_like(x)
        for t in range(self.T):
            w_s, w_v, w_k, w_q = self.layer(t)
            scores = (w_k @ xc).transpose(1, 2) @ (w_q @ f) / n  # (B, n, n+1): key i · query j
            f = f + w_s @ x + w_v @ xc @ scores
        h = (xc @ prompts.context_y[..., None]).squeeze(-1) / n
        return (h * (f[..., -1] @ self.w_r.T)).sum(-1)

    def forward(self, batch: Batch) -> torch.Tensor:
        """The query column only, ``C`` formed once per prompt:
        ``F^t_q = F^{t−1}_q + W^S_t x_q + W^V_t C (W^K_t)ᵀ W^Q_t F^{t−1}_q``."""
        mo = as_moments(batch)
        xq = mo.query_x[..., None]
        f = torch.zeros_like(xq)
        if self.tied:
            step = self.w_v @ mo.cov @ (self.w_k.T @ self.w_q)  # (B, d, d)
            skip = self.w_s @ xq
            for _ in range(self.T):
                f = f + skip + step @ f
        else:
            for t in range(self.T):
                w_s, w_v, w_k, w_q = self.layer(t)
                f = f + w_s @ xq + w_v @ (mo.cov @ (w_k.T @ (w_q @ f)))
        return (mo.xy * (self.w_r @ f).squeeze(-1)).sum(-1)


# ---------------------------------------------------------------------------------------------
# Reduced LCA models
# ---------------------------------------------------------------------------------------------

Mode = Literal["one", "two", "noskip"]


class _EigenFilter(nn.Module):
    """A reduced LCA in its eigen form: with ``C = Q diag(ℓ) Qᵀ``, ``ŷ = Σ_j (Qᵀh)_j (Qᵀx_q)_j g(ℓ_j)``
    for the model's ``eigen_gain`` g."""

    def eigen_gain(self, lam: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def forward(self, batch: Batch) -> torch.Tensor:
        mo = as_moments(batch)
        lam, q = torch.linalg.eigh(mo.cov)
        hq = (q.transpose(1, 2) @ mo.xy[..., None]).squeeze(-1)
        xq = (q.transpose(1, 2) @ mo.query_x[..., None]).squeeze(-1)
        return (hq * xq * self.eigen_gain(lam)).sum(-1)


class ReducedLCA(_EigenFilter):
    """The reduced LCA of depth T (W^K = W^Q = W^R = I): W^S = αI, W^V = βI with
    ``mode="one"``: β = −α (parameter α); ``"two"``: α, β; ``"noskip"``: α ≡ 0 (parameter β).

    Large-context limit (C → Λ, h → ζ m): ``ŷ = ζ α Σ_{k<T} (1 + β(1+s))^k mᵀx_q``.
    """

    def __init__(self, T: int, mode: Mode = "one", alpha: float = 0.0, beta: float | None = None):
        super().__init__()
        T = check_depth(T)
        if mode not in ("one", "two", "noskip"):
            raise ValueError(f"mode must be one, two or noskip, got {mode!r}")
        self.T, self.mode = T, mode
        if mode == "noskip":
            self.register_buffer("alpha", torch.tensor(0.0))
        else:
            self.alpha = nn.Parameter(torch.tensor(check_finite("alpha", alpha)))
        if mode == "one":
            self.beta_param = None
        else:
            self.beta_param = nn.Parameter(torch.tensor(check_finite("beta", -alpha if beta is None else beta)))

    @property
    def beta(self) -> torch.Tensor:
        return -self.alpha if self.beta_param is None else self.beta_param

    def params(self) -> dict[str, float]:
        out = {"alpha": float(self.alpha.detach()), "beta": float(self.beta.detach())}
        return out if self.mode != "noskip" else {"beta": out["beta"]}

    def eigen_gain(self, lam: torch.Tensor) -> torch.Tensor:
        """``α Σ_{k<T} (1 + βλ)^k`` elementwise (the filter applied to each eigen-direction)."""
        k = torch.arange(self.T, dtype=lam.dtype, device=lam.device)
        base = 1 + self.beta.to(lam.dtype) * lam
        return self.alpha.to(lam.dtype) * (base[..., None] ** k).sum(-1)

    def forward_loop(self, batch: Batch) -> torch.Tensor:
        """The same prediction by T query-column steps ``F ← F + α x_q + β C F`` (no eigh)."""
        mo = as_moments(batch)
        xq = mo.query_x[..., None]
        f = torch.zeros_like(xq)
        for _ in range(self.T):
            f = f + self.alpha * xq + self.beta * (mo.cov @ f)
        return (mo.xy * f.squeeze(-1)).sum(-1)

    def as_lca(self, d: int) -> LCA:
        """The same model as a tied general ``LCA`` (weights copied, not shared)."""
        lca = LCA(d, self.T, tied=True, skip=self.mode != "noskip", init_scale=0.0)
        eye = torch.eye(d)
        with torch.no_grad():
            if self.mode != "noskip":
                lca.w_s.copy_(float(self.alpha.detach()) * eye)
            lca.w_v.copy_(float(self.beta.detach()) * eye)
        return lca


class UntiedReducedLCA(_EigenFilter):
    """The reduced LCA with one scalar per layer (an extension beyond arXiv:2602.04872, see
    docs/untied.md): W^K = W^Q = W^R = I and ``W^S_t = −W^V_t = α_t I``, one parameter per layer
    (``alphas``, an ``nn.ParameterList`` of scalars; ``alpha0s`` their start).

    Along an eigen-direction of C with eigenvalue ℓ the query factor obeys
    ``p_t = (1 − α_t ℓ) p_{t−1} + α_t``, ``p_0 = 0`` (``theory.untied.layer_map``, compiled to Python
    operators), so with ``C = Q diag(ℓ) Qᵀ``: ``ŷ = Σ_j (Qᵀh)_j (Qᵀx_q)_j p_T(ℓ_j)``.  With every α_t
    equal it is ``ReducedLCA(T, "one", α)``.  Start from distinct α's: the loss is symmetric in the
    layers, so equal α's get equal gradients and stay equal (the tied model)."""

    def __init__(self, T: int, alpha0s):
        super().__init__()
        T = check_depth(T)
        try:
            starts = [check_finite(f"alpha0s[{t}]", a) for t, a in enumerate(alpha0s)]
        except TypeError:
            raise ValueError(f"alpha0s must be a sequence of T = {T} numbers, got {alpha0s!r}") from None
        if len(starts) != T:
            raise ValueError(f"alpha0s must hold one start per layer (T = {T}), got {len(starts)}")
        self.T = T
        self.alphas = nn.ParameterList([nn.Parameter(torch.tensor(a)) for a in starts])

    def schedule(self) -> list[float]:
        """The current ``(α_1, …, α_T)`` in layer order."""
        return [float(a.detach()) for a in self.alphas]

    def params(self) -> dict[str, float]:
        return {f"alpha[{t}]": a for t, a in enumerate(self.schedule())}

    def eigen_gain(self, lam: torch.Tensor) -> torch.Tensor:
        """``p_T(ℓ)`` elementwise: the T layers applied to the factor of each eigen-direction."""
        step = _untied_layer_formula()
        p = torch.zeros_like(lam)
        for a in self.alphas:
            (p,) = step(p, a.to(lam.dtype), lam)
        return p

    def forward_loop(self, batch: Batch) -> torch.Tensor:
        """The same prediction by T query-column steps ``F ← F + α_t x_q − α_t C F`` (no eigh)."""
        mo = as_moments(batch)
        xq = mo.query_x[..., None]
        f = torch.zeros_like(xq)
        for a in self.alphas:
            f = f + a * xq - a * (mo.cov @ f)
        return (mo.xy * f.squeeze(-1)).sum(-1)


@lru_cache(maxsize=1)
def _untied_layer_formula() -> Callable:
    """``f(p, α, ℓ) -> (p_next,)`` from ``theory.untied.layer_map`` (SymPy loads here, on first use)."""
    from mmicl.theory.compile import compiled
    from mmicl.theory.untied import layer_map

    def build():
        expr, symbols = layer_map()
        return [expr], list(symbols)

    return compiled("untied_layer", build, "operators")


# ---------------------------------------------------------------------------------------------
# The trainable models by name
# ---------------------------------------------------------------------------------------------

MODELS = ("lsa", "lca1", "lca2", "lca", "lca-noskip")
"""The names ``build_model`` knows (the choices of ``mmicl train --model``)."""


@takes_law
def build_model(name: str, d: int, T: int, law: TaskLaw, seed: int) -> nn.Module:
    """The model called ``name``: ``lca1``/``lca2`` start at α = α*/2 (β = −α*/4 for lca2);
    ``lca``/``lca-noskip`` are the tied general stack (W^K = W^Q = W^R = I + 0.01·noise).

    ``law`` (a ``TaskLaw`` or LAW text) sets the reduced models' start through its bounds on s;
    ``seed`` the noise of ``lsa`` and the general stacks."""
    if name not in MODELS:
        raise ValueError(f"model must be one of {', '.join(MODELS)}, got {name!r}")
    gen = torch.Generator().manual_seed(seed)
    lo, hi = law.s_bounds()
    a0 = 1.0 / (2.0 + lo + hi)  # α*/2 where s is bounded, a safe small start otherwise
    if name == "lsa":
        return LinearSelfAttention(d, generator=gen)
    if name == "lca1":
        return ReducedLCA(T, "one", a0)
    if name == "lca2":
        return ReducedLCA(T, "two", a0, -a0 / 2)
    return LCA(d, T, tied=True, skip=name == "lca", generator=gen)
