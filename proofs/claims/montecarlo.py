"""Claims ``appF`` (the no-skip ablation) and ``depth`` (deeper is better), by Monte Carlo training.

appF.  In the LCA with W^S = 0 and F⁰ = 0, every layer adds ``W^V C (W^K)ᵀ W^Q F^{t−1} = 0``, so
F^T = 0 and the model predicts ŷ ≡ 0 whatever its weights (and its gradient is 0: training cannot
move it).  Its risk is ``E[y_q²] = E[ζ²]`` at every T and n.  The "plain sample-mean predictor" is
taken to be ``ȳ = (1/n) Σ y_i`` (the mean of the context labels), whose risk is ``E[ζ²](1 + 1/n)``:
the two agree in the large-context limit and differ by the finite-n bias ``E[ζ²]/n``, which the
check accounts for.  (The reading "ŷ = (1/n)Σ y_i x_iᵀ x_q" is *not* what the ablation computes.)

depth.  The one-parameter LCA trained at each T in the large-context limit: its excess risk
(measured without label noise, with standard errors) falls with T, agrees with the theory's
``excess_risk(law, T, α)`` at the trained α, and its log-log rate along T is compared with the
theory's rate at α_T.

At the smoke size (property tests over many laws): appF at T = 1 and 16 only (quick's rows there,
to the last bit) without the sample-mean baselines that no check reads; depth at T = 1 and 2 with a
shorter training, where a fall decides as at quick and a missing fall is undecided, not a failure.

Roles (``claim.decide``): appF's "does not fall with T" and "= the sample-mean risk" are decisive,
"= E[ζ²], the risk of predicting 0" corroborates; depth's "falls from T to T′" checks are decisive,
the match with the theory's excess and rate corroborates.
"""
from __future__ import annotations

import numpy as np

from mmicl.numerics.atomic import save_figure, write_json
from mmicl.numerics.laws.language import parse_law
from mmicl.numerics.mc_studies import depth_study, log_log_slope, noskip_study, sample_mean_baselines
from mmicl.proofs import hypotheses as hyp
from mmicl.proofs.claims.mc_evidence import CLOSED_FORM_RTOL, Z_ATOL, alpha_T_atol, excess_rtol
from mmicl.proofs.claims.number_tolerances import EXACT, SAMPLING_WHY, exact, sampling_atol
from mmicl.proofs.claim import CORROBORATING, Check, Hypothesis, RunConfig, Summary

__all__ = ["DEFAULT_LAW", "Z", "NOSKIP_WHY", "evaluate_appF", "appF_series", "evaluate_depth"]


DEFAULT_LAW = "s=uniform(0.5,4); zeta=normal; d1=1; d2=1"
Z = 3.0
NOSKIP_WHY = ("risks, paired differences and their se's: sampling_atol(se); z: 4·√2; the trained max weight: "
              "relative sampling_atol(risk_se/risk), the precision of the sampled risk it is trained on (no se "
              f"of the weights is stated); E[ζ²] and the finite-n bias E[ζ²]/n: closed forms; {SAMPLING_WHY}")


def _law(config: RunConfig):
    return parse_law(config.law or DEFAULT_LAW)


def _noskip_flat_check(first: dict, last: dict) -> Check:
    se = (first["risk_se"] ** 2 + last["risk_se"] ** 2) ** 0.5
    return Check("no-skip risk does not fall with T", "monte-carlo", last["risk"] >= first["risk"] - Z * se,
                 {"T_first": first["T"], "risk_first": first["risk"], "T_last": last["T"],
                  "risk_last": last["risk"], "se_of_difference": se},
                 tolerance=f"falls by less than {Z} se of the difference (independent samples)",
                 atol={**exact("T_first", "T_last"), "risk_first": sampling_atol(first["risk_se"]),
                       "risk_last": sampling_atol(last["risk_se"]), "se_of_difference": sampling_atol(se)},
                 numbers_tolerance=SAMPLING_WHY, sampled=("risk_first", "risk_last", "se_of_difference"),
                 se={"risk_first": first["risk_se"], "risk_last": last["risk_se"]})


