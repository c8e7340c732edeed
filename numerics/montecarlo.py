"""Monte Carlo primitives: sampled objectives of the reduced LCA and their minimisers.

``stationary_point`` estimates the minimiser of the population loss at context length n by
*sample-average approximation* (SAA): Newton's method on the loss averaged over N fixed prompts (its
end is stationary for that *sampled* loss, not for the population loss: the distance between the two
is what the standard error measures),
with the sandwich standard error ``se = √(H⁻¹ Σ_g H⁻¹ / N)`` (Σ_g the covariance of the per-prompt
gradients, H the Hessian).  It uses ``E[(ŷ − E[y_q|x_q, task])²]``, whose gradient equals that of
``E[(ŷ − y_q)²]`` (y_q's noise given x_q and the task is independent of everything ŷ reads) and has
a smaller variance.  The same seed gives the same tasks and queries at every n (``sample_moments``
draws them before the context), so α_n − α_∞ is estimated with common random numbers.

``sampled_excess_one`` evaluates that SAA objective pointwise; ``conditional_excess`` estimates a
model's excess risk with the query integrated out.  The experiments that train models and compare
them with the theory are in ``mmicl.numerics.mc_studies``.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .estimate import Estimate
from mmicl.numerics.laws.language import takes_law
from .models import ReducedLCA, bayes_prediction
from .sampling import sample_moments
from mmicl.numerics.laws.task import TaskLaw
from mmicl.numerics.training import draw_batch

__all__ = ["StationaryPoint", "stationary_point", "sampled_excess_one", "excess_rounding_floor", "conditional_excess"]


@dataclass
class StationaryPoint:
    """Newton's end point ``theta`` on the sampled (SAA) loss at context length ``n`` (α, or (α, β)),
    the estimate of the population loss's minimiser, with its sandwich standard errors.
    ``converged``: Newton's step on the *sampled* loss fell below 1e-12 — converged for the sampled
    loss (the ``samples`` prompts drawn), not a statement about the population loss, and the sign of
    the sampled Hessian is not checked."""

    theta: list[float]
    se: list[float]
    n: int | None
    samples: int
    converged: bool
    iterations: int

    def estimate(self, i: int = 0) -> Estimate:
        """Coordinate ``i`` as an ``Estimate`` (its se the sandwich one)."""
        return Estimate(self.theta[i], self.se[i], self.samples)


def _flat_params(model: ReducedLCA) -> list[torch.nn.Parameter]:
    return [p for p in model.parameters() if p.requires_grad]


@takes_law
def stationary_point(model: ReducedLCA, law: TaskLaw, *, n: int | None, samples: int = 200_000,
                     seed: int = 2024, device="cpu", max_iter: int = 30, chunks: int = 64) -> StationaryPoint:
    """Newton's method from the model's current parameters on the SAA loss (float64), at most
    ``max_iter`` steps, each step capped at 0.05 in every coordinate (the loss is far from quadratic
    near the edge of the stable region); converged (for the sampled loss) when the step is below
    1e-12."""
    if samples < 2 * chunks:
        raise ValueError(f"need samples ≥ 2·chunks = {2 * chunks} for the standard error, got {samples}")
    m = ReducedLCA(model.T, model.mode, float(model.alpha.detach()), float(model.beta.detach())).to(device, torch.float64)
    params = _flat_params(m)
    gen = torch.Generator(device=device).manual_seed(seed)
    b = sample_moments(law, samples, n, gen, device, torch.float64)
    target = bayes_prediction(b)

    def loss_and_grad(create_graph=False):
        loss = ((m(b) - target) ** 2).mean()
        g = torch.autograd.grad(loss, params, create_graph=create_graph)
        return loss, torch.stack([gi.reshape(()) for gi in g])

    converged, it = False, 0
    for it in range(1, max_iter + 1):
        _, g = loss_and_grad(create_graph=True)
        h = torch.stack([torch.stack([hh.reshape(()) for hh in torch.autograd.grad(gi, params, retain_graph=True)])
                         for gi in g])
        step = torch.linalg.solve(h, g.detach()).clamp(-0.05, 0.05)
        with torch.no_grad():
            for p, s in zip(params, step):
                p -= s
        if float(step.abs().max()) < 1e-12:
            converged = True
            break
    # sandwich standard error from chunked gradients at the end point
    _, g = loss_and_grad(create_graph=True)
    h = torch.stack([torch.stack([hh.reshape(()) for hh in torch.autograd.grad(gi, params, retain_graph=True)])
                     for gi in g]).detach()
    per = []
    idx = torch.arange(samples, device=device).chunk(chunks)
    pred = m(b)
    resid = 2 * (pred - target)
    for ix in idx:
        gi = torch.autograd.grad((resid[ix].detach() * pred[ix]).mean(), params, retain_graph=True)
        per.append(torch.stack([x.reshape(()) for x in gi]))
    per = torch.stack(per)  # (chunks, k)
    cov_g = torch.atleast_2d(torch.cov(per.T)) / chunks
    hinv = torch.linalg.inv(h)
    cov = hinv @ cov_g @ hinv.T
    theta = [float(p.detach()) for p in params]
    return StationaryPoint(theta=theta, se=[float(v) ** 0.5 for v in torch.diagonal(cov)], n=n,
                           samples=samples, converged=converged, iterations=it)


@takes_law
@torch.no_grad()
def sampled_excess_one(law: TaskLaw, T: int, alphas: list[float], *, n: int | None, samples: int,
                       seed: int, device="cpu") -> list[float]:
    """The sampled loss of the one-parameter LCA, ``mean (ŷ_α − ŷ_Bayes)²`` over one fixed set of
    ``samples`` prompts (float64), at each α of ``alphas``: the SAA objective of
    ``stationary_point``, evaluated pointwise."""
    gen = torch.Generator(device=device).manual_seed(seed)
    b = sample_moments(law, samples, n, gen, device, torch.float64)
    target = bayes_prediction(b)
    out = []
    for a in alphas:
        m = ReducedLCA(T, "one", float(a)).to(device, torch.float64)
        out.append(float(((m(b) - target) ** 2).mean()))
    return out



@takes_law
def excess_rounding_floor(law: TaskLaw, T: int) -> float:
    """The excess below which float64 cannot resolve ``ŷ − ŷ_Bayes`` for the depth-T reduced
    LCA: ŷ is a T-term geometric sum after an eigendecomposition, so its rounding error is about
    T·ε·|ŷ_Bayes| (ε = 2^-52), and E[ŷ_Bayes²] ≤ E[ζ²]·s_hi/(1 + s_hi); the floor is
    ``(T·ε)²·E[ζ²]·s_hi/(1 + s_hi)``."""
    hi = law.s_bounds()[1]
    return (T * 2.0**-52) ** 2 * (law.zeta.second_moment() * hi / (1 + hi))


@takes_law
def conditional_excess(model: torch.nn.Module, law: TaskLaw, *, n: int | None, samples: int, seed: int,
                       device="cpu", chunk: int = 8192) -> Estimate:
    """Excess risk ``E[(ŷ − ŷ_Bayes)²]`` of ``model`` and its standard error, with the query
    integrated out exactly (a Rao–Blackwellised estimator, float64).

    Given the prompt (its task m, ζ and context), ŷ − ŷ_Bayes is linear in the query: ``aᵀx_q``
    with ``a`` its gradient in x_q (taken by autograd through the model's own forward pass), and
    x_q ~ N(0, Λ), Λ = I + m mᵀ, so ``E[(aᵀx_q)² | prompt] = |a|² + (aᵀm)²``.  Averaging that over
    prompts has the same mean as the direct estimator and none of the variance of the query
    (whose χ²₁ factor makes the direct estimate heavy-tailed: its mean falls below the truth more
    often than a normal z-test allows)."""
    import dataclasses


    model.to(device=device, dtype=torch.float64)
    gen = torch.Generator(device=device).manual_seed(seed)
    parts = []
    for i in range(0, samples, chunk):
        b = draw_batch(law, min(chunk, samples - i), n, gen, device, torch.float64)
        xq = b.query_x.clone().requires_grad_(True)
        b = dataclasses.replace(b, query_x=xq)
        diff = model(b) - bayes_prediction(b)
        (a,) = torch.autograd.grad(diff.sum(), xq)
        parts.append(((a**2).sum(-1) + ((a * b.m).sum(-1)) ** 2).detach())
    return Estimate.of(torch.cat(parts))
