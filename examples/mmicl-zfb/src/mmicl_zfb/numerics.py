r"""Numerical routes to the minimiser of the derived loss (``theory``), each independent of the
closed form Γ* = ((1 + 1/N)Λ + tr(Λ)/N · I)⁻¹ that they are compared with.

(a) ``minimise_numeric``: scipy.optimize (BFGS) over the d² entries of Γ on the compiled loss and
    gradient, from a random start.

(b) ``reduced_flow``: gradient flow of the LSA layer's parameters.  The full layer (``theory.
    lsa_block_structure``) is f(Z) = Z + W^{PV} Z (Zᵀ W^{KQ} Z)/N, ŷ = f(Z)_{d+1,N+1}, with blocks
    W = [[W11, w12], [w21ᵀ, w22]].  Derived there from the prediction and its gradient:
    W11^{PV}, w12^{PV}, w12^{KQ}, w22^{KQ} do not enter ŷ (no gradient ever); on the set
    {w21^{PV} = 0, w21^{KQ} = 0} the gradient of those two blocks vanishes (parity w → −w), and
    the paper's init W^{PV}_0 = σ[[0,0],[0,1]], W^{KQ}_0 = σ[[ΘΘᵀ,0],[0,0]] lies in it.  So the
    flow from that init moves exactly the two blocks

        u := w22^{PV} ∈ R   and   U := W11^{KQ} ∈ R^{d×d},

    on which ŷ = u (1/N) Σ_i y_i x_iᵀ U x_q = x_qᵀ Γ (1/N) Σ y_i x_i with Γ = u Uᵀ, and the loss
    is the derived L(u Uᵀ).  The flow variables are (u, U), d² + 1 numbers, started at
    (σ, σΘΘᵀ), ‖ΘΘᵀ‖_F = 1, and integrated with solve_ivp:

        du/dt = −∂L/∂u = −tr(∇_Γ L · U),   dU/dt = −∇_U L = −u (∇_Γ L)ᵀ.

    Along it u² − ‖U‖_F² is conserved (d/dt of both is −2u tr(∇_Γ L U)); at the paper's init it is
    σ² − σ²‖ΘΘᵀ‖_F² = 0, so at a limit with u Uᵀ = Γ*: u = ‖Γ*‖_F^{1/2}, U = Γ*ᵀ/‖Γ*‖_F^{1/2}.

(c) Monte Carlo (``sample_prompts``, ``mc_loss``, ``train_full_lsa``, ``evaluate_layer``): the
    full LSA layer, both (d+1)×(d+1) matrices trainable, trained with Adam on fresh prompts in
    torch (float64, CPU), and its loss estimated on fresh prompts with its standard error.  Why
    L* is also the full layer's minimum: ŷ splits into the part odd in the labels,
    x_qᵀ Γ'(θ) (1/N) Σ y_i x_i with Γ' = w21^{KQ} (w21^{PV})ᵀ + w22^{PV} (W11^{KQ})ᵀ, and a part
    even in them (w21^{PV}ᵀ (1/N) Z_x Z_xᵀ W11^{KQ} x_q + w22^{PV} (1/N)Σ y_i² w21^{KQ}ᵀ x_q);
    y_q is odd, so under w → −w the cross term vanishes and
    L_full(θ) = L(Γ'(θ)) + ½ E[even²] ≥ L(Γ'(θ)) ≥ L*, with equality at Γ' = Γ*, even part 0.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import minimize

import mmicl

from . import theory


# ---------------------------------------------------------------- cases
def random_spd(d: int, spread: float, rng: np.random.Generator) -> np.ndarray:
    """A random SPD matrix with eigenvalues in [1, spread] (1 and ``spread`` both taken when
    d ≥ 2, the rest log-uniform) and Haar-random eigenvectors."""
    if d == 1:
        return np.array([[float(spread)]])
    ev = np.exp(rng.uniform(0, np.log(spread), d))
    ev[0], ev[1] = 1.0, spread
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    q = q * np.sign(np.diag(r))
    lam = (q * ev) @ q.T
    return (lam + lam.T) / 2


def sigma_bound(Lam: np.ndarray, N: int) -> float:
    """The paper's condition on the init scale (Theorem 4.1, as we read it):
    σ < √(2 / (√d ‖B‖_op)), B = (1 + 1/N)Λ + tr(Λ)/N · I."""
    d = Lam.shape[0]
    B = np.linalg.inv(theory.gamma_star(Lam, N))
    return float(np.sqrt(2.0 / (np.sqrt(d) * np.linalg.norm(B, 2))))


def paper_init(d: int, sigma: float, rng: np.random.Generator):
    """(u0, U0, ΘΘᵀ): u0 = σ, U0 = σΘΘᵀ with Θ a standard Gaussian d × d matrix and ΘΘᵀ scaled to
    ‖ΘΘᵀ‖_F = 1."""
    theta = rng.standard_normal((d, d))
    P = theta @ theta.T
    P = P / np.linalg.norm(P)
    return float(sigma), sigma * P, P


# ---------------------------------------------------------------- (a) direct minimisation
def minimise_numeric(Lam: np.ndarray, N: int, rng: np.random.Generator) -> dict:
    """BFGS over vec Γ on the compiled loss/gradient from a random N(0, 1) start."""
    d = Lam.shape[0]
    x0 = rng.standard_normal(d * d)
    res = minimize(lambda v: theory.loss(v.reshape(d, d), Lam, N), x0, method="BFGS",
                   jac=lambda v: theory.grad(v.reshape(d, d), Lam, N).ravel(),
                   options={"gtol": 1e-12, "maxiter": 10_000})
    G = res.x.reshape(d, d)
    return {"gamma": G, "loss": float(res.fun), "grad_norm": float(np.linalg.norm(theory.grad(G, Lam, N))),
            "start": x0.reshape(d, d), "iterations": int(res.nit)}


# ---------------------------------------------------------------- (b) gradient flow
def flow_rhs(u: float, U: np.ndarray, Lam: np.ndarray, N: int):
    """(du/dt, dU/dt) of the gradient flow on (u, U) (module docstring)."""
    g = theory.grad(u * U.T, Lam, N)
    return -float(np.sum(g * U.T)), -u * g.T


@dataclass
class Flow:
    t_end: float
    u: float
    U: np.ndarray
    gamma: np.ndarray
    loss: float
    grad_flow: float  # ‖(du/dt, dU/dt)‖ at the end
    grad_gamma: float  # ‖∇_Γ L‖_F at the end
    balance_drift: float  # max over the trajectory of |u² − ‖U‖_F² − (u0² − ‖U0‖_F²)|
    stopped: bool  # the stopping event fired before t_max
    nfev: int
    times: np.ndarray = field(repr=False, default=None)
    losses: np.ndarray = field(repr=False, default=None)


def reduced_flow(Lam: np.ndarray, N: int, u0: float, U0: np.ndarray, t_max: float = 1e5,
                 g_stop: float = 1e-10, rtol: float = 1e-10, atol: float = 1e-13) -> Flow:
    """Integrate the flow on (u, U) from (u0, U0) with solve_ivp (LSODA), stopping where
    ‖(du/dt, dU/dt)‖ falls below ``g_stop`` (or at t_max)."""
    d = Lam.shape[0]

    def rhs(t, y):
        du, dU = flow_rhs(y[0], y[1:].reshape(d, d), Lam, N)
        return np.concatenate([[du], dU.ravel()])

    def converged(t, y):
        return np.linalg.norm(rhs(t, y)) - g_stop

    converged.terminal = True
    y0 = np.concatenate([[u0], np.asarray(U0, float).ravel()])
    sol = solve_ivp(rhs, (0.0, t_max), y0, method="LSODA", rtol=rtol, atol=atol, events=converged,
                    dense_output=False)
    yT = sol.y[:, -1]
    u, U = float(yT[0]), yT[1:].reshape(d, d)
    G = u * U.T
    bal0 = u0**2 - np.sum(np.asarray(U0) ** 2)
    bal = sol.y[0] ** 2 - np.sum(sol.y[1:] ** 2, axis=0)
    losses = np.array([theory.loss(sol.y[0, k] * sol.y[1:, k].reshape(d, d).T, Lam, N) for k in range(sol.y.shape[1])])
    return Flow(t_end=float(sol.t[-1]), u=u, U=U, gamma=G, loss=theory.loss(G, Lam, N),
                grad_flow=float(np.linalg.norm(rhs(0, yT))), grad_gamma=float(np.linalg.norm(theory.grad(G, Lam, N))),
                balance_drift=float(np.max(np.abs(bal - bal0))), stopped=bool(sol.status == 1), nfev=int(sol.nfev),
                times=sol.t, losses=losses)


def init_gradient(Lam: np.ndarray, N: int, u0: float, U0: np.ndarray) -> dict:
    """‖∂L/∂u‖ and ‖∇_U L‖_F at the init: the blocks that move (nonzero) from it."""
    du, dU = flow_rhs(u0, U0, Lam, N)
    return {"w22_PV": abs(du), "W11_KQ": float(np.linalg.norm(dU))}


# ---------------------------------------------------------------- (c) Monte Carlo
def sample_prompts(Lam: np.ndarray, N: int, M: int, rng: np.random.Generator):
    """M prompts: X (M, N + 1, d) with the query last, w (M, d), Y = X w (M, N + 1) (Y[:, N] = y_q)."""
    d = Lam.shape[0]
    C = np.linalg.cholesky(Lam)
    X = rng.standard_normal((M, N + 1, d)) @ C.T
    w = rng.standard_normal((M, d))
    Y = np.einsum("mnd,md->mn", X, w)
    return X, w, Y


def half_sq_errors_gamma(G: np.ndarray, X, Y, N: int) -> np.ndarray:
    """½(x_qᵀ Γ (1/N) Σ_i y_i x_i − y_q)² per prompt."""
    h = np.einsum("mnd,mn->md", X[:, :N], Y[:, :N]) / N
    yhat = np.einsum("md,de,me->m", X[:, N], G, h)
    return 0.5 * (yhat - Y[:, N]) ** 2


def mc_loss(G: np.ndarray, Lam: np.ndarray, N: int, M: int, rng: np.random.Generator, chunk: int = 50_000):
    """(mean, standard error) of ½(ŷ(Γ) − y_q)² over M fresh prompts."""
    parts = []
    for start in range(0, M, chunk):
        X, _, Y = sample_prompts(Lam, N, min(chunk, M - start), rng)
        parts.append(half_sq_errors_gamma(G, X, Y, N))
    e = np.concatenate(parts)
    return float(e.mean()), float(e.std(ddof=1) / np.sqrt(M))


def lsa_predict(PV, KQ, X, Y, N: int):
    """The full layer's prediction f(Z)_{d+1,N+1} for torch tensors X (B, N+1, d), Y (B, N+1)
    (the query label Y[:, N] is not used: Z has 0 there)."""
    import torch

    B, _, d = X.shape
    lab = torch.cat([Y[:, :N], torch.zeros(B, 1, dtype=X.dtype)], dim=1)
    Z = torch.cat([X.transpose(1, 2), lab.unsqueeze(1)], dim=1)  # (B, d+1, N+1)
    a = torch.einsum("k,bkn->bn", PV[d], Z)  # row d+1 of W^{PV} Z
    c = torch.einsum("ij,bj->bi", KQ, Z[:, :, N])  # W^{KQ} z_q
    b = torch.einsum("bkn,bk->bn", Z, c)  # Zᵀ W^{KQ} z_q
    return (a * b).sum(1) / N


def full_init(d: int, sigma: float, P: np.ndarray):
    """The paper's init of the full matrices: W^{PV} = σ[[0,0],[0,1]], W^{KQ} = σ[[P,0],[0,0]]."""
    PV = np.zeros((d + 1, d + 1))
    PV[d, d] = sigma
    KQ = np.zeros((d + 1, d + 1))
    KQ[:d, :d] = sigma * P
    return PV, KQ


