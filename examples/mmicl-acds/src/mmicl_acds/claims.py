r"""The claims of Ahn, Cheng, Daneshmand & Sra (arXiv:2306.00297) checked by this plugin, namespace ``acds``.

- ``acds.onelayer``: one layer's global optimum is one step of gradient descent preconditioned by
  Γ* = n/(n + d + 1)·Σ⁻¹ (derived with SymPy over all Γ; the covariance and the finite context both
  enter the preconditioner).
- ``acds.critical``: for L = 2 … 4 layers with B_ℓ = 0, the point A_ℓ = −a_ℓ Σ⁻¹ with the best step
  sizes a_ℓ (L steps of Σ⁻¹-preconditioned GD) is a critical point of the loss over every A_ℓ.
- ``acds.layers``: the paper's comparison for L = 1 … 4: the exact loss of the best L steps of
  preconditioned GD, the layers that compute them, and a trained L-layer transformer that reaches
  that loss or goes below it (its B_ℓ blocks also transform the covariates).

Sizes: ``config.smoke`` d = 2, n = 8, L ≤ 2; ``config.quick`` the paper's setting d = 5, n = 20,
Σ = U diag(1, 1, 1/4, 1/16, 1) Uᵀ with a random rotation U, L = 1 … 4; full adds more prompts and
longer fits.  Every random choice comes from ``config.seed``.  Only public names of mmicl are used.
"""
from __future__ import annotations

import numpy as np
import sympy as sp
from scipy.optimize import minimize

import mmicl
from mmicl import hypotheses as hyp

if __package__:  # imported as mmicl_acds.claims (the entry point, or --plugin mmicl_acds.claims)
    from . import numerics as nm
    from . import theory
    from .case import CASE
else:  # loaded as a file (--plugin path/to/claims.py)
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from mmicl_acds import numerics as nm
    from mmicl_acds import theory
    from mmicl_acds.case import CASE

EPS = float(np.finfo(float).eps)
Z_HEAVY = 4.0
"""The z threshold of the Monte Carlo checks.  Their per-prompt statistics are polynomials of
degree 4 to 18 in Gaussian variables, whose sample means are slow to become normal: the usual 3-SE
rule would raise false alarms more often than its nominal 0.3 %; 4 SE is the plugin's rule."""


def cases(config) -> list[tuple[str, np.ndarray, int, int]]:
    """(label, Σ, n, L): the case given (``--case``), else the run size's own."""
    if config.case_value is not None:
        sigma, n, L = config.case_value
        return [(config.case, sigma, n, L)]
    if config.smoke:
        return [("Sigma=diag(1,0.25); n=8; L=2", np.diag([1.0, 0.25]), 8, 2)]
    q, _ = np.linalg.qr(config.rng(0).standard_normal((5, 5)))
    sigma = q @ np.diag([1.0, 1.0, 0.25, 0.0625, 1.0]) @ q.T
    return [("the paper's: d=5, n=20, Σ = U diag(1,1,1/4,1/16,1) Uᵀ, U a random rotation; L=4", (sigma + sigma.T) / 2,
             20, 4)]


def _sizes(config) -> dict:
    if config.smoke:
        return {"M": 20_000, "M_pgd": 100_000, "M_fit": 2_000, "iters": 100, "full_L": 2}
    if config.quick:
        return {"M": 200_000, "M_pgd": 1_000_000, "M_fit": 10_000, "iters": 200, "full_L": 2}
    return {"M": 1_000_000, "M_pgd": 4_000_000, "M_fit": 40_000, "iters": 500, "full_L": 4}


def _cases_and_hypotheses(config) -> tuple[list, list]:
    todo = cases(config)
    hyps = []
    for label, sigma, n, L in todo:
        hyps += [mmicl.Hypothesis(f"{h.text} ({label})", h.met, h.detail)
                 for h in (hyp.positive_definite(sigma, "Σ"), hyp.integer_in(n, 1, None, "n"), hyp.integer_in(L, 1, 4, "L"))]
    return todo, hyps


def _mat(a) -> list:
    return np.asarray(a, float).round(12).tolist()


