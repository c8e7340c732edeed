"""Monte Carlo evidence for thm6.2 and thm6.3: the reduced LCA trained by Adam on sampled prompts.

Called by the thm6.2/thm6.3 claims.  Each check trains the model online, then locates the minimiser
of the sampled loss by Newton (SAA, ``mmicl.numerics.montecarlo.stationary_point``: converged means
stationary for the sampled loss, recorded as ``saa_converged_for_the_sampled_loss``) in the large-context
limit (n = ∞: C = Λ, h = ζ m exactly, the theorem's setting) and compares it with the theory's
minimiser in standard errors.  At finite n the check is that α_T lies within the run's stated error
(optimisation error + measured finite-n bias + 3 se), the finite-n bias being measured, not assumed.
"""
from __future__ import annotations

import math

import numpy as np

from mmicl.numerics.laws.task import TaskLaw
from mmicl.numerics.montecarlo import excess_rounding_floor, sampled_excess_one
from mmicl.numerics.mc_studies import TrainedCheck, trained_reduced
from mmicl.numerics.strict_json import context_length_fields
from mmicl.proofs import hypotheses as hyp
from mmicl.proofs.claims.number_tolerances import SAMPLING_WHY, exact, sampling_atol
from mmicl.proofs.claim import Check, RunConfig, corroborating

__all__ = ["Z", "EPS", "Z_ATOL", "CLOSED_FORM_RTOL", "alpha_T_atol", "excess_rtol", "trained_tolerance", "TRAINED_WHY",
           "TRAINED_SAMPLED", "TRAINED_SE",
           "MINIMISE_TWO_ATOL", "thm62_mc_checks", "thm63_mc_checks"]


Z = 3.0  # agreement threshold in standard errors (two-sided p ≈ 0.003 per check)

# ---------------------------------------------------------------------------------------------
# Numeric tolerances (``number_tolerances``), shared with the other Monte Carlo claims
# (``montecarlo``: appF, depth; ``lsa``: thm4.1)
# ---------------------------------------------------------------------------------------------

EPS = float(np.finfo(float).eps)
Z_ATOL = sampling_atol(1.0)
"""How far a z-score (estimate − value)/se may move between two runs: ``sampling_atol(se)/se`` = 4·√2."""
CLOSED_FORM_RTOL = 4 * EPS
"""A closed form of a few float64 operations on the law's parameters (E[ζ²], E[ζ²]/n, the rounding
floor (T·ε)²·E[ζ²]·s/(1+s)): a few ulp."""


def alpha_T_atol(alpha: float) -> float:
    """The accuracy that ``numerics.lca.alpha_T`` states: Brent's ``1e-16 + 4·eps·α`` plus the
    derivative's rounding, 8u·α (u = eps/2)."""
    return 1e-16 + 8 * EPS * abs(alpha)


def excess_rtol(law: TaskLaw, T: int) -> float:
    """The relative accuracy that ``numerics.lca.excess_risk_scaled`` states: a few T·u/ρ (ρ the
    spread of 1 + s); 8·T·u/ρ here."""
    return 4 * T * EPS / law.spread()


def trained_tolerance(r: TrainedCheck, trained_atol: float | None = None) -> dict[str, float]:
    """atol per key of ``r.to_json()``: the SAA estimates and their se's by ``sampling_atol`` of
    their own (sandwich) se, the risk by that of its larger se; the trained parameters by that of
    the SAA se of the minimiser they were trained towards (no se of the trained point itself is
    stated; ``trained_atol`` overrides it, and stands for a point whose se is not finite); the errors
    built from them (optimisation error, finite-n bias, stated error) by the first-order sum of their
    parts' tolerances; settings exact."""
    def se_atol(*points):
        se = max((x for p in points for x in p.se if math.isfinite(x)), default=math.inf)
        return sampling_atol(se) if math.isfinite(se) else (trained_atol or 0.0)

    a_n, a_inf = se_atol(r.at_n), se_atol(r.at_infinity)
    a_tr = se_atol(r.at_n, r.at_infinity) if trained_atol is None else trained_atol
    return {**exact("mode", "T", "n", "steps"), "trained": a_tr,
            "alpha_n": a_n, "alpha_n_se": a_n, "alpha_inf": a_inf, "alpha_inf_se": a_inf,
            "optimisation_error": a_tr + a_n, "finite_n_bias": a_n + a_inf,
            "stated_error": a_tr + 5 * a_n + 4 * a_inf,  # |opt| + |bias| + 3 se(α_∞) + 3 se(α_n)
            "risk": sampling_atol(max(r.risk["risk_se"], r.risk["excess_se"]))}