def _noskip_vs_sample_mean_check(r: dict, ez2: float, n: int) -> Check:
    bias = -ez2 / n  # E[(0 − y)²] − E[(ȳ − y)²] = E[ζ²] − E[ζ²](1 + 1/n)
    z = abs(r["minus_label_mean"] - bias) / r["minus_label_mean_se"] if r["minus_label_mean_se"] > 0 else np.inf
    return Check(f"no-skip risk = sample-mean risk − E[ζ²]/n (T={r['T']})", "monte-carlo", z <= Z,
                 {**r, "finite_n_bias": bias, "z": z, "E_zeta2": ez2, "n": n},
                 tolerance=f"{Z} se of the paired difference, after the exact finite-n bias E[ζ²]/n",
                 **_noskip_tolerance(r))


def _noskip_tolerance(r: dict) -> dict:
    """``atol``, ``rtol`` and ``numbers_tolerance`` of a no-skip row's check (``noskip_study``):
    see ``NOSKIP_WHY``."""
    risk_atol, diff_atol = sampling_atol(r["risk_se"]), sampling_atol(r["minus_label_mean_se"])
    return dict(atol={**exact("T", "n"), "risk": risk_atol, "risk_se": risk_atol, "minus_label_mean": diff_atol,
                      "minus_label_mean_se": diff_atol, "z": Z_ATOL, "max_abs_prediction_weight": EXACT,
                      "finite_n_bias": EXACT, "E_zeta2": EXACT},
                rtol={"max_abs_prediction_weight": sampling_atol(r["risk_se"] / r["risk"]) if r["risk"] > 0 else EXACT,
                      "finite_n_bias": CLOSED_FORM_RTOL, "E_zeta2": CLOSED_FORM_RTOL},
                numbers_tolerance=NOSKIP_WHY, sampled=NOSKIP_SAMPLED,
                se={"risk": "risk_se", "minus_label_mean": "minus_label_mean_se"})


NOSKIP_SAMPLED = ("risk", "risk_se", "minus_label_mean", "minus_label_mean_se", "z", "max_abs_prediction_weight",
                  "diverged")
"""The numbers of a no-skip row that depend on the seed (``Check.sampled``)."""


def _noskip_vs_zero_check(r: dict, ez2: float) -> Check:
    z0 = abs(r["risk"] - ez2) / r["risk_se"]
    return Check(f"no-skip risk = E[ζ²] = risk of predicting 0 (T={r['T']})", "monte-carlo", z0 <= Z,
                 {"T": r["T"], "risk": r["risk"], "risk_se": r["risk_se"], "E_zeta2": ez2, "z": z0},
                 tolerance=f"{Z} standard errors", **_noskip_tolerance(r),
                 role=CORROBORATING)  # the mechanism (ŷ ≡ 0), not the statement's comparison


def evaluate_appF(config: RunConfig):
    law = _law(config)
    ez2 = law.zeta.second_moment()
    hyps = [hyp.label_scale(law)]
    if not all(h.met for h in hyps):
        return hyps, [], Summary({}, atol=EXACT), []
    Ts = [1, 4, 16] if config.quick else [1, 2, 4, 8, 16, 32]
    if config.smoke:
        # The smoke size trains and measures the shallowest and the deepest depth of quick's sweep
        # only, with quick's steps, samples and seeds (each depth has its own model, training stream
        # and test prompts, so these two rows are exactly quick's): the flatness check compares
        # the same two depths as at quick, and the per-depth checks are quick's at those depths.
        # The two sample-mean baselines are not drawn: they go to the summary and the JSON only,
        # no check reads them (each depth's comparison with ȳ is paired, inside noskip_study).
        Ts = [Ts[0], Ts[-1]]
    n = 50 if config.quick else 200
    steps, samples = (30, 20_000) if config.quick else (300, 200_000)
    rows = noskip_study(law, Ts, n=n, steps=steps, samples=samples, seed=config.seed, device=config.device)
    base = None if config.smoke else sample_mean_baselines(law, n=n, samples=samples, seed=config.seed + 99,
                                                           device=config.device)
    checks = [_noskip_flat_check(rows[0], rows[-1])]
    for r in rows:
        checks += [_noskip_vs_sample_mean_check(r, ez2, n), _noskip_vs_zero_check(r, ez2)]
    write_json(config.out / "montecarlo" / "appF.json", {"law": law.spec(), "n": n, "rows": rows, "baselines": base,
                                                        "seed": config.seed})
    summary = {"risk_T_max": rows[-1]["risk"], "E_zeta2": ez2}
    atol = {"risk_T_max": sampling_atol(rows[-1]["risk_se"])}
    if base is not None:
        summary["sample_mean_risk"] = base["label_mean"][0]
        atol["sample_mean_risk"] = sampling_atol(base["label_mean"][1])
    figs = [] if config.smoke else [_appF_figure(config, law, rows, base, ez2, n)]  # a figure decides nothing
    se = {"risk_T_max": rows[-1]["risk_se"], **({} if base is None else {"sample_mean_risk": base["label_mean"][1]})}
    return hyps, checks, Summary(summary, atol=atol, rtol={"E_zeta2": CLOSED_FORM_RTOL},
                                 why=f"E[ζ²]: a closed form; {SAMPLING_WHY}", sampled=tuple(se), se=se), figs


