"""The single-layer LSA on sampled prompts: Monte Carlo estimates and the full LSA trained in torch.

The exact theory (the best reduced LSA ``ŷ = x_qᵀ Γ h`` from its normal equations, its gap to Bayes)
is in ``numerics.lsa``; this module checks it by sampling and by training:

- ``mc_reduced_excess``: ``E[(x_qᵀΓh − ŷ_Bayes)²]`` on sampled prompts, which is the excess risk over
  the task-known Bayes predictor (``y_q − ŷ_Bayes`` is independent of what the LSA sees, given the
  task), with its standard error;
- ``theta_star``, ``layer_weights``, ``layer_prediction``, ``sampled_layer_inputs``: the real layer
  ``f(Z) = Z + P Z M Zᵀ Q Z / n`` with weights that realise a given Γ, on sampled prompts (the
  context tokens themselves at finite n, the exact limit moments as n → ∞);
- ``train_full_lsa``: both (d+1)×(d+1) matrices of the full layer trained by Adam on fresh prompts,
  and ``paired_test_risks``, the trained layer against the exact best on the same test prompts;
- ``comparison``: Bayes, the best LSA and the one-parameter LCA at several depths, in the
  large-context limit, optionally with Monte Carlo estimates of each excess.

Every estimate is a ``numerics.estimate.Estimate`` (``MCEstimate`` is its old name).  torch is
imported on first use.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .estimate import Estimate
from mmicl.numerics.laws.language import takes_law
from .lsa import best_lsa, check_context_length
from mmicl.numerics.laws.task import TaskLaw

__all__ = [
    "MCEstimate",
    "reduced_prediction",
    "mc_reduced_excess",
    "theta_star",
    "layer_weights",
    "layer_prediction",
    "sampled_layer_inputs",
    "TrainedLSA",
    "train_full_lsa",
    "paired_test_risks",
    "comparison",
]

MCEstimate = Estimate  # the old name: a Monte Carlo mean with its standard error


def reduced_prediction(batch, gamma) -> "torch.Tensor":  # noqa: F821
    """``ŷ = x_qᵀ Γ h`` on a ``Prompts`` or ``PromptMoments`` batch (Γ = diag(γ) or a matrix)."""
    import torch

    from .models import as_moments

    mo = as_moments(batch)
    G = torch.as_tensor(np.asarray(gamma, float), dtype=mo.xy.dtype, device=mo.xy.device)
    G = torch.diag(G) if G.ndim == 1 else G
    return (mo.query_x * (mo.xy @ G.T)).sum(-1)


@takes_law
def mc_reduced_excess(law: TaskLaw, gamma, n: int | None, batch: int, seed: int,
                      device: str = "cpu", chunk: int = 20000, tokens: bool = True) -> Estimate:
    """Monte Carlo of ``E[(x_qᵀΓh − ŷ_Bayes)²]`` (= excess risk over the task-known Bayes, since
    ``y_q − ŷ_Bayes`` is independent of everything the LSA sees given the task).  ``tokens=True``
    draws the n context tokens themselves (``sample_prompts``); else the exact moment sampler."""
    import torch

    from .models import bayes_prediction
    from .sampling import moments_of, sample_moments, sample_prompts

    n = check_context_length(n)
    if tokens and n is None:
        raise ValueError("tokens=True needs a finite n; use tokens=False for the large-context limit")
    gen = torch.Generator(device=device).manual_seed(seed)
    out = []
    for start in range(0, batch, chunk):
        b = min(chunk, batch - start)
        if tokens:
            mo = moments_of(sample_prompts(law, b, n, gen, device, torch.float64))
        else:
            mo = sample_moments(law, b, n, gen, device, torch.float64)
        out.append((reduced_prediction(mo, gamma) - bayes_prediction(mo)) ** 2)
    return Estimate.of(torch.cat(out))


# ---------------------------------------------------------------------------------------------
# The real layer on sampled prompts, with weights that realise a given Γ
# ---------------------------------------------------------------------------------------------


def theta_star(gamma) -> np.ndarray:
    """The full layer's free weights at the best LSA: (Γ row-major, p_x = 0, q₂₁ = 0); p_y = 1."""
    g = np.asarray(gamma, float)
    G = np.diag(g) if g.ndim == 1 else g
    d = G.shape[0]
    return np.concatenate([G.ravel(), np.zeros(2 * d)])


