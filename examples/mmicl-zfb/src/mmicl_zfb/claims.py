r"""The claims of Zhang, Frei & Bartlett (JMLR 2024) checked by this plugin, namespace ``zfb``.

- ``zfb.minimiser``: the population loss L(Γ) = ½E[(x_qᵀ Γ (1/N)Σ y_i x_i − y_q)²], derived from
  the model (``theory``), has the global minimiser Γ* = ((1 + 1/N)Λ + tr(Λ)/N · I)⁻¹ and the
  minimal value L* = ½[tr Λ − tr(Λ²Γ*)].
- ``zfb.flow``: gradient flow of the LSA layer from the paper's init (σ below the paper's bound)
  moves only W11^{KQ} and w22^{PV} and converges to the global minimiser: u Uᵀ → Γ*, with
  u → ‖Γ*‖_F^{1/2}.
- ``zfb.montecarlo``: training the full LSA layer (both matrices) on sampled prompts reaches the
  derived minimal loss L*.

Sizes: ``config.smoke`` one tiny case; ``config.quick`` Λ = diag(1, 2, 4) with N = 5 and a random
SPD 2 × 2 covariance (eigenvalues 1 and 10) with N = 3; full adds a random SPD 4 × 4 (eigenvalues
1..100) with N = 10 and diag(1, 10, 100) with N = 20.  Every random choice comes from
``config.seed``.  Only public names of mmicl are used.
"""
from __future__ import annotations

import numpy as np

import mmicl
from mmicl import hypotheses as hyp

if __package__:  # imported as mmicl_zfb.claims (the entry point, or --plugin mmicl_zfb.claims)
    from . import numerics as nm
    from . import theory
    from .case import CASE
else:  # loaded as a file (--plugin path/to/claims.py): import the package from the folder above
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from mmicl_zfb import numerics as nm
    from mmicl_zfb import theory
    from mmicl_zfb.case import CASE

EPS = float(np.finfo(float).eps)


# ---------------------------------------------------------------- cases and seeds
def cases(config) -> list[tuple[str, np.ndarray, int]]:
    """(label, Λ, N): the case given (``--case``, ``config.case_value``), else the run size's own."""
    if config.case_value is not None:
        Lam, N = config.case_value
        label = "; ".join(p.strip() for p in config.case.split(";") if p.strip() and p.split("=")[0].strip() != "N")
        return [(label, Lam, N)]
    rng = config.rng(0)
    if config.smoke:
        return [("diag(1,3)", np.diag([1.0, 3.0]), 2)]
    out = [("diag(1,2,4)", np.diag([1.0, 2.0, 4.0]), 5),
           ("random SPD d=2, eigenvalues 1..10", nm.random_spd(2, 10.0, rng), 3)]
    if not config.quick:
        out += [("random SPD d=4, eigenvalues 1..100", nm.random_spd(4, 100.0, rng), 10),
                ("diag(1,10,100)", np.diag([1.0, 10.0, 100.0]), 20)]
    return out


def case_hypotheses(label: str, Lam: np.ndarray, N) -> list:
    """Λ symmetric positive definite and N a whole number ≥ 1, decided from the case's numbers."""
    return [mmicl.Hypothesis(f"{h.text} ({label})", h.met, h.detail)
            for h in (hyp.positive_definite(Lam, "Λ"), hyp.integer_in(N, 1, None, "N"))]


def _sigma_hypothesis(label, sigma, bound):
    return mmicl.Hypothesis(f"the init scale σ is below the paper's bound √(2/(√d‖B‖_op)) ({label})",
                            0 < sigma < bound, f"σ = {sigma:.6g}, bound = {bound:.6g}")


def _mc_sizes(config) -> dict:
    if config.smoke:
        return {"M": 10_000, "steps": 200, "batch": 128}
    if config.quick:
        return {"M": 200_000, "steps": 2_000, "batch": 1_000}
    return {"M": 1_000_000, "steps": 6_000, "batch": 2_000}


def _mat(a) -> list:
    return np.asarray(a, float).round(12).tolist()


# ---------------------------------------------------------------- zfb.minimiser
@mmicl.claim("zfb.minimiser", title="The derived loss's global minimiser is the paper's Γ*", case=CASE,
             statement="For x_i, x_q ~ N(0, Λ), w ~ N(0, I), y_i = wᵀx_i, the population loss "
                       "L(Γ) = ½E[(x_qᵀΓ(1/N)Σy_i x_i − y_q)²] derived from the model's Gaussian and "
                       "sample-covariance moments has the unique global minimiser "
                       "Γ* = ((1 + 1/N)Λ + tr(Λ)/N·I)⁻¹ and minimal value ½[tr Λ − tr(Λ²Γ*)].")