def bounded_excess(ex, slack: float, k: float = Z_HEAVY):
    """Three-way rule for "the loss is at most the reference's plus ``slack``" from a paired excess
    estimate: True when mean + k·SE ≤ slack, False when mean − k·SE > slack, else None (undecided: a
    heavy-tailed estimate whose SE is too large to decide passes nothing)."""
    if ex.mean - k * ex.se > slack:
        return False
    return True if ex.mean + k * ex.se <= slack else None


H_STEP = 1e-3
"""The relative step of the central differences along a direction D (as a fraction of D)."""


def _stationary_checks(name: str, predict, theta, direction, Sigma, n, M, rng, role="decisive"):
    """Paired Monte Carlo of the directional derivative at θ along D: per prompt
    g = [ℓ(θ + hD) − ℓ(θ − hD)]/2h and the curvature c = [ℓ(θ + hD) − 2ℓ(θ) + ℓ(θ − hD)]/h², h = H_STEP
    (ℓ is a polynomial in θ: the difference's bias is h²/6 times its third derivative, 10⁻⁷ of it,
    and rounding ε/h of ℓ).  At a critical point E g = 0; were the critical point θ + εD, E g would
    be about −ε·E c: detect is ε = 0.1."""
    at = {"plus": H_STEP, "minus": -H_STEP, "at": 0.0}
    sq = nm.paired_losses({k: (lambda s: (lambda X, y: predict(theta, direction, s, X, y)))(s) for k, s in at.items()},
                          Sigma, n, M, rng)
    slope = mmicl.Estimate.of((sq["plus"] - sq["minus"]) / (2 * H_STEP))
    curv = mmicl.Estimate.of((sq["plus"] - 2 * sq["at"] + sq["minus"]) / H_STEP**2)
    detect = 0.1 * max(curv.mean, 4 * curv.se, EPS)
    return mmicl.z_check(name, slope, 0.0, detect=detect, k=Z_HEAVY, role=role,
                         detail=f"M = {M} prompts drawn from the model; the directional derivative by central differences "
                                f"(h = {H_STEP:g}·D); curvature along D {curv.mean:.4g} ± {curv.se:.2g}; detect = 0.1·curvature "
                                f"(a critical point at θ + 0.1·D); k = {Z_HEAVY:g}"), curv


def _stack(Sigma, n):
    """ŷ of the stack at A_ℓ = θ_ℓ + s·D_ℓ, B_ℓ = 0 (θ, D lists of d × d blocks)."""
    d = np.asarray(Sigma).shape[0]

    def predict(theta, D, s, X, y):
        return nm.transformer_predict([a + s * b for a, b in zip(theta, D)], [np.zeros((d, d))] * len(theta), X, y, n)
    return predict


# ---------------------------------------------------------------- acds.onelayer
@mmicl.claim("acds.onelayer", title="One layer's optimum is one step of preconditioned gradient descent", case=CASE,
             statement="For x ~ N(0, Σ), w ~ N(0, Σ⁻¹), y = wᵀx, one layer of the linear transformer predicts "
                       "ŷ = x_qᵀΓh, h = (1/n)Σy_i x_i (one step of GD from 0 preconditioned by Γ), and the loss "
                       "E[(ŷ − y_q)²] is minimised by Γ* = n/(n + d + 1)·Σ⁻¹: the preconditioner adapts to the "
                       "covariance and to the finite context.")