def layer_weights(theta, d: int):
    """``P = W^{PV}`` and ``Q = W^{KQ}`` (… × (d+1) × (d+1)) from θ = (Γ, p_x, q₂₁): the last row of
    P is (p_xᵀ, 1), Q's top-left block is Γᵀ and its last row (q₂₁ᵀ, 0); every other entry 0 (they
    never enter the prediction).  The layer's reduced matrix ``p_y Q₁₁ᵀ + q₂₁ p_xᵀ`` (``theory.lsa``)
    is then ``Γ + q₂₁ p_xᵀ``: Γ itself at θ*."""
    import torch

    lead = theta.shape[:-1]
    G = theta[..., : d * d].reshape(*lead, d, d)
    P = torch.zeros(*lead, d + 1, d + 1, dtype=theta.dtype, device=theta.device)
    Q = torch.zeros_like(P)
    P[..., d, :d] = theta[..., d * d : d * d + d]
    P[..., d, d] = 1.0
    Q[..., :d, :d] = G.transpose(-1, -2)
    Q[..., d, :d] = theta[..., d * d + d :]
    return P, Q


def layer_prediction(P, Q, gram, zq):
    """The query column of ``f(Z) = Z + P Z M Zᵀ Q Z / n`` is ``z_q + P (Z M Zᵀ/n) Q z_q``; its last
    entry.  ``gram = Z M Zᵀ / n`` (M drops the query column), ``z_q = (x_q, 0)``."""
    out = zq + (P @ (gram @ (Q @ zq[..., None])))[..., 0]
    return out[..., -1]


@takes_law
def sampled_layer_inputs(law: TaskLaw, n: int | None, samples: int, seed: int, device: str = "cpu",
                         chunk: int = 20_000):
    """Chunks ``(gram, z_q, y_q, ŷ_Bayes)`` in float64.  Finite n: the n context tokens are drawn
    (``sample_prompts``), embedded as ``Z`` and ``gram = Z M Zᵀ / n`` is formed from them.  n = ∞:
    the limit ``[[Λ, ζm], [ζmᵀ, ζ²]]`` (``sample_moments(n=None)``).  ``ŷ_Bayes = ζ mᵀx_q/(1+s)``."""
    import torch

    from .sampling import sample_moments, sample_prompts

    gen = torch.Generator(device=device).manual_seed(seed)
    d = law.d
    for start in range(0, samples, chunk):
        b = min(chunk, samples - start)
        if n is None:
            mo = sample_moments(law, b, None, gen, device, torch.float64)
            gram = torch.empty(b, d + 1, d + 1, dtype=torch.float64, device=device)
            gram[:, :d, :d], gram[:, :d, d], gram[:, d, :d], gram[:, d, d] = mo.cov, mo.xy, mo.xy, mo.yy
            xq, yq, m, zeta = mo.query_x, mo.query_y, mo.m, mo.zeta
        else:
            pr = sample_prompts(law, b, n, gen, device, torch.float64)
            labels = pr.y.clone()
            labels[:, -1] = 0.0  # the query's label is not given
            Z = torch.cat([pr.x, labels[..., None]], -1).transpose(1, 2)  # (b, d+1, n+1)
            ctx = Z[..., :n]  # Z M: the mask keeps the query out of the keys
            gram = ctx @ ctx.transpose(1, 2) / n
            xq, yq, m, zeta = pr.query_x, pr.query_y, pr.m, pr.zeta
        zq = torch.cat([xq, torch.zeros_like(xq[:, :1])], -1)
        bayes = zeta * (m * xq).sum(-1) / (1 + (m**2).sum(-1))
        yield gram, zq, yq, bayes


# ---------------------------------------------------------------------------------------------
# The full layer trained in torch
# ---------------------------------------------------------------------------------------------


@dataclass
class TrainedLSA:
    """A full LSA trained by Adam on fresh prompts, with its settings and last training loss."""

    model: object  # numerics.models.LinearSelfAttention
    n: int
    steps: int
    batch: int
    lr: float
    seed: int
    final_train_loss: float

    def effective_gamma(self) -> np.ndarray:
        """``Γ = p_y Q₁₁ᵀ + q₂₁ p_xᵀ`` of the trained weights (``theory.lsa``), and the norms of
        the even terms' weights ``p_x`` and ``q₂₁`` (which the best LSA sets to 0)."""
        P = self.model.value.detach().double().cpu().numpy()
        Q = self.model.key_query.detach().double().cpu().numpy()
        d = P.shape[0] - 1
        px, py, Q11, q21 = P[d, :d], P[d, d], Q[:d, :d], Q[d, :d]
        return py * Q11.T + np.outer(q21, px)