TRAINED_WHY = ("trained α (float32, Adam): sampling_atol of the SAA se of the minimiser it was trained towards; "
               "SAA estimates, risks and se's: sampling_atol(se); errors and gaps built from them: the sum of "
               f"their parts' tolerances (first order); α_T: brentq's stated 1e-16 + 8·eps·α; {SAMPLING_WHY}")


TRAINED_SAMPLED = ("trained", "alpha_n", "alpha_n_se", "alpha_inf", "alpha_inf_se", "optimisation_error",
                   "finite_n_bias", "stated_error", "risk", "diverged", "saa_converged_for_the_sampled_loss", "z",
                   "z_alpha", "z_beta", "gap", "sampled_loss", "distance_trained")
"""The numbers of a trained check that depend on the seed (``Check.sampled``): everything the
training and the SAA sample give; the depth, context length, steps and the theory's α_T do not."""
TRAINED_SE = {"alpha_n": "alpha_n_se", "alpha_inf": "alpha_inf_se"}
"""The SAA estimates and the keys of their sandwich se's (``Check.se``).  The trained point has no
se (its optimisation error is not a sampling error), so across seeds it is not compared; its
check's outcome is."""


MINIMISE_TWO_ATOL = 1e-15
"""``numerics.lca.minimise_two`` proves no bound: β is refined by Brent's bounded method to
``xatol = 1e-15`` (then Newton-polished to steps below 1e-16); α = γ − β adds u·|β|."""


def _sizes(config: RunConfig) -> dict:
    if config.quick:
        return dict(Ts=[5], ns=[None, 1000], steps=400, saa=40_000, risk=20_000)
    return dict(Ts=[2, 5, 10], ns=[None, 300, 2000], steps=3000, saa=400_000, risk=200_000)


def thm62_mc_checks(config: RunConfig, law: TaskLaw) -> list[Check]:
    """Corroborating (the statement is about the flow on the population loss): see ``_thm62_checks``."""
    return [corroborating(c) for c in _thm62_checks(config, law)]