def evaluate_onelayer(config):
    todo, hyps = _cases_and_hypotheses(config)
    checks, summary, sizes = [], {}, _sizes(config)
    if not all(h.met for h in hyps):
        return hyps, checks, summary
    G2 = theory.one_layer_optimum(2)
    want = theory.one_layer_closed_form(theory.one_layer_moments(2)["Sigma"])
    checks.append(mmicl.Check(
        "Σ = diag(s₀, s₁) and n symbolic: solving ΣΓM = B over all 2 × 2 matrices Γ gives n/(n + 3)·Σ⁻¹",
        "symbolic", (G2 - want).applyfunc(sp.simplify) == sp.zeros(2, 2), {"gamma_solved": str(G2.tolist())},
        tolerance="exact: simplify of the difference is the zero matrix",
        detail="M and B integrated coordinate by coordinate (Isserlis); a rotated Σ = U D Uᵀ gives U Γ*(D) Uᵀ"))
    m = theory.trace_moments(2)
    step = sp.simplify(m[1] / m[2])
    checks.append(mmicl.Check(
        "a second route, d and n symbolic: the best single step in Σ⁻¹'s direction, m₁/m₂ from the Wishart trace "
        "moments (Wick's theorem), is n/(n + d + 1)", "symbolic",
        sp.simplify(step - theory.n_sym / (theory.n_sym + theory.d_sym + 1)) == 0, {"step": str(step)},
        tolerance="exact"))
    for k, (label, sigma, n, _) in enumerate(todo):
        d = sigma.shape[0]
        Gs = n / (n + d + 1) * np.linalg.inv(sigma)
        L0 = theory.one_layer_loss(np.zeros((d, d)), sigma, n)
        Ls = theory.one_layer_loss(Gs, sigma, n)
        opt = minimize(lambda v: theory.one_layer_loss(v.reshape(d, d), sigma, n), config.rng(1, k).standard_normal(d * d),
                       method="BFGS", options={"gtol": 1e-12 * max(1.0, L0), "maxiter": 10_000})
        err = float(np.linalg.norm(opt.x.reshape(d, d) - Gs))
        checks.append(mmicl.Check(
            f"BFGS from a random start on the derived loss finds Γ* ({label})", "scipy.optimize",
            err <= 1e-5 * float(np.linalg.norm(Gs)),
            {"gamma_star": _mat(Gs), "frobenius_error": err, "L_star": Ls, "L_zero": L0, "cond_sigma": float(np.linalg.cond(sigma))},
            tolerance="‖Γ_BFGS − Γ*‖_F ≤ 1e-5·‖Γ*‖_F: BFGS's gradient tolerance 1e-12·L(0) on a strongly convex quadratic"))
        delta = config.rng(2, k).standard_normal((d, d))
        delta *= 0.5 * np.linalg.norm(Gs) / np.linalg.norm(delta)
        for what, D in (("along Γ* itself", Gs), ("along a random direction Δ, ‖Δ‖ = ‖Γ*‖/2", delta)):
            # one layer with A = −Γᵀ: the direction D of Γ is −Dᵀ of A
            check, _ = _stationary_checks(f"Monte Carlo: the loss is stationary at Γ* {what}: its directional derivative is 0 ({label})",
                                          _stack(sigma, n), [-Gs.T], [-D.T], sigma, n, sizes["M"], config.rng(3, k))
            checks.append(check)
        fit = nm.train_transformer(sigma, n, 1, sizes["M_fit"], sizes["iters"], seed=int(config.rng(5, k).integers(2**31)))
        G_fit = -fit["A"][0].T
        sq = nm.paired_losses({"fit": lambda X, y: nm.transformer_predict(fit["A"], fit["B"], X, y, n),
                               "star": lambda X, y: nm.gd_predict(X, y, n, [1.0], Gs)}, sigma, n, sizes["M"], config.rng(6, k))
        checks.append(mmicl.z_check(f"Monte Carlo: the loss at Γ* is the derived L* ({label})", mmicl.Estimate.of(sq["star"]),
                                    Ls, detect=0.05 * Ls, k=Z_HEAVY, role="corroborating"))
        ex = mmicl.Estimate.of(sq["fit"] - sq["star"])
        slack = 4 * d * d / sizes["M_fit"] * Ls
        checks.append(mmicl.Check(
            f"a layer fitted to sampled prompts (L-BFGS, every entry of A and B free) reaches L* on fresh prompts ({label})",
            "monte-carlo", False if ex.mean + Z_HEAVY * ex.se < 0 else bounded_excess(ex, slack),
            {"paired_excess": ex.mean, "se": ex.se, "slack": slack, "gamma_fitted": _mat(G_fit),
             "relative_gamma_error": float(np.linalg.norm(G_fit - Gs) / np.linalg.norm(Gs)),
             "fit": {k2: fit[k2] for k2 in ("train_loss", "evaluations", "M", "iters", "seed")}},
            tolerance=f"fails below −{Z_HEAVY:g}·SE (the layer would beat the derived optimum) or when ℓ(fit) − ℓ(Γ*) − "
                      f"{Z_HEAVY:g}·SE exceeds 4·d²/M_fit·L*, four times the least-squares optimism of a quadratic fitted on "
                      f"M_fit prompts; holds when ℓ(fit) − ℓ(Γ*) + {Z_HEAVY:g}·SE is within it; else undecided",
            role="corroborating"))
        summary[f"L*[{label}]"] = Ls
        summary[f"eta*[{label}]"] = n / (n + d + 1)
    return hyps, checks, summary