def appF_series(rows: list[dict], base: dict | None, ez2: float, n: int) -> dict:
    """What the appF figure draws (``noskip_study``'s rows): per depth T, the no-skip risk and its
    paired difference from the sample-mean predictor ȳ, each ± Z standard errors (the checks' band),
    and the values the checks compare them with: E[ζ²] (the risk of predicting 0), E[ζ²](1 + 1/n)
    (ȳ's risk) and the exact finite-n bias −E[ζ²]/n of the difference."""
    T = np.array([r["T"] for r in rows], float)
    return {"T": T, "risk": np.array([r["risk"] for r in rows], float),
            "risk_band": Z * np.array([r["risk_se"] for r in rows], float),
            "difference": np.array([r["minus_label_mean"] for r in rows], float),
            "difference_band": Z * np.array([r["minus_label_mean_se"] for r in rows], float),
            "zero_risk": ez2, "sample_mean_risk": ez2 * (1 + 1 / n), "bias": -ez2 / n,
            "sample_mean_measured": None if base is None else (base["label_mean"][0], Z * base["label_mean"][1])}


def _appF_figure(config: RunConfig, law, rows: list[dict], base: dict | None, ez2: float, n: int):
    from matplotlib.figure import Figure

    s = appF_series(rows, base, ez2, n)
    fig = Figure(figsize=(12, 4.8), layout="constrained")
    a1, a2 = fig.subplots(1, 2)
    a1.errorbar(s["T"], s["risk"], yerr=s["risk_band"], fmt="o", capsize=4, color="C0",
                label=f"no-skip LCA (W^S = 0), trained: risk ± {Z:g} se")
    a1.axhline(s["zero_risk"], color="C2", ls="--", label=f"E[ζ²] = {s['zero_risk']:.4g}: the risk of predicting 0")
    a1.axhline(s["sample_mean_risk"], color="C1", ls=":",
               label=f"E[ζ²](1 + 1/n) = {s['sample_mean_risk']:.4g}: the sample-mean predictor ȳ's risk (n = {n})")
    if s["sample_mean_measured"] is not None:
        m, band = s["sample_mean_measured"]
        a1.axhspan(m - band, m + band, color="C1", alpha=0.15, label=f"ȳ's risk sampled, ± {Z:g} se")
    a2.errorbar(s["T"], s["difference"], yerr=s["difference_band"], fmt="o", capsize=4, color="C0",
                label=f"risk(no-skip) − risk(ȳ) on the same prompts, ± {Z:g} se")
    a2.axhline(s["bias"], color="C1", ls="--", label=f"−E[ζ²]/n = {s['bias']:.4g}: the exact finite-n bias")
    a2.axhline(0, color="0.5", lw=0.8)
    for ax in (a1, a2):
        ax.set_xscale("log", base=2)
        ax.set_xticks(s["T"], [f"{t:g}" for t in s["T"]])
        ax.minorticks_off()
        ax.set_xlabel("depth T (log scale)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), frameon=False)
    a1.set(ylabel="risk E[(ŷ − y_q)²]", title=f"no skip: the risk does not fall with T\n{law.spec()}")
    a2.set(ylabel="paired difference of risks", title="no skip = sample mean − E[ζ²]/n")
    caption = (f"Appendix F, no-skip ablation on {law.spec()}, n = {n}: left, the trained no-skip LCA's risk at each "
               f"depth T (± {Z:g} standard errors), flat in T, at E[ζ²] (the risk of predicting 0) and next to the "
               "sample-mean predictor ȳ's risk E[ζ²](1 + 1/n); right, the paired difference of the two risks per T, "
               "against the exact finite-n bias −E[ζ²]/n that the decisive check allows for.")
    path = config.figures / "appF_noskip.png"
    save_figure(fig, path, dpi=110, metadata={"Description": caption})
    return path


def _depth_hypotheses(law) -> list[Hypothesis]:
    return [hyp.bounded_s(law), hyp.has_signal(law), hyp.label_scale(law),
            hyp.at_least_values(law, 2, "with one value, a single layer at α = 1/(1+s) is already "
                                        "Bayes-optimal: there is no depth effect to see")]


def _resolved(row: dict) -> bool:
    """The theory's excess at the trained α is 100× above float64's rounding floor for ŷ − ŷ_Bayes."""
    return row["theory_excess_at_trained_alpha"] >= 100 * row["resolution"]


def _falls_check(a: dict, b: dict, short_training: int | None = None) -> Check:
    """``short_training``: the steps of a training too short to stand for "the trained LCA" (the
    smoke size): a fall still decides (the same test), a missing fall cannot (the deeper model may
    not have reached its minimiser yet), so it is undecided instead of a failure."""
    se = (a["excess_se"] ** 2 + b["excess_se"] ** 2) ** 0.5
    nums = {"excess_before": a["excess"], "excess_after": b["excess"], "se": se,
            "resolution_after": b["resolution"]}
    if not _resolved(b):
        passed = None  # below the floor the estimate is rounding: it cannot decide
    else:
        passed = b["excess"] < a["excess"] - Z * se
        if short_training is not None and not passed:
            passed = None
    tolerance = (f"decrease larger than {Z} se of the difference; inconclusive where the "
                 "theory's excess is within 100× of float64's rounding floor")
    if short_training is not None:
        nums["training_steps"] = short_training
        tolerance += (f"; at the smoke size ({short_training} training steps) a missing decrease is inconclusive, "
                      "not a failure (the training may be too short)")
    return Check(f"excess risk falls from T={a['T']} to T={b['T']}", "monte-carlo", passed, nums,
                 tolerance=tolerance,
                 atol={"excess_before": sampling_atol(a["excess_se"]), "excess_after": sampling_atol(b["excess_se"]),
                       "se": sampling_atol(se), **exact("resolution_after", "training_steps")},
                 rtol={"resolution_after": CLOSED_FORM_RTOL},
                 numbers_tolerance=f"the rounding floor: a closed form; {SAMPLING_WHY}",
                 sampled=("excess_before", "excess_after", "se"))


DEPTH_SAMPLED = ("alpha", "excess", "excess_se", "theory_excess_at_trained_alpha", "z", "diverged")
"""The numbers of a depth row that depend on the seed (``Check.sampled``).  None has an se that
spans two seeds: the measured excess estimates the excess at the trained α, which moves with the
training, so across seeds they are left uncompared (the checks' outcomes are compared)."""


def _depth_row_tolerance(law, r: dict) -> dict:
    """``atol``, ``rtol`` and ``numbers_tolerance`` of a ``depth_study`` row and its z.  The trained
    α states no se: two trainings that each end within the row's own training error |α − α_T| of
    α_T are at most 2·|α − α_T| apart.  The theory's excess at the trained α moves with the trained
    α as the measured excess does: by the measurement's sampling_atol(excess_se)."""
    ex = sampling_atol(r["excess_se"])
    a_T = alpha_T_atol(r["alpha_T"])
    return dict(atol={"T": EXACT, "alpha": 2 * abs(r["alpha"] - r["alpha_T"]) + a_T, "alpha_T": a_T, "excess": ex,
                      "excess_se": ex, "theory_excess_at_trained_alpha": ex, "theory_excess_at_alpha_T": EXACT,
                      "resolution": EXACT, "z": Z_ATOL},
                rtol={"theory_excess_at_alpha_T": excess_rtol(law, r["T"]), "theory_excess_at_trained_alpha":
                      excess_rtol(law, r["T"]), "resolution": CLOSED_FORM_RTOL},
                sampled=DEPTH_SAMPLED,
                numbers_tolerance=("trained α: 2·|α − α_T| (no se stated; two trainings each within their own "
                                   "error of α_T); theory's excess: excess_risk's stated T·u/ρ, at the trained α "
                                   "also the measured excess's sampling_atol(excess_se); α_T: brentq's stated "
                                   f"accuracy; rounding floor: a closed form; z: 4·√2; {SAMPLING_WHY}"))


def _theory_match_check(law, r: dict) -> Check:
    z = abs(r["excess"] - r["theory_excess_at_trained_alpha"]) / r["excess_se"] if r["excess_se"] > 0 else np.inf
    return Check(f"measured excess = theory's excess at the trained α (T={r['T']})", "monte-carlo",
                 (z <= Z) if _resolved(r) else None, {**r, "z": z}, **_depth_row_tolerance(law, r),
                 tolerance=f"{Z} standard errors of the direct estimate of E[(ŷ − ŷ_Bayes)²]; inconclusive "
                           "where the theory's excess is within 100× of the rounding floor (row 'resolution')",
                 role=CORROBORATING)  # the measurement against the theory, beside the statement


def _slope_weights(T_arr: list[int]) -> np.ndarray:
    """w with the least-squares slope of log v on log T = Σ w_i log v_i."""
    x = np.log(T_arr)
    return (x - x.mean()) / ((x - x.mean()) ** 2).sum()


def _slope_se(T_arr: list[int], values: list[float], ses: list[float]) -> float:
    """se of the least-squares slope of log(value) on log T from each point's se (delta method:
    se(log v) = se/v)."""
    w = _slope_weights(T_arr)
    return float(np.sqrt(np.sum((w * np.array([se / v for se, v in zip(ses, values)])) ** 2)))


def _rate_check(law, rows: list[dict]) -> Check:
    """The measured log-log rate of the excess along T against the theory's rate at the trained
    α's (the models trained, not the ideal α_T: training error shifts the rate by itself, by
    ``slope_shift_from_training_error``), within Z standard errors of the measured slope."""
    T_arr = [r["T"] for r in rows]
    measured = [r["excess"] for r in rows]
    slope_mc = log_log_slope(T_arr, measured)
    at_trained = [r["theory_excess_at_trained_alpha"] for r in rows]
    slope_trained = log_log_slope(T_arr, at_trained)
    slope_th = log_log_slope(T_arr, [r["theory_excess_at_alpha_T"] for r in rows])
    ses = [r["excess_se"] for r in rows]
    slope_se = _slope_se(T_arr, measured, ses)
    # how far the slopes may move: sampling_atol of their delta-method se (the theory at the trained
    # α moves by its points' sampling_atol(excess_se), see _depth_row_tolerance); the slope at α_T
    # by its points' relative accuracy, each times its least-squares weight |w_i| (first order)
    trained_atol = sampling_atol(_slope_se(T_arr, at_trained, ses)) if all(v > 0 for v in at_trained) else 0.0
    theory_atol = float(np.abs(_slope_weights(T_arr)) @ [excess_rtol(law, T) for T in T_arr])
    return Check("measured log-log rate of the excess along T = the theory's at the trained α", "monte-carlo",
                 bool(abs(slope_mc - slope_trained) <= Z * slope_se) if all(_resolved(r) for r in rows) else None,
                 {"slope_measured": slope_mc, "slope_theory_at_trained_alpha": slope_trained,
                  "slope_theory": slope_th, "slope_se": slope_se,
                  "slope_shift_from_training_error": slope_trained - slope_th, "Ts": T_arr},
                 tolerance=f"{Z} se of the measured slope (delta method from each depth's se)",
                 atol={"slope_measured": sampling_atol(slope_se), "slope_se": sampling_atol(slope_se),
                       "slope_theory_at_trained_alpha": trained_atol, "slope_theory": theory_atol,
                       "slope_shift_from_training_error": trained_atol + theory_atol, "Ts": EXACT},
                 numbers_tolerance=("measured slope and its se: sampling_atol(slope_se); the slope of the theory at "
                                    "the trained α: sampling_atol of its own delta-method se from the excess se's; "
                                    "at α_T: Σ |w_i|·(excess_risk's stated relative accuracy T·u/ρ), w the least-squares weights; "
                                    "the shift: the sum of the two"),
                 detail="slope_theory is the rate at α_T, the ideal the training approaches",
                 sampled=("slope_measured", "slope_theory_at_trained_alpha", "slope_se",
                          "slope_shift_from_training_error"),
                 role=CORROBORATING)  # the statement reports the comparison; it does not claim a match


def evaluate_depth(config: RunConfig):
    law = _law(config)
    hyps = _depth_hypotheses(law)
    if not all(h.met for h in hyps):
        return hyps, [], Summary({}, atol=EXACT), []
    Ts = [1, 2, 4, 8] if config.quick else [1, 2, 4, 8, 16, 32]
    steps, samples = (300, 20_000) if config.quick else (3000, 400_000)
    short = None
    if config.smoke:
        # The smoke size trains at T = 1 and 2 only, 100 Adam steps each instead of 300 (training is
        # most of the time: 300 steps at four depths take 1.5 s at d = 2, 5 s at d = 6), with quick's
        # Monte Carlo size (20 000 prompts) for the excess.  The measured excess, its se and the
        # theory at the trained α do not depend on how long training ran, so the "falls" test and
        # the comparisons with the theory decide as at quick; only a missing fall is not a failure
        # there (``_falls_check``: the shorter training may not have reached the minimiser).
        # No figure (it decides nothing).
        Ts, steps, short = [1, 2], 100, 100
    rows = depth_study(law, Ts, n=None, steps=steps, samples=samples, seed=config.seed, device=config.device)
    checks = [_falls_check(a, b, short) for a, b in zip(rows, rows[1:])]
    checks += [_theory_match_check(law, r) for r in rows]
    checks.append(_rate_check(law, rows))
    write_json(config.out / "montecarlo" / "depth.json", {"law": law.spec(), "rows": rows, "seed": config.seed})
    figs = [] if config.smoke else [_depth_figure(config, rows)]
    rate = checks[-1]
    summary = {"excess_T_min": rows[0]["excess"], "excess_T_max": rows[-1]["excess"],
               "slope_mc": rate.numbers["slope_measured"], "slope_theory": rate.numbers["slope_theory"]}
    atol = {"excess_T_min": sampling_atol(rows[0]["excess_se"]), "excess_T_max": sampling_atol(rows[-1]["excess_se"]),
            "slope_mc": rate.atol["slope_measured"], "slope_theory": rate.atol["slope_theory"]}
    return hyps, checks, Summary(summary, atol=atol, why=rate.numbers_tolerance + f"; {SAMPLING_WHY}",
                                 sampled=("excess_T_min", "excess_T_max", "slope_mc")), figs


def _depth_figure(config: RunConfig, rows):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.4))
    ax = fig.subplots()
    T = np.array([r["T"] for r in rows], float)
    ex = np.array([r["excess"] for r in rows], float)
    se = np.array([r["excess_se"] for r in rows], float)
    th = np.array([r["theory_excess_at_alpha_T"] for r in rows], float)
    # a log axis cannot show a bar that reaches 0 or below: such a bar is cut at a tenth of the mean
    pos = np.isfinite(ex) & (ex > 0)
    cut = pos & (ex - se <= 0)
    lower = np.where(cut, 0.9 * ex, se)
    ax.errorbar(T[pos], ex[pos], yerr=[lower[pos], se[pos]], fmt="o", capsize=3,
                label="trained LCA (MC mean ± se)" + (" (bars reaching ≤ 0 cut at mean/10)" if cut.any() else ""))
    if not pos.all():
        ax.plot([], [], " ", label=f"{int((~pos).sum())} MC point(s) ≤ 0 or not finite: not drawn")
    ok = np.isfinite(th) & (th > 0)
    ax.plot(T[ok], th[ok], "-", label="theory: excess at α_T")
    if all("theory_excess_at_trained_alpha" in r for r in rows):
        tt = np.array([r["theory_excess_at_trained_alpha"] for r in rows], float)
        ok_tt = np.isfinite(tt) & (tt > 0)
        ax.plot(T[ok_tt], tt[ok_tt], "x--", label="theory: excess at the trained α")
        ok = ok | ok_tt
    if pos.any() or ok.any():  # a log axis with nothing on it cannot be drawn
        ax.set(xscale="log", yscale="log")
        ax.set_xticks(T, [f"{t:g}" for t in T])  # the depths trained, not 2×10⁰
        ax.minorticks_off()
    ax.set(xlabel="depth T (log scale)", ylabel="excess risk over Bayes (log scale)")
    ax.set_title(f"trained one-parameter LCA: excess risk vs depth\n{_law(config).spec()}", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = config.figures / "depth_excess.png"
    save_figure(fig, path, dpi=120)
    return path