def _thm62_checks(config: RunConfig, law: TaskLaw) -> list[Check]:
    """Trained one-parameter LCA: α_∞ (SAA at n = ∞) equals α_T within 3 se; the trained α lies
    within its stated error of α_T at each n.  Where s takes one value over prompts with m ≠ 0
    (and T ≥ 2) the large-context loss is flat to order 2T at α_T: see ``_degenerate_checks``."""
    from mmicl.numerics.lca import alpha_T

    sz, checks = _sizes(config), []
    unresolved = hyp.float64_resolution_check("[Monte Carlo]", law, max(sz["Ts"]), sampled=True)
    if unresolved is not None:
        return [unresolved]
    lo, hi = law.signal_bounds()
    for T in sz["Ts"]:
        a_T = alpha_T(law, T)
        for n in sz["ns"]:
            r = trained_reduced(law, T, mode="one", n=n, steps=sz["steps"], lr=0.005, alpha0=0.5 * a_T,
                                seed=config.seed + T, saa_samples=sz["saa"], risk_samples=sz["risk"],
                                device=config.device)
            nums = {"T": T, **context_length_fields(n), "alpha_T": a_T, **r.to_json()}
            atol = {**trained_tolerance(r), "alpha_T": alpha_T_atol(a_T)}
            if r.diverged:
                checks.append(Check(f"MC training lca1 T={T} n={n or '∞'}", "monte-carlo", False, nums,
                                    detail="training diverged", atol=atol, numbers_tolerance=TRAINED_WHY,
                                    sampled=TRAINED_SAMPLED, se=TRAINED_SE))
                continue
            if n is None and lo == hi and T >= 2:
                checks += _degenerate_checks(config, law, T, a_T, r, nums, sz)
                continue
            if n is None:
                z = abs(r.at_infinity.estimate(0).z(a_T))
                checks.append(Check(
                    f"SAA stationary point (Newton) of the sampled large-context loss = α_T (T={T})", "monte-carlo",
                    z <= Z, {**nums, "z": z}, tolerance=f"{Z} standard errors (sandwich se of the SAA estimate)",
                    atol={**atol, "z": Z_ATOL}, numbers_tolerance=TRAINED_WHY + "; z: 4·√2",
                    sampled=TRAINED_SAMPLED, se=TRAINED_SE))
            gap = abs(r.trained["alpha"] - a_T)
            checks.append(Check(
                f"trained α within its stated error of α_T (T={T}, n={nums['n']})", "monte-carlo",
                gap <= r.stated_error, {**nums, "gap": gap},
                tolerance="|optimisation error| + |finite-n bias| + 3 se(α_n) + 3 se(α_∞), all measured",
                atol={**atol, "gap": atol["trained"] + atol["alpha_T"]}, numbers_tolerance=TRAINED_WHY,
                sampled=TRAINED_SAMPLED, se=TRAINED_SE))
    return checks


def _degenerate_checks(config: RunConfig, law: TaskLaw, T: int, a_T: float, r, nums: dict, sz: dict) -> list[Check]:
    """s = s₀ on every prompt with m ≠ 0: each sampled prompt's large-context loss is a positive
    multiple of (1 − α(1+s₀))^{2T}, so the sampled loss is minimised at α_T = 1/(1+s₀) whatever the
    sample (no Monte Carlo error, no sandwich se: the Hessian there is 0), and gradient methods
    approach it only algebraically (the real flow like t^{−1/(2T−2)})."""
    # float64 floor of the sampled loss (excess_rounding_floor, here s_hi = s₀); probe where the
    # exact loss E[ζ²]E[s/(1+s)](δ(1+s₀))^{2T} is 10^6 above that floor, and 10× further out
    # (within α_T/2)
    s0 = law.signal_bounds()[0]
    scale = law.zeta.second_moment() * s0 / (1 + s0)
    floor = excess_rounding_floor(law, T)
    delta_min = (1e6 * floor / scale) ** (1 / (2 * T)) / (1 + s0)
    deltas = [delta_min, min(10 * delta_min, 0.5 * a_T)]
    alphas = [a_T] + [a_T + sgn * d for d in deltas for sgn in (-1, 1)]
    losses = sampled_excess_one(law, T, alphas, n=None, samples=sz["saa"], seed=config.seed + T + 1,
                                device=config.device)
    at_min, around = losses[0], losses[1:]
    start_gap, gap = abs(0.5 * a_T - a_T), abs(r.trained["alpha"] - a_T)
    # no se of the trained α here: its own distance to α_T stands for how far another run may end from it
    a_T_atol = alpha_T_atol(a_T)
    atol = {**trained_tolerance(r, trained_atol=gap), "alpha_T": a_T_atol}
    why = ("trained α: its own distance |α − α_T| (an algebraically slow training states no se); " + TRAINED_WHY)
    return [
        Check(f"α_T minimises the sampled large-context loss (T={T}; s takes one value: no sampling error)",
              "monte-carlo", all(at_min < x for x in around),
              {**nums, "alpha_probed": alphas, "sampled_loss": losses},
              tolerance=f"exact comparison of the sampled loss at α_T ± δ (δ = {', '.join(f'{d:.2g}' for d in deltas)}: "
                        "10^6 above float64's rounding floor (T·eps)²·E[ŷ_Bayes²]) with its value at α_T",
              atol={**atol, "alpha_probed": a_T_atol, "sampled_loss": 2 * math.sqrt(floor * max(losses)) + floor},
              rtol={"alpha_probed": CLOSED_FORM_RTOL, "sampled_loss": sz["saa"] * EPS},
              numbers_tolerance=("α probed: α_T's accuracy + the rounding of δ; sampled loss (the same prompts on "
                                 "every machine): ŷ's rounding T·ε·|ŷ_Bayes| propagated, 2√(loss·floor) + floor, "
                                 "plus the rounding of a sum of `saa` terms; " + why),
              sampled=TRAINED_SAMPLED, se=TRAINED_SE),
        Check(f"training moves α towards α_T (T={T}; flat minimum of order 2T)", "monte-carlo",
              gap < start_gap, {**nums, "distance_at_start": start_gap, "distance_trained": gap},
              tolerance="strict decrease of |α − α_T| from the start α₀ = α_T/2",
              detail="at a minimum flat to order 2T the training error decays algebraically, so no "
                     "standard-error statement about the trained α is available",
              atol={**atol, "distance_at_start": a_T_atol, "distance_trained": gap + a_T_atol},
              numbers_tolerance=why, sampled=TRAINED_SAMPLED, se=TRAINED_SE),
    ]


