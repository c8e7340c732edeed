"""Experiments: trained models against the large-context theory of ``numerics.lca``.

Each function trains models (``numerics.training``), estimates what they learnt
(``numerics.montecarlo``, ``numerics.estimate``) and puts it next to the theory; the claims in
``mmicl.proofs.claims`` decide on the numbers these return.

Where the error of a trained parameter comes from
-------------------------------------------------
A trained α differs from the theory's α_T for three reasons, each measured separately:

1. **optimisation error**: training stopped near, not at, the minimiser of the finite-n loss;
2. **finite-n bias**: the finite-n loss has its minimiser α_n ≠ α_∞ = α_T (C and h are noisy);
3. **Monte Carlo error** of whatever estimates α_n and α_∞ (``numerics.montecarlo.stationary_point``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from mmicl.numerics.laws.language import takes_law
from mmicl.numerics.models import ReducedLCA
from mmicl.numerics.montecarlo import StationaryPoint, conditional_excess, excess_rounding_floor, stationary_point
from mmicl.numerics.laws.task import TaskLaw
from mmicl.numerics.training import estimate_risk, train
from mmicl.numerics.sampling import sample_prompts
from mmicl.numerics.models import LCA

__all__ = ["TrainedCheck", "trained_reduced", "sample_mean_baselines", "noskip_study", "depth_study",
           "log_log_slope", "finite_n_study", "gd_versus_flow", "full_matrix_study"]


# ---------------------------------------------------------------------------------------------
# One trained reduced model against the theory
# ---------------------------------------------------------------------------------------------


@dataclass
class TrainedCheck:
    """A reduced model trained at context length n, and the pieces of its error (see the module
    docstring).  ``stated_error`` bounds |trained − α_T| by |optimisation error| + |finite-n bias|
    + 3·se(α_∞); the theory is consistent with the run when α_T lies within it."""

    mode: str
    T: int
    n: int | None
    trained: dict[str, float]
    at_n: StationaryPoint
    at_infinity: StationaryPoint
    risk: dict
    diverged: bool
    steps: int
    seconds: float

    @property
    def optimisation_error(self) -> float:
        return self.trained["alpha"] - self.at_n.theta[0]

    @property
    def finite_n_bias(self) -> float:
        return self.at_n.theta[0] - self.at_infinity.theta[0]

    @property
    def stated_error(self) -> float:
        return abs(self.optimisation_error) + abs(self.finite_n_bias) + 3 * self.at_infinity.se[0] + 3 * self.at_n.se[0]

    def to_json(self) -> dict:
        return {"mode": self.mode, "T": self.T, "n": self.n, "trained": self.trained,
                "alpha_n": self.at_n.theta, "alpha_n_se": self.at_n.se,
                "alpha_inf": self.at_infinity.theta, "alpha_inf_se": self.at_infinity.se,
                "optimisation_error": self.optimisation_error, "finite_n_bias": self.finite_n_bias,
                "stated_error": self.stated_error, "risk": self.risk, "diverged": self.diverged,
                "steps": self.steps, "seconds": round(self.seconds, 2),
                "saa_converged_for_the_sampled_loss": {"n": bool(self.at_n.converged),
                                                       "infinity": bool(self.at_infinity.converged)}}


@takes_law
def trained_reduced(law: TaskLaw, T: int, *, mode: str = "one", n: int | None, steps: int, batch: int = 1024,
                    lr: float = 0.01, alpha0: float = 0.1, beta0: float | None = None, seed: int = 0,
                    saa_samples: int = 100_000, risk_samples: int = 100_000, device="cpu") -> TrainedCheck:
    """Train the reduced LCA by Adam (cosine-annealed) on online prompts, then locate the SAA
    estimates of the minimisers at n and at n = ∞ from the trained point (Newton on the sampled
    loss: stationary for the sampled loss, recorded as ``saa_converged_for_the_sampled_loss``)."""
    model = ReducedLCA(T, mode, alpha0, beta0)
    res = train(model, law, n=n, steps=steps, batch=batch, lr=lr, schedule="cosine", seed=seed, device=device)
    at_n = stationary_point(model, law, n=n, samples=saa_samples, seed=seed + 1, device=device)
    at_inf = stationary_point(model, law, n=None, samples=saa_samples, seed=seed + 1, device=device)
    risk = estimate_risk(model, law, n=n, samples=risk_samples, seed=seed + 2, device=device).to_json()
    return TrainedCheck(mode=mode, T=T, n=n, trained=model.params(), at_n=at_n, at_infinity=at_inf, risk=risk,
                        diverged=res.diverged, steps=res.steps_done, seconds=res.seconds)


# ---------------------------------------------------------------------------------------------
# appF: the no-skip ablation
# ---------------------------------------------------------------------------------------------


@takes_law
@torch.no_grad()
def sample_mean_baselines(law: TaskLaw, *, n: int, samples: int, seed: int, device="cpu") -> dict:
    """Risks of two "sample-mean" predictors on fresh prompts (tokens drawn), with standard errors:

    ``label_mean``: ŷ = (1/n) Σ y_i (exact risk E[ζ²](1 + 1/n): E[y] = 0 and ȳ ⊥ y_q given ζ);
    ``zero``:       ŷ = 0 (risk E[ζ²]), the large-context limit of ``label_mean``.
    """

    gen = torch.Generator(device=device).manual_seed(seed)
    lm, zero = [], []
    for i in range(0, samples, 8192):
        p = sample_prompts(law, min(8192, samples - i), n, gen, device, torch.float64)
        lm.append((p.context_y.mean(1) - p.query_y) ** 2)
        zero.append(p.query_y**2)
    lm, zero = torch.cat(lm), torch.cat(zero)
    k = lm.numel()
    return {"label_mean": (float(lm.mean()), float(lm.std() / k**0.5)),
            "zero": (float(zero.mean()), float(zero.std() / k**0.5)), "samples": k}


@takes_law
def noskip_study(law: TaskLaw, Ts: list[int], *, n: int, steps: int, batch: int = 512, samples: int = 50_000,
                 seed: int = 0, device="cpu") -> list[dict]:
    """Train the general tied no-skip LCA (W^S ≡ 0, F⁰ = 0) at each depth and measure its risk on
    the same tokens as the sample-mean predictor (paired, so the difference has its own se)."""

    rows = []
    for T in Ts:
        g = torch.Generator().manual_seed(seed + T)
        model = LCA(law.d, T, tied=True, skip=False, init_scale=0.1, generator=g)
        res = train(model, law, n=n, steps=steps, batch=batch, lr=0.01, seed=seed + T, device=device)
        gen = torch.Generator(device=device).manual_seed(seed + 1000 + T)
        diffs, risks = [], []
        with torch.no_grad():
            model.to(torch.float64)
            for i in range(0, samples, 8192):
                p = sample_prompts(law, min(8192, samples - i), n, gen, device, torch.float64)
                r_model = (model(p) - p.query_y) ** 2
                r_mean = (p.context_y.mean(1) - p.query_y) ** 2
                risks.append(r_model)
                diffs.append(r_model - r_mean)
        risks, diffs = torch.cat(risks), torch.cat(diffs)
        k = risks.numel()
        rows.append({"T": T, "risk": float(risks.mean()), "risk_se": float(risks.std() / k**0.5),
                     "minus_label_mean": float(diffs.mean()), "minus_label_mean_se": float(diffs.std() / k**0.5),
                     "max_abs_prediction_weight": max(float(p.detach().abs().max()) for p in model.parameters()),
                     "diverged": res.diverged})
    return rows


# ---------------------------------------------------------------------------------------------
# depth: excess risk of the trained LCA along T
# ---------------------------------------------------------------------------------------------


@takes_law
def depth_study(law: TaskLaw, Ts: list[int], *, n: int | None, steps: int, batch: int = 1024,
                samples: int = 100_000, seed: int = 0, device="cpu") -> list[dict]:
    """Train the one-parameter LCA at each T; its measured excess risk against the theory's
    ``excess_risk(law, T, α_T)`` and the theory's excess at the trained α.

    The excess is estimated directly from ``ŷ − ŷ_Bayes`` over fresh prompts in float64, with the
    query integrated out (``conditional_excess``), not as a difference of two risks near E[y²],
    which cannot resolve an excess below about 1e-16·E[y²].  Float64 still has a floor
    (``excess_rounding_floor``): an excess below it is rounding, not signal.  Each row reports it
    as ``resolution``."""
    from mmicl.numerics.lca import alpha_T, excess_risk

    hi = law.s_bounds()[1]
    rows = []
    for T in Ts:
        model = ReducedLCA(T, "one", 1.0 / (1.0 + hi))
        res = train(model, law, n=n, steps=steps, batch=batch, lr=0.01, schedule="cosine", seed=seed + T,
                    device=device)
        excess = conditional_excess(model, law, n=n, samples=samples, seed=seed + 100 + T, device=device)
        a = float(model.alpha.detach())
        a_T = alpha_T(law, T)
        rows.append({"T": T, "alpha": a, "alpha_T": a_T, "excess": excess.mean,
                     "excess_se": excess.se, "theory_excess_at_alpha_T": excess_risk(law, T, a_T),
                     "theory_excess_at_trained_alpha": excess_risk(law, T, a),
                     "resolution": excess_rounding_floor(law, T), "diverged": res.diverged})
    return rows


def log_log_slope(x: list[float], y: list[float]) -> float:
    """Least-squares slope of log y against log x (the measured rate y ∝ x^slope)."""
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


# ---------------------------------------------------------------------------------------------
# finite-n bias and GD against the flow
# ---------------------------------------------------------------------------------------------


@takes_law
def finite_n_study(law: TaskLaw, T: int, ns: list[int], *, samples: int = 200_000, seed: int = 0,
                   device="cpu") -> list[dict]:
    """The SAA estimate α_n of the finite-n loss's minimiser (one-parameter model; Newton's end point,
    stationary for the sampled loss) against α_T, for each n, with the same tasks and queries at every
    n (common random numbers)."""
    from mmicl.numerics.lca import alpha_T

    a_T = alpha_T(law, T)
    start = ReducedLCA(T, "one", a_T)
    inf = stationary_point(start, law, n=None, samples=samples, seed=seed, device=device)
    rows = [{"n": None, "alpha_n": inf.theta[0], "se": inf.se[0], "alpha_T": a_T, "bias": inf.theta[0] - a_T}]
    for n in ns:
        sp = stationary_point(start, law, n=n, samples=samples, seed=seed, device=device)
        rows.append({"n": n, "alpha_n": sp.theta[0], "se": sp.se[0], "alpha_T": a_T, "bias": sp.theta[0] - a_T,
                     "n_times_bias": n * (sp.theta[0] - a_T)})
    return rows


@takes_law
def gd_versus_flow(law: TaskLaw, T: int, *, alpha0: float, lr: float, steps: int, batch: int = 4096,
                   seed: int = 0, device="cpu") -> dict:
    """Plain SGD (online, n = ∞, Rao-Blackwell-free: the labels are the targets) on the one-parameter
    model, against ``gradient_flow_one`` at times ``t = k·lr``."""
    from mmicl.numerics.flows import gradient_flow_one

    model = ReducedLCA(T, "one", alpha0)
    res = train(model, law, n=None, steps=steps, batch=batch, lr=lr, optimizer="sgd", seed=seed,
                device=device, record_every=1, dtype=torch.float64)
    k = np.asarray(res.history["step"], float)
    a_gd = np.asarray(res.history["alpha"], float)
    flow = gradient_flow_one(law, T, alpha0, t_eval=k * lr)
    a_flow = np.asarray(flow.path, float).reshape(len(k), -1)[:, 0]
    return {"t": (k * lr).tolist(), "alpha_gd": a_gd.tolist(), "alpha_flow": a_flow.tolist(),
            "max_abs_gap": float(np.max(np.abs(a_gd - a_flow))), "diverged": res.diverged}


# ---------------------------------------------------------------------------------------------
# the full-matrix LCA: does training find the tied solution?
# ---------------------------------------------------------------------------------------------


@takes_law
def full_matrix_study(law: TaskLaw, T: int, *, n: int | None = None, steps: int = 2000, lr: float = 0.003,
                      init_scale: float = 0.1, identity_init: bool = False, seed: int = 0, device="cpu",
                      batch: int = 1024, risk_samples: int = 100_000, record_every: int | None = None) -> dict:
    """Train the tied general LCA (W^S, W^V, W^K, W^Q, W^R all trainable) from a small random start.

    The prediction is invariant under ``F → A F`` (W^S → A W^S, W^V → A W^V, W^R → W^R A⁻¹,
    (W^K)ᵀW^Q → (W^K)ᵀW^Q A⁻¹) and under ``W^S → c W^S, W^R → W^R / c`` together with ``W^V → c' W^V,
    (W^K)ᵀW^Q → (W^K)ᵀW^Q / c'``; so compare the invariants ``RS = W^R W^S`` (tied: αI) and
    ``GV = (W^K)ᵀ W^Q W^V`` (tied: βI = −αI) and report their distance from multiples of I, at the end
    and (``"invariants"``) at every recorded step of training."""
    from mmicl.numerics.lca import alpha_T, excess_risk

    g = torch.Generator().manual_seed(seed)
    model = LCA(law.d, T, tied=True, init_scale=init_scale, identity_init=identity_init, generator=g)
    eye = torch.eye(law.d)

    def invariants():
        with torch.no_grad():
            return (model.w_r @ model.w_s).cpu().float(), (model.w_k.T @ model.w_q @ model.w_v).cpu().float()

    def split(mat):
        c = float(torch.diagonal(mat).mean())
        return c, float((mat - c * eye).norm() / eye.norm())

    path: list[dict] = []

    def on_record(step, _summary):
        (a, oa), (b, ob) = (split(m) for m in invariants())
        path.append({"step": step, "RS_scalar": a, "RS_rel_non_scalar": oa, "GV_scalar": b, "GV_rel_non_scalar": ob})

    res = train(model, law, n=n, steps=steps, batch=batch, lr=lr, schedule="cosine", seed=seed, device=device,
                record_every=record_every, on_record=on_record)
    rs, gv = invariants()
    (a_rs, off_rs), (b_gv, off_gv) = split(rs), split(gv)
    est = estimate_risk(model, law, n=n, samples=risk_samples, seed=seed + 1, device=device)
    a_T = alpha_T(law, T)
    return {"T": T, "n": n, "identity_init": identity_init, "init_scale": init_scale, "steps": res.steps_done,
            "diverged": res.diverged, "RS": rs.tolist(), "GV": gv.tolist(), "RS_scalar": a_rs,
            "RS_rel_non_scalar": off_rs, "GV_scalar": b_gv, "GV_rel_non_scalar": off_gv, "alpha_T": a_T,
            "excess": est.excess, "excess_se": est.excess_se, "theory_excess_lca1": excess_risk(law, T, a_T),
            "history": res.history, "invariants": path}