def evaluate_minimiser(config):
    hyps, checks, summary = [], [], {}
    # --- symbolic: the derivation against the closed forms
    sym_cases = [(2, True)] if config.smoke else [(1, False), (2, False), (3, True)]
    sas = {f"d={d}{' diag' if dg else ''}": theory.check_sample_cov_identity(d, dg) for d, dg in sym_cases}
    checks.append(mmicl.Check(
        "E[S A S] derived from the Gaussian MGF equals ΛAΛ + (ΛAᵀΛ + tr(AΛ)Λ)/N", "symbolic", all(sas.values()),
        {"cases": sas}, tolerance="exact: sympy.simplify of the difference is the zero matrix (symbolic Λ, A, N)",
        detail="moments of S = (1/N)Σx_ix_iᵀ from the split of the double sum; fourth moments from the MGF"))
    form = {f"d={d}{' diag' if dg else ''}": theory.check_loss_form(d, dg) for d, dg in sym_cases}
    checks.append(mmicl.Check(
        "the loss by staged expectation of the model's error equals ½[tr(ΓᵀΛΓM) − 2tr(ΛΓΛ) + trΛ]", "symbolic",
        all(form.values()), {"cases": form}, tolerance="exact: the expanded difference simplifies to 0",
        detail="the matrix form is what the compiled numpy functions use at every d"))
    mins = [theory.check_minimiser(d, dg) for d, dg in sym_cases]
    checks.append(mmicl.Check(
        "the stationarity condition ∇L = 0, solved symbolically, gives Γ* = B⁻¹ and L* = ½[trΛ − tr(Λ²B⁻¹)]",
        "symbolic", all(m["gamma_star_equal"] and m["min_loss_equal"] for m in mins), {"cases": mins},
        tolerance="exact: simplify(Γ_solved − B⁻¹) = 0 and simplify(L(Γ_solved) − L*) = 0, symbolic Λ and N "
                  "(general Λ at d ≤ 2, diagonal Λ at d = 3)",
        detail="L is a convex quadratic (Hessian M ⊗ Λ ≻ 0), so the one stationary point is the global minimiser"))
    # --- per case: numeric minimisation, stationarity, Monte Carlo of the loss
    sizes = _mc_sizes(config)
    for k, (label, Lam, N) in enumerate(cases(config)):
        case_hyps = case_hypotheses(label, Lam, N)
        hyps += case_hyps
        if not all(h.met for h in case_hyps):
            continue  # not a case of the statement: hypothesis-not-met, nothing computed on it
        Gs, Ls, L0 = theory.gamma_star(Lam, N), theory.min_loss(Lam, N), float(np.trace(Lam)) / 2
        mu = theory.strong_convexity(Lam, N)
        g_at_star = float(np.linalg.norm(theory.grad(Gs, Lam, N)))
        scale = float(np.linalg.norm(Lam) ** 2 * np.linalg.norm(Gs) + np.linalg.norm(Lam) ** 2)
        checks.append(mmicl.Check(
            f"Γ* is a stationary point of the compiled loss ({label}, N={N})", "compiled gradient",
            g_at_star <= 1e3 * EPS * scale, {"grad_norm_at_gamma_star": g_at_star, "gamma_star": _mat(Gs)},
            tolerance=f"1000·eps·(‖Λ‖²‖Γ*‖ + ‖Λ‖²) = {1e3 * EPS * scale:.3g}: rounding of the terms ΛΓ*M and Λ²"))
        opt = nm.minimise_numeric(Lam, N, config.rng(1, k))
        err = float(np.linalg.norm(opt["gamma"] - Gs))
        certified = opt["grad_norm"] / mu
        tol = 1e-6 * float(np.linalg.norm(Gs))
        checks.append(mmicl.Check(
            f"BFGS from a random start on the compiled loss finds Γ* ({label}, N={N})", "scipy.optimize",
            err <= tol and abs(opt["loss"] - Ls) <= 1e-9 * L0,
            {"gamma_star": _mat(Gs), "gamma_numeric": _mat(opt["gamma"]), "frobenius_error": err,
             "certified_bound": certified, "loss_numeric": opt["loss"], "L_star": Ls, "L_zero": L0,
             "iterations": opt["iterations"], "start": _mat(opt["start"])},
            tolerance="‖Γ̂ − Γ*‖_F ≤ 1e-6‖Γ*‖_F and |L(Γ̂) − L*| ≤ 1e-9·L(0): BFGS stops at ‖∇L‖ ≤ 1e-12, and "
                      "strong convexity (μ = λ_min(Λ)λ_min(M)) gives ‖Γ̂ − Γ*‖ ≤ ‖∇L(Γ̂)‖/μ (certified_bound)"))
        summary[f"L*[{label},N={N}]"] = Ls
        # Monte Carlo of the derived loss at a random Γ
        rng = config.rng(2, k)
        G = 0.5 * rng.standard_normal(Lam.shape) * float(np.linalg.norm(Gs)) / np.sqrt(Lam.size)
        m, se = nm.mc_loss(G, Lam, N, sizes["M"], rng)
        Lg = theory.loss(G, Lam, N)
        checks.append(mmicl.Check(
            f"the derived loss at a random Γ equals the sampled loss ({label}, N={N})", "monte-carlo",
            abs(m - Lg) <= 4 * se, {"gamma": _mat(G), "derived": Lg, "sampled": m, "se": se, "M": sizes["M"],
                                    "z": (m - Lg) / se},
            tolerance="4 standard errors of the mean of M i.i.d. half squared errors (finite variance: Gaussian "
                      "moments of order 8), a two-sided false alarm rate of 6e-5", role="corroborating"))
        # control: the large-N minimiser Λ⁻¹ is not the minimiser at finite N, and sampling sees it
        Gw = np.linalg.inv(Lam)
        X, _, Y = nm.sample_prompts(Lam, N, sizes["M"], rng)
        dlt = nm.half_sq_errors_gamma(Gw, X, Y, N) - nm.half_sq_errors_gamma(Gs, X, Y, N)
        dm, dse = float(dlt.mean()), float(dlt.std(ddof=1) / np.sqrt(sizes["M"]))
        derived_excess = theory.loss(Gw, Lam, N) - Ls
        power = mmicl.rejection_power(derived_excess, dse, 4.0)
        # sampling sees the excess (passes), contradicts the derived excess (fails), or, with the
        # excess too small for M prompts to resolve, cannot tell (undecided, its power stated)
        if derived_excess <= 0 or abs(dm - derived_excess) > 4 * dse:
            seen = False
        else:
            seen = True if dm > 4 * dse else None
        checks.append(mmicl.Check(
            f"control: Λ⁻¹ (the N → ∞ minimiser) has a larger loss than Γ*, derived and sampled ({label}, N={N})",
            "monte-carlo", seen,
            {"derived_excess": derived_excess, "sampled_excess": dm, "se": dse, "M": sizes["M"],
             "power_at_derived_excess": power},
            tolerance="passes when the paired sampled excess (same prompts for both) is above 4 of its standard "
                      "errors; fails when the derived excess is ≤ 0 or the sampled one is more than 4 standard "
                      "errors from it; else undecided (the excess is below what M prompts resolve)",
            detail="" if seen is not None else
            f"undecided: power {power:.2f} to see the derived excess {derived_excess:.3g} at 4 se ({dse:.3g})",
            role="corroborating"))
    return hyps, checks, summary