def thm63_mc_checks(config: RunConfig, law: TaskLaw) -> list[Check]:
    """Corroborating (the statement is about the flow on the population loss): see ``_thm63_checks``."""
    return [corroborating(c) for c in _thm63_checks(config, law)]


def _thm63_checks(config: RunConfig, law: TaskLaw) -> list[Check]:
    """Trained two-parameter LCA from (α₀, β₀) = (α*/2, −α*/4): the SAA estimate at n = ∞ (Newton,
    stationary for the sampled loss) equals ``minimise_two`` within 3 se in each coordinate, and β/α
    of the trained model is near −1."""
    from mmicl.numerics.lca import TwoParameterLoss, alpha_star, minimise_two, excess_risk

    sz, checks = _sizes(config), []
    unresolved = hyp.float64_resolution_check("[Monte Carlo]", law, max(sz["Ts"]), sampled=True)
    if unresolved is not None:
        return [unresolved]
    a_star = alpha_star(law)
    for T in [t for t in sz["Ts"] if t > 1]:
        a2, b2 = minimise_two(law, T)
        r = trained_reduced(law, T, mode="two", n=None, steps=sz["steps"], lr=0.005, alpha0=0.5 * a_star,
                            beta0=-0.25 * a_star, seed=config.seed + 50 + T, saa_samples=sz["saa"],
                            risk_samples=sz["risk"], device=config.device)
        a, b = r.at_infinity.theta
        za, zb = abs(r.at_infinity.estimate(0).z(a2)), abs(r.at_infinity.estimate(1).z(b2))
        nums = {"T": T, "alpha_T": a2, "beta_T": b2, "theory_excess": excess_risk(law, T, a2, b2), "z_alpha": za,
                "z_beta": zb, **r.to_json()}
        checks.append(Check(f"SAA stationary point (Newton) (α, β) of the sampled large-context loss "
                            f"= minimise_two (T={T})",
                            "monte-carlo", (not r.diverged) and za <= Z and zb <= Z, nums,
                            tolerance=f"{Z} sandwich standard errors per coordinate",
                            atol={**trained_tolerance(r), "alpha_T": MINIMISE_TWO_ATOL + EPS * abs(b2),
                                  "beta_T": MINIMISE_TWO_ATOL, "z_alpha": Z_ATOL, "z_beta": Z_ATOL,
                                  "theory_excess": float(TwoParameterLoss(law, T).terms_and_bounds(a2, b2)[1][0])},
                            numbers_tolerance=("minimise_two (no bound proved): Brent's xatol 1e-15 on β, plus "
                                               "u·|β| on α = γ − β; theory excess: the rounding bound of "
                                               "TwoParameterLoss.terms_and_bounds; z's: 4·√2; " + TRAINED_WHY),
                            sampled=TRAINED_SAMPLED, se=TRAINED_SE))
    return checks