# ---------------------------------------------------------------- acds.critical
@mmicl.claim("acds.critical", title="L steps of Σ⁻¹-preconditioned gradient descent are a critical point of L layers",
             case=CASE,
             statement="For L layers with B_ℓ = 0 (the x rows fixed), the point A_ℓ = −a_ℓ Σ⁻¹, where a_1 … a_L are "
                       "the best step sizes of L steps of Σ⁻¹-preconditioned GD, is a critical point of the loss over "
                       "all of A_1 … A_L (not only over the step sizes).")
def evaluate_critical(config):
    todo, hyps = _cases_and_hypotheses(config)
    checks, summary, sizes = [], {}, _sizes(config)
    if not all(h.met for h in hyps):
        return hyps, checks, summary
    for k, (label, sigma, n, Lmax) in enumerate(todo):
        d = sigma.shape[0]
        predict = _stack(sigma, n)
        for L in range(2, Lmax + 1):
            best = theory.best_steps(L, n, d)
            A, _ = nm.transformer_params_for_steps(best["steps"], sigma)
            D = [config.rng(7, k, L, l).standard_normal((d, d)) for l in range(L)]
            D = [np.linalg.norm(a) / np.linalg.norm(b) * b for a, b in zip(A, D)]
            check, _ = _stationary_checks(
                f"Monte Carlo: L = {L}, A_ℓ = −a_ℓΣ⁻¹ (a = {', '.join(f'{a:.4g}' for a in best['steps'])}) is stationary "
                f"along a random direction of all {L} blocks, ‖D_ℓ‖ = ‖A_ℓ‖ ({label})",
                predict, A, D, sigma, n, sizes["M"], config.rng(8, k, L))
            checks.append(check)
            off = [0.8 * a for a in A]
            control, _ = _stationary_checks(
                f"control: L = {L}, every step 20 % shorter is rejected by the same rule, along the steps' own "
                f"direction ({label})", predict, off, [0.2 * a for a in off], sigma, n, sizes["M"],
                config.rng(9, k, L), role="corroborating")
            control = mmicl.Check(control.name, control.method, control.passed is False, control.numbers,
                                  tolerance="the decisive rule must say 'not stationary' (|z| > k) here", role="corroborating")
            checks.append(control)
            summary[f"steps[L={L}]"] = [round(a, 6) for a in best["steps"]]
    return hyps, checks, summary


# ---------------------------------------------------------------- acds.layers
@mmicl.claim("acds.layers", title="Trained L-layer linear transformers against L steps of preconditioned GD", case=CASE,
             statement="For L = 1 … 4: the best L steps of Σ⁻¹-preconditioned gradient descent (per-step sizes) have "
                       "the loss E tr p(S)² derived from the Wishart trace moments; L layers with A_ℓ = −a_ℓΣ⁻¹, "
                       "B_ℓ = 0 compute them exactly; and L layers with B_ℓ = 0 fitted to sampled prompts (every "
                       "entry of every A_ℓ free) reach those steps, not a worse critical point.  The fitted layers' "
                       "losses on fresh prompts, with and without the B_ℓ blocks, are reported beside them.")
