r"""Sampled prompts, the L-layer linear transformer, gradient descent run on each prompt, training.

**The linear transformer** (the paper's, as its authors' code writes it).  Z_0 ∈ R^{(d+1)×(n+1)} holds
the columns (x_i; y_i) and the query (x_q; 0).  Layer ℓ adds (1/n)·P_ℓ Z_ℓ 𝕄 Z_ℓᵀ Q_ℓ Z_ℓ with
P_ℓ = [[B_ℓ, 0], [0, 1]], Q_ℓ = [[A_ℓ, 0], [0, 0]] and 𝕄 = diag(1, …, 1, 0) (the query is not a key);
the prediction is ŷ = −[Z_L]_{d+1, n+1}.  With every B_ℓ = 0 the x rows stay put and the label row
holds the residuals y_i − w_ℓᵀx_i (and −w_ℓᵀx_q): layer ℓ is the step
w_{ℓ+1} = w_ℓ − A_ℓᵀ (1/n)Σ_i (y_i − w_ℓᵀx_i) x_i, so A_ℓ = −a_ℓ Σ⁻¹ is a step of size a_ℓ
preconditioned by Σ⁻¹ (``transformer_params_for_steps``).  B_ℓ ≠ 0 also moves the x rows (the paper's
GD++).
"""
from __future__ import annotations

import numpy as np

__all__ = ["sample_prompts", "gd_predict", "transformer_predict", "transformer_params_for_steps", "train_transformer",
           "paired_losses", "best_plain_steps", "context_trace_losses"]


def sample_prompts(Sigma: np.ndarray, n: int, M: int, rng: np.random.Generator, with_task: bool = False):
    """X (M, n+1, d) with the query last and y (M, n+1): x = Σ^{1/2}ξ, w = Σ^{−1/2}v (ξ, v ~ N(0, I)),
    y = wᵀx = vᵀξ; Σ^{1/2} the symmetric square root.  ``with_task``: the tasks w (M, d) as well."""
    Sigma = np.asarray(Sigma, float)
    vals, U = np.linalg.eigh(Sigma)
    root = U @ np.diag(np.sqrt(vals)) @ U.T
    xi = rng.standard_normal((M, n + 1, Sigma.shape[0]))
    v = rng.standard_normal((M, Sigma.shape[0]))
    X, y = xi @ root, np.einsum("mnd,md->mn", xi, v)
    return (X, y, v @ np.linalg.inv(root)) if with_task else (X, y)


def gd_predict(X: np.ndarray, y: np.ndarray, n: int, steps, precond: np.ndarray) -> np.ndarray:
    """ŷ = w_Lᵀx_q after the steps w ← w + a·P (1/n)Σ_i (y_i − wᵀx_i) x_i from w = 0, on each prompt."""
    M, _, d = X.shape
    w = np.zeros((M, d))
    ctx, lab = X[:, :n], y[:, :n]
    for a in steps:
        resid = lab - np.einsum("mnd,md->mn", ctx, w)
        w = w + a * np.einsum("mnd,mn->md", ctx, resid) / n @ np.asarray(precond).T
    return np.einsum("md,md->m", X[:, n], w)


def _layers_np(A, Bx, X, y, n):
    M, _, d = X.shape
    Z = np.concatenate([X, np.concatenate([y[:, :n], np.zeros((M, 1))], 1)[:, :, None]], 2)  # (M, n+1, d+1) columns
    for Al, Bl in zip(A, Bx):
        ctx = Z[:, :n]
        G = ctx.transpose(0, 2, 1) @ ctx                      # Z 𝕄 Zᵀ, (d+1)×(d+1)
        upd = (Z[:, :, :d] @ Al.T) @ G[:, :, :d].transpose(0, 2, 1)  # column j: G Q z_j
        Z = Z + np.concatenate([upd[:, :, :d] @ Bl.T, upd[:, :, d:]], 2) / n
    return -Z[:, n, d]


def transformer_predict(A, Bx, X: np.ndarray, y: np.ndarray, n: int) -> np.ndarray:
    """The L-layer linear transformer's ŷ (module docstring), in numpy; A, Bx lists of d × d blocks."""
    return _layers_np([np.asarray(a, float) for a in A], [np.asarray(b, float) for b in Bx], X, y, n)


def transformer_params_for_steps(steps, Sigma: np.ndarray) -> tuple[list, list]:
    """A_ℓ = −a_ℓ Σ⁻¹, B_ℓ = 0: the layers that compute the preconditioned steps a_ℓ."""
    inv = np.linalg.inv(np.asarray(Sigma, float))
    return [-float(a) * inv for a in steps], [np.zeros_like(inv) for _ in steps]


def paired_losses(predictors: dict, Sigma, n: int, M: int, rng: np.random.Generator, chunk: int = 20_000) -> dict:
    """Per-prompt squared errors of each predictor (name → f(X, y) → ŷ) on the same M fresh prompts."""
    out = {k: [] for k in predictors}
    done = 0
    while done < M:
        m = min(chunk, M - done)
        X, y = sample_prompts(Sigma, n, m, rng)
        for k, f in predictors.items():
            out[k].append((f(X, y) - y[:, n]) ** 2)
        done += m
    return {k: np.concatenate(v) for k, v in out.items()}