@takes_law
def train_full_lsa(law: TaskLaw, n: int, steps: int, batch: int = 1024, lr: float = 0.02,
                   seed: int = 0, device: str = "cpu", init_scale: float = 0.3,
                   progress: bool = False) -> TrainedLSA:
    """The full LSA (both (d+1)×(d+1) matrices, ``numerics.models.LinearSelfAttention``) trained
    by Adam with a cosine schedule on fresh prompts of context length n every step (online SGD on
    the population risk at that n), by ``numerics.training.train``."""
    import torch

    from .models import LinearSelfAttention
    from .training import train

    init = torch.Generator().manual_seed(seed + 1)
    model = LinearSelfAttention(law.d, init_scale=init_scale, generator=init)
    run = train(model, law, n=n, steps=steps, batch=batch, lr=lr, schedule="cosine", seed=seed,
                device=device, progress=progress)
    if run.diverged:
        raise FloatingPointError(f"training the full LSA diverged: {run.message}; lower lr={lr}")
    return TrainedLSA(model, n, steps, batch, lr, seed, float(run.history["loss"][-1]))


@takes_law
def paired_test_risks(trained: TrainedLSA, law: TaskLaw, gamma, batch: int, seed: int,
                      device: str = "cpu") -> dict[str, Estimate]:
    """On one fresh test set at the trained n: the squared loss of the trained full LSA, of the
    exact best LSA ``diag(γ)``, and their per-prompt difference (paired: same prompts, so the
    difference's standard error is far below either loss's)."""
    import torch

    from .sampling import sample_moments

    gen = torch.Generator(device=device).manual_seed(seed)
    mo = sample_moments(law, batch, trained.n, gen, device, torch.float64)
    model = trained.model.double()
    with torch.no_grad():
        lt = (model(mo) - mo.query_y) ** 2
        lb = (reduced_prediction(mo, gamma) - mo.query_y) ** 2
    trained.model.float()
    return {"trained": Estimate.of(lt), "best": Estimate.of(lb), "difference": Estimate.of(lt - lb)}


# ---------------------------------------------------------------------------------------------
# Comparison with the one-parameter LCA
# ---------------------------------------------------------------------------------------------


@takes_law
def comparison(law: TaskLaw, depths=(1, 2, 5, 10, 20), mc_batch: int = 0, seed: int = 0,
               device: str = "cpu") -> list[dict]:
    """Rows ``{model, risk, excess, mc_excess?}`` in the large-context limit: Bayes, the best LSA,
    and the one-parameter LCA at each depth T with its optimal ``α_T`` (``numerics.lca``).
    With ``mc_batch > 0`` each excess is also estimated by Monte Carlo over tasks and queries
    (exact limit moments, ``sample_moments(n=None)``), with its standard error."""
    import torch

    from . import lca
    from .models import ReducedLCA, bayes_prediction
    from .sampling import sample_moments

    best = best_lsa(law)
    bayes = lca.bayes_risk(law)
    rows = [{"model": "Bayes", "param": None, "risk": bayes, "excess": 0.0},
            {"model": "best LSA", "param": best.to_json()["gamma"], "risk": bayes + best.gap, "excess": best.gap}]
    models = {"best LSA": None}
    for T in depths:
        a = lca.alpha_T(law, T)
        ex = lca.excess_risk(law, T, a)
        rows.append({"model": f"LCA T={T}", "param": a, "risk": bayes + ex, "excess": ex})
        models[f"LCA T={T}"] = ReducedLCA(T, "one", alpha=a).double()
    if mc_batch:
        gen = torch.Generator(device=device).manual_seed(seed)
        mo = sample_moments(law, mc_batch, None, gen, device, torch.float64)
        target = bayes_prediction(mo)
        with torch.no_grad():
            for row in rows[1:]:
                mdl = models[row["model"]]
                pred = reduced_prediction(mo, best.gamma) if mdl is None else mdl.to(device)(mo)
                row["mc_excess"] = Estimate.of((pred - target) ** 2).to_json()
    return rows