# ---------------------------------------------------------------- zfb.flow
@mmicl.claim("zfb.flow", title="Gradient flow from the paper's init converges to the global minimiser",
             case=CASE,
             statement="Gradient flow of the single LSA layer on the population loss, from "
                       "W^{PV}_0 = σ[[0,0],[0,1]], W^{KQ}_0 = σ[[ΘΘᵀ,0],[0,0]] (‖ΘΘᵀ‖_F = 1, σ below the "
                       "paper's bound), moves only W11^{KQ} = U and w22^{PV} = u, and u Uᵀ converges to "
                       "Γ* = ((1 + 1/N)Λ + tr(Λ)/N·I)⁻¹, with u → ‖Γ*‖_F^{1/2}.")
def evaluate_flow(config):
    hyps, checks, summary = [], [], {}
    the_cases = cases(config)
    for d in sorted({Lam.shape[0] for _, Lam, _ in the_cases}):
        N_any = max(N for _, L_, N in the_cases if L_.shape[0] == d)
        blocks = theory.lsa_block_structure(d, N_any)
        moving = sorted(b for b, s in blocks.items() if s == "moves")
        checks.append(mmicl.Check(
            f"from the layer's gradient, only W11^KQ and w22^PV move from the paper's init (d={d})", "symbolic",
            moving == ["W11_KQ", "w22_PV"], {"blocks": blocks},
            tolerance="exact: ∂ŷ/∂θ ≡ 0, or (ŷ − y_q)∂ŷ/∂θ odd under y → −y on {w21^PV = w21^KQ = 0}",
            detail="the flow is integrated on these two blocks (numerics.reduced_flow)"))
    for k, (label, Lam, N) in enumerate(the_cases):
        d = Lam.shape[0]
        case_hyps = case_hypotheses(label, Lam, N)
        hyps += case_hyps
        if not all(h.met for h in case_hyps):
            continue  # not a case of the statement: hypothesis-not-met, nothing computed on it
        bound = nm.sigma_bound(Lam, N)
        sigma = 0.5 * bound
        hyps.append(_sigma_hypothesis(label, sigma, bound))
        u0, U0, P = nm.paper_init(d, sigma, config.rng(3, k))
        Gs, Ls = theory.gamma_star(Lam, N), theory.min_loss(Lam, N)
        nG = float(np.linalg.norm(Gs))
        mu = theory.strong_convexity(Lam, N)
        ig = nm.init_gradient(Lam, N, u0, U0)
        checks.append(mmicl.Check(
            f"the moving blocks have a nonzero gradient at the init ({label}, N={N})", "compiled gradient",
            ig["w22_PV"] > 0 or ig["W11_KQ"] > 0, ig, tolerance="strictly positive", role="corroborating"))
        flow = nm.reduced_flow(Lam, N, u0, U0)
        err = float(np.linalg.norm(flow.gamma - Gs))
        tol = 1e-6 * nG
        checks.append(mmicl.Check(
            f"the flow from the paper's init ends at Γ* ({label}, N={N})", "ode",
            flow.stopped and err <= tol,
            {"gamma_star": _mat(Gs), "flow_end_gamma": _mat(flow.gamma), "flow_end_u": flow.u,
             "flow_end_U": _mat(flow.U), "t_end": flow.t_end, "frobenius_error": err, "tolerance": tol,
             "certified_bound": flow.grad_gamma / mu, "loss_end": flow.loss, "L_star": Ls, "sigma": sigma,
             "Theta_Theta_T": _mat(P), "rhs_evaluations": flow.nfev},
            tolerance="‖uUᵀ − Γ*‖_F ≤ 1e-6‖Γ*‖_F: the flow stops where ‖(du/dt, dU/dt)‖ ≤ 1e-10, so "
                      "‖∇_Γ L‖ ≤ 1e-10/|u| and ‖Γ − Γ*‖ ≤ ‖∇_Γ L‖/μ (certified_bound, strong convexity); the "
                      "rest is room for LSODA's error at rtol 1e-10"))
        checks.append(mmicl.Check(
            f"the flow keeps u² − ‖U‖_F² = 0 and ends at u = ‖Γ*‖_F^(1/2) ({label}, N={N})", "ode",
            flow.balance_drift <= 1e-7 * (nG + sigma**2) and abs(flow.u - np.sqrt(nG)) <= 1e-6 * np.sqrt(nG),
            {"balance_drift": flow.balance_drift, "u_end": flow.u, "sqrt_norm_gamma_star": float(np.sqrt(nG))},
            tolerance="the balance is conserved exactly by the flow: 1e-7·‖Γ*‖ allows LSODA's accumulated error "
                      "at rtol 1e-10 over ~10³ steps; u then follows from u⁴ = ‖uUᵀ‖_F²", role="corroborating"))
        # controls: not the paper's init, and not the case's covariance
        zero = nm.reduced_flow(Lam, N, 0.0, np.zeros((d, d)), t_max=1e3)
        zerr = float(np.linalg.norm(zero.gamma - Gs))
        checks.append(mmicl.Check(
            f"control: from the zero init (a saddle, not the paper's init) the flow does not reach Γ* ({label}, N={N})",
            "ode", zerr > tol and zero.loss > Ls + 1e-6 * Ls,
            {"end_gamma": _mat(zero.gamma), "frobenius_error": zerr, "loss_end": zero.loss, "L_star": Ls},
            tolerance="the same tolerance as the flow check: the control must fall outside it", role="corroborating"))
        iso = np.eye(d) * np.trace(Lam) / d
        if np.max(np.abs(iso - Lam)) > 0:
            wrong = nm.reduced_flow(iso, N, u0, U0)
            werr = float(np.linalg.norm(wrong.gamma - Gs))
            checks.append(mmicl.Check(
                f"control: the flow on the isotropic covariance tr(Λ)/d·I ends away from Γ*(Λ) ({label}, N={N})",
                "ode", werr > tol, {"end_gamma": _mat(wrong.gamma), "frobenius_error": werr, "tolerance": tol},
                tolerance="the same tolerance as the flow check: the control must fall outside it",
                role="corroborating"))
        summary[f"flow_err[{label},N={N}]"] = err
    return hyps, checks, summary