def best_plain_steps(Sigma, n: int, L: int, M: int, rng: np.random.Generator) -> list:
    """The best L steps of unpreconditioned GD, fitted on M sampled prompts: the loss is
    E[(x_qᵀ p(S_x) w)²] for p(s) = Π(1 − a s), S_x = (1/n)Σ x_i x_iᵀ, a quadratic in p's coefficients
    (sample moments G_jk = mean (x_qᵀS_x^j w)(x_qᵀS_x^k w)); its minimiser's roots give the steps."""
    X, _, w = sample_prompts(Sigma, n, M, rng, with_task=True)
    ctx = X[:, :n]
    Sx = np.einsum("mnd,mne->mde", ctx, ctx) / n
    vecs = [w]
    for _ in range(L):
        vecs.append(np.einsum("mde,me->md", Sx, vecs[-1]))
    feats = np.stack([np.einsum("md,md->m", X[:, n], v) for v in vecs], 1)  # x_qᵀ S_x^j w
    G = feats[:, 1:].T @ feats[:, 1:] / M
    g = feats[:, 1:].T @ feats[:, 0] / M
    c = np.linalg.solve(G, -g)
    roots = np.roots(np.concatenate([c[::-1], [1.0]]))
    return sorted(float(1 / r.real) for r in roots)


def context_trace_losses(steps, n: int, d: int, M: int, rng: np.random.Generator) -> np.ndarray:
    """tr p(S)² = Σ_j p(λ_j)² per sampled context, S = (1/n)Σ_i ξ_iξ_iᵀ with ξ ~ N(0, I_d), p(s) = Π(1 − a s):
    the loss of the steps on that context, with the task and the query integrated out exactly
    (E[(ξ_qᵀ p(S) v)² | S] = tr p(S)²).  Its mean over contexts is the loss, with a far smaller
    variance than the per-prompt squared error."""
    out, done = [], 0
    while done < M:
        m = min(50_000, M - done)
        xi = rng.standard_normal((m, n, d))
        lam = np.linalg.eigvalsh(np.einsum("mnd,mne->mde", xi, xi) / n)
        p = np.ones_like(lam)
        for a in steps:
            p = p * (1 - a * lam)
        out.append((p**2).sum(1))
        done += m
    return np.concatenate(out)


def train_transformer(Sigma, n: int, L: int, M: int, iters: int, seed: int, init_scale: float = 0.01,
                      restricted: bool = False, reference=None) -> dict:
    """Every A_ℓ and B_ℓ (only A_ℓ with ``restricted``: B_ℓ = 0) fitted by L-BFGS (strong-Wolfe line
    search, at most ``iters`` iterations) to the mean square error on M prompts drawn once from
    ``seed``; float64 on the CPU; every entry starts N(0, init_scale²).  A fixed sample makes the
    objective deterministic, so a quasi-Newton method converges where Adam on a deep linear stack
    needs tens of thousands of steps; the price is the sample's optimism, O(#parameters/M) of the
    loss.  Returns A, B (L, d, d), the final training loss, the number of loss evaluations and,
    given ``reference`` (a predictor f(X, y) → ŷ), the reference's loss on the same training prompts."""
    import torch

    Sigma = np.asarray(Sigma, float)
    d = Sigma.shape[0]
    X, y = sample_prompts(Sigma, n, M, np.random.default_rng(seed))
    Xt, yt = torch.from_numpy(X), torch.from_numpy(y)
    Z0 = torch.cat([Xt, torch.cat([yt[:, :n], torch.zeros(M, 1, dtype=torch.float64)], 1)[:, :, None]], 2)
    gen = torch.Generator().manual_seed(seed)
    A = (init_scale * torch.randn(L, d, d, generator=gen, dtype=torch.float64)).requires_grad_()
    Bx = init_scale * torch.randn(L, d, d, generator=gen, dtype=torch.float64)
    if restricted:
        Bx.zero_()
    Bx.requires_grad_(not restricted)

    def mse():
        Z = Z0
        for l in range(L):
            ctx = Z[:, :n]
            upd = (Z[:, :, :d] @ A[l].T) @ (ctx.transpose(1, 2) @ ctx)[:, :, :d].transpose(1, 2)
            Z = Z + torch.cat([upd[:, :, :d] @ Bx[l].T, upd[:, :, d:]], 2) / n
        return ((-Z[:, n, d] - yt[:, n]) ** 2).mean()

    params = [A] if restricted else [A, Bx]
    opt = torch.optim.LBFGS(params, lr=1, max_iter=iters, history_size=50, line_search_fn="strong_wolfe",
                            tolerance_grad=1e-12, tolerance_change=1e-15)

    def closure():
        opt.zero_grad()
        value = mse()
        value.backward()
        return value

    opt.step(closure)
    with torch.no_grad():
        final = float(mse())
    out = {"A": A.detach().numpy().copy(), "B": Bx.detach().numpy().copy(), "train_loss": final,
           "evaluations": int(opt.state[opt._params[0]]["func_evals"]), "M": M, "iters": iters, "seed": seed}
    if reference is not None:
        out["reference_train_loss"] = float(np.mean((reference(X, y) - y[:, n]) ** 2))
    return out