def evaluate_layers(config):
    todo, hyps = _cases_and_hypotheses(config)
    checks, summary, sizes = [], {}, _sizes(config)
    if not all(h.met for h in hyps):
        return hyps, checks, summary
    for k, (label, sigma, n, Lmax) in enumerate(todo):
        d = sigma.shape[0]
        inv = np.linalg.inv(sigma)
        isotropic = bool(np.allclose(sigma, sigma[0, 0] * np.eye(d), rtol=1e-12, atol=0))
        exact, table = {}, {}
        for L in range(1, Lmax + 1):
            best = theory.best_steps(L, n, d)
            exact[L] = best["loss"]
            steps, ref = best["steps"], float(best["loss"])
            A, Bx = nm.transformer_params_for_steps(steps, sigma)
            X, y = nm.sample_prompts(sigma, n, 2_000, config.rng(10, k, L))
            gd, lt = nm.gd_predict(X, y, n, steps, inv), nm.transformer_predict(A, Bx, X, y, n)
            gap = float(np.max(np.abs(gd - lt)))
            bound = 100 * L * (d + 1) * n * EPS * max(1.0, float(np.max(np.abs(gd)))) * \
                max(1.0, float(np.linalg.norm(inv, 2) * max(steps)))
            checks.append(mmicl.Check(
                f"L = {L}: the layers A_ℓ = −a_ℓΣ⁻¹, B_ℓ = 0 predict what L steps of preconditioned GD predict, "
                f"prompt by prompt ({label})", "numpy", gap <= bound, {"max_abs_difference": gap, "bound": bound,
                                                                        "prompts": 2_000},
                tolerance="rounding: 100·L·(d+1)·n·ε·max|ŷ|·max(1, ‖Σ⁻¹‖·max a) (the two compute the same sums in "
                          "different orders)"))
            checks.append(mmicl.Check(
                f"L = {L}: the derived loss is a loss, 0 ≤ {ref:.6g} < d = {d} (the zero predictor's), with real step "
                f"sizes ({label})", "symbolic", bool(0 <= best["loss"] < d and best["roots_imag"] <= 1e-9 * max(
                    1.0, *(abs(a) for a in steps))), {"loss": str(best["loss"]), "roots_imag": best["roots_imag"]},
                tolerance="exact for the loss; 1e-9 relative for numpy's roots of p"))
            ctx = mmicl.Estimate.of(nm.context_trace_losses(steps, n, d, sizes["M_pgd"], config.rng(14, k, L)))
            checks.append(mmicl.z_check(
                f"L = {L}: the mean of tr p(S)² over sampled contexts equals the loss derived from the Wick trace "
                f"moments, {ref:.6g} ({label})", ctx, ref, detect=0.05 * max(abs(ref), EPS), k=Z_HEAVY,
                detail=f"M = {sizes['M_pgd']} contexts, S from sampled Gaussian columns, p(λ) at S's eigenvalues; exact "
                       f"loss {best['loss']} (a rational number); detect: 5 % of it, the check's resolution"))
            fit = nm.train_transformer(sigma, n, L, sizes["M_fit"], sizes["iters"], restricted=True,
                                       seed=int(config.rng(11, k, L).integers(2**31)),
                                       reference=lambda X, y, s=steps: nm.gd_predict(X, y, n, s, inv))
            below = fit["train_loss"] <= fit["reference_train_loss"] * (1 + 1e-9)
            checks.append(mmicl.Check(
                f"L = {L}: {L} layer(s) with B_ℓ = 0 fitted to sampled prompts (L-BFGS, every entry of every A_ℓ free) "
                f"reach the best {L} step(s) of preconditioned GD on those prompts ({label})", "torch.optim.LBFGS",
                bool(below), {"fitted_train_loss": fit["train_loss"], "pgd_train_loss": fit["reference_train_loss"],
                              "M_fit": fit["M"], "evaluations": fit["evaluations"], "seed": fit["seed"]},
                tolerance="the fit's mean square error on its own M_fit prompts is at most the PGD layers' on the same "
                          "prompts (1e-9 relative, rounding): the PGD layers are in the fitted family, so a fit above "
                          "them stopped short or at a worse critical point",
                detail="on its own prompts the fit is free of sampling noise; on fresh prompts (the table in the summary) "
                       "it pays the fit's optimism"))
            preds = {"pgd": lambda X, y, s=steps: nm.gd_predict(X, y, n, s, inv),
                     "fit": lambda X, y, f=fit: nm.transformer_predict(f["A"], f["B"], X, y, n)}
            full = None
            if L <= sizes["full_L"]:
                full = nm.train_transformer(sigma, n, L, sizes["M_fit"], sizes["iters"],
                                            seed=int(config.rng(15, k, L).integers(2**31)))
                preds["full"] = lambda X, y, f=full: nm.transformer_predict(f["A"], f["B"], X, y, n)
            if not isotropic:
                plain = nm.best_plain_steps(sigma, n, L, sizes["M_fit"], config.rng(12, k, L))
                preds["gd"] = lambda X, y, s=plain: nm.gd_predict(X, y, n, s, np.eye(d))
            sq = nm.paired_losses(preds, sigma, n, sizes["M"], config.rng(13, k, L))
            pgd = mmicl.Estimate.of(sq["pgd"])
            checks.append(mmicl.z_check(
                f"L = {L}: a direct simulation, L steps of preconditioned GD run on each of M prompts drawn from the "
                f"model, has the derived loss ({label})", pgd, ref, detect=0.05 * max(abs(ref), EPS), k=Z_HEAVY,
                role="corroborating",
                detail=f"M = {sizes['M']} prompts; the squared error is a polynomial of degree {4 * L + 2} in Gaussian "
                       "variables, so its SE is large and itself uncertain: the decisive check integrates the task and "
                       "the query exactly"))
            ex, fitted = mmicl.Estimate.of(sq["fit"] - sq["pgd"]), mmicl.Estimate.of(sq["fit"])
            row = {"pgd_exact": ref, "pgd_contexts": [ctx.mean, ctx.se], "pgd_prompts": [pgd.mean, pgd.se],
                   "fitted_B0": [fitted.mean, fitted.se], "fitted_B0_minus_pgd": [ex.mean, ex.se],
                   "fitted_B0_train": fit["train_loss"], "steps": [round(a, 6) for a in steps]}
            if full is not None:
                fe = mmicl.Estimate.of(sq["full"])
                row["fitted_full"] = {"mean": fe.mean, "se": fe.se, "median": float(np.median(sq["full"])),
                                      "max": float(np.max(sq["full"])), "train": full["train_loss"]}
            if "gd" in sq:
                gde = mmicl.Estimate.of(sq["gd"] - sq["pgd"])
                row["gd"] = [float(np.mean(sq["gd"])), mmicl.Estimate.of(sq["gd"]).se]
                checks.append(mmicl.Check(
                    f"control, L = {L}: L steps of plain GD (its best sizes, fitted on sampled prompts) lose to "
                    f"preconditioned GD at this Σ ({label})", "monte-carlo", gde.mean > Z_HEAVY * gde.se,
                    {"paired_difference": gde.mean, "se": gde.se, "cond_sigma": float(np.linalg.cond(sigma))},
                    tolerance=f"ℓ(GD) − ℓ(PGD) > {Z_HEAVY:g}·SE", role="corroborating"))
            table[f"L={L}"] = row
            text = f"PGD {ref:.5g} (exact), B=0 fit {fitted.mean:.5g} ± {fitted.se:.2g}"
            if full is not None:
                text += f", full fit {row['fitted_full']['mean']:.5g} ± {row['fitted_full']['se']:.2g}"
            if "gd" in row:
                text += f", plain GD {row['gd'][0]:.5g} ± {row['gd'][1]:.2g}"
            summary[f"L={L}"] = text
        losses = [exact[L] for L in sorted(exact)]
        checks.append(mmicl.Check(
            f"the best loss falls with every added step: {' > '.join(f'{float(v):.5g}' for v in losses)} ({label})",
            "symbolic", all(a > b for a, b in zip(losses, losses[1:])), {"exact": [str(v) for v in losses]},
            tolerance="exact rationals", role="corroborating"))
        summary["table"] = table
    return hyps, checks, summary