# ---------------------------------------------------------------- zfb.montecarlo
@mmicl.claim("zfb.montecarlo", title="Training the full LSA layer reaches the derived minimal loss",
             case=CASE,
             statement="Adam on sampled prompts, every entry of both (d+1)×(d+1) matrices of the LSA layer "
                       "trainable, from the paper's init, reaches the loss L* = ½[tr Λ − tr(Λ²Γ*)] on fresh "
                       "prompts (to the claim's resolution: 1% of L(0) − L*).")
def evaluate_montecarlo(config):
    hyps, checks, summary = [], [], {}
    sizes = _mc_sizes(config)
    for k, (label, Lam, N) in enumerate(cases(config)):
        d = Lam.shape[0]
        case_hyps = case_hypotheses(label, Lam, N)
        hyps += case_hyps
        if not all(h.met for h in case_hyps):
            continue  # not a case of the statement: hypothesis-not-met, nothing computed on it
        bound = nm.sigma_bound(Lam, N)
        sigma = 0.5 * bound
        hyps.append(_sigma_hypothesis(label, sigma, bound))
        _, _, P = nm.paper_init(d, sigma, config.rng(4, k))
        PV0, KQ0 = nm.full_init(d, sigma, P)
        Gs, Ls, L0 = theory.gamma_star(Lam, N), theory.min_loss(Lam, N), float(np.trace(Lam)) / 2
        slack = 0.01 * (L0 - Ls)
        trained = nm.train_full_lsa(Lam, N, PV0, KQ0, sizes["steps"], sizes["batch"], lr=0.02,
                                    seed=int(config.rng(5, k).integers(2**31)))
        ev = nm.evaluate_layer(trained["PV"], trained["KQ"], Lam, N, sizes["M"], config.rng(6, k))
        Godd = nm.odd_part(trained["PV"], trained["KQ"])
        off = {"w21_PV": float(np.linalg.norm(trained["PV"][d, :d])), "w21_KQ": float(np.linalg.norm(trained["KQ"][d, :d]))}
        checks.append(mmicl.Check(
            f"the trained full layer's loss on fresh prompts is L* ({label}, N={N})", "monte-carlo",
            abs(ev["loss"] - Ls) <= 4 * ev["se"] + slack,
            {"loss": ev["loss"], "se": ev["se"], "M": ev["M"], "L_star": Ls, "L_zero": L0, "slack": slack,
             "gamma_star": _mat(Gs), "trained_gamma_odd_part": _mat(Godd),
             "derived_excess_of_odd_part": theory.loss(Godd, Lam, N) - Ls, "off_manifold_blocks": off,
             "training": {"steps": sizes["steps"], "batch": sizes["batch"], "optimizer": "Adam, lr 0.02 → 2e-4",
                          "sigma": sigma}},
            tolerance="|L̂ − L*| ≤ 4·SE + 0.01·(L(0) − L*): 4 SE for sampling (M fresh prompts, false alarm 6e-5); "
                      "the slack is the claim's resolution for a finite Adam run (training removes 99% of the "
                      "reducible loss), the exact excess of the trained odd part being reported beside it",
            detail="the full layer's minimum is L* too: L_full(θ) = L(Γ'(θ)) + ½E[even part²] (numerics)"))
        checks.append(mmicl.Check(
            f"the trained layer does not beat Γ* on the same prompts ({label}, N={N})", "monte-carlo",
            ev["excess"] >= -4 * ev["excess_se"], {"paired_excess": ev["excess"], "se": ev["excess_se"], "M": ev["M"]},
            tolerance="the paired excess ℓ(θ) − ℓ(Γ*) over the same M prompts is ≥ −4 of its standard errors "
                      "(L* is the full layer's minimum)", role="corroborating"))
        ev0 = nm.evaluate_layer(PV0, KQ0, Lam, N, sizes["M"], config.rng(7, k))
        checks.append(mmicl.Check(
            f"control: the untrained layer (the paper's init) is rejected by the same rule ({label}, N={N})",
            "monte-carlo", abs(ev0["loss"] - Ls) > 4 * ev0["se"] + slack,
            {"loss": ev0["loss"], "se": ev0["se"], "L_star": Ls, "slack": slack},
            tolerance="the decisive check's rule must fail on it", role="corroborating"))
        summary[f"loss-L*[{label},N={N}]"] = ev["loss"] - Ls
    return hyps, checks, summary