def train_full_lsa(Lam: np.ndarray, N: int, PV0: np.ndarray, KQ0: np.ndarray, steps: int, batch: int,
                   lr: float, seed: int) -> dict:
    """Adam on ½ mean (ŷ − y_q)² over fresh prompts each step (torch, float64), every entry of
    both matrices trainable; the learning rate decays geometrically to lr/100 over the run.

    Runs on one torch thread (restored after): these small batches ran 28× slower on two threads
    of a shared 2-core machine (4.9 s against 0.17 s for 300 steps)."""
    with mmicl.torch_threads(1):
        return _train(Lam, N, PV0, KQ0, steps, batch, lr, seed)


def _train(Lam, N, PV0, KQ0, steps, batch, lr, seed) -> dict:
    import torch

    gen = np.random.default_rng(seed)
    torch.manual_seed(seed)
    PV = torch.tensor(PV0, dtype=torch.float64, requires_grad=True)
    KQ = torch.tensor(KQ0, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([PV, KQ], lr=lr)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.01 ** (1.0 / max(steps, 1)))
    for _ in range(steps):
        X, _, Y = sample_prompts(Lam, N, batch, gen)
        X, Y = torch.from_numpy(X), torch.from_numpy(Y)
        loss = 0.5 * ((lsa_predict(PV, KQ, X, Y, N) - Y[:, N]) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    return {"PV": PV.detach().numpy().copy(), "KQ": KQ.detach().numpy().copy()}


def odd_part(PV: np.ndarray, KQ: np.ndarray) -> np.ndarray:
    """Γ'(θ) = w21^{KQ} (w21^{PV})ᵀ + w22^{PV} (W11^{KQ})ᵀ: the part of the full layer's prediction
    linear in the labels, ŷ_odd = x_qᵀ Γ' (1/N) Σ y_i x_i (module docstring)."""
    d = PV.shape[0] - 1
    return np.outer(KQ[d, :d], PV[d, :d]) + PV[d, d] * KQ[:d, :d].T


def evaluate_layer(PV: np.ndarray, KQ: np.ndarray, Lam: np.ndarray, N: int, M: int, rng: np.random.Generator,
                   chunk: int = 50_000) -> dict:
    """On M fresh prompts: the layer's loss ½(ŷ − y_q)² (mean, SE) and the paired excess over Γ*
    on the same prompts, ℓ(θ) − ℓ(Γ*) (mean, SE)."""
    import torch

    Gs = theory.gamma_star(Lam, N)
    tPV, tKQ = torch.from_numpy(PV), torch.from_numpy(KQ)
    losses, excess = [], []
    for start in range(0, M, chunk):
        X, _, Y = sample_prompts(Lam, N, min(chunk, M - start), rng)
        with torch.no_grad(), mmicl.torch_threads(1):
            yhat = lsa_predict(tPV, tKQ, torch.from_numpy(X), torch.from_numpy(Y), N).numpy()
        e = 0.5 * (yhat - Y[:, N]) ** 2
        losses.append(e)
        excess.append(e - half_sq_errors_gamma(Gs, X, Y, N))
    e, x = np.concatenate(losses), np.concatenate(excess)
    return {"loss": float(e.mean()), "se": float(e.std(ddof=1) / np.sqrt(M)),
            "excess": float(x.mean()), "excess_se": float(x.std(ddof=1) / np.sqrt(M)), "M": M}
