"""``mmicl limits``: the depth T → ∞ of the LCA models for one law — derived expansions checked
against computed values, and the excess risk's decay per layer, tied and untied."""
from __future__ import annotations

import math
from pathlib import Path

import click

from mmicl.commands.common import (Command, IntIn, WritablePath, emit_json, floor_line, law_options, number, plain_variant, show_excess,
                     show_named, signed_sum, variant_floor, variant_minimiser, variant_option, variant_or_alias)

from mmicl.numerics.validate import MAX_DEPTH_ONE
from mmicl.numerics.atomic import save_figure
from mmicl.numerics.atomic import write_json

__all__ = ["MAX_T", "MAX_T_TWO", "MAX_T_UNTIED", "one_parameter", "two_parameter", "untied_model", "unbounded",
           "limits", "variant_limits", "correction_text"]


MAX_T = MAX_DEPTH_ONE
"""``--T-max`` (model one): α_T's own limit, ``numerics.validate.MAX_DEPTH_ONE``."""
MAX_T_TWO = 100
"""The largest depth of the two-parameter sweep (5 … 100): within ``validate.MAX_DEPTH_TWO`` (the
minimiser) and ``validate.MAX_DEPTH_FLOW_TWO`` (the basin's flows run at T = 5, 10, 20)."""
MAX_T_UNTIED = 400
"""The largest depth of the untied sweep (1 … 400): within ``validate.MAX_DEPTH_UNTIED``."""


def _check(name: str, passed: bool | None, detail: str, **numbers) -> dict:
    return {"name": name, "passed": passed, "detail": detail, "numbers": numbers}


def _decades(t_max: int, start: int = 100) -> list[int]:
    Ts, T = [], start
    while T <= t_max:
        Ts.append(T)
        T *= 10
    return Ts


def _untied_rates(law) -> dict:
    """Predicted per-layer rates of the tied and untied models (a bounded law)."""
    from mmicl.numerics import untied

    return untied.predicted_rates(law)


def one_parameter(law, t_max: int, out: Path | None) -> dict:
    from mmicl.numerics import asymptotics as asy

    Ts = _decades(t_max)
    if len(Ts) < 4:
        raise click.BadParameter(f"--T-max {t_max}: the checks need the depths 100, 1000, 10⁴ and 10⁵ at least",
                                 param_hint="--T-max")
    ex = asy.alpha_expansion(law)
    alpha = asy.check_alpha(law, Ts)
    excess = asy.check_excess(law, [10, *Ts], alphas={r["T"]: r["alpha_T"] for r in alpha["rows"]})
    mm = asy.minimax_alpha(law)
    ag = alpha["agreement"]
    rows = alpha["rows"]
    four = [r for r in rows if r["T"] >= 10**4]
    rates = _untied_rates(law)
    checks = [
        _agreement_check(ag),
        _four_digits(ex, four),
        _check("the excess at α_T follows E[ζ²]·L·ρ^{2T}·(2T)^{−p}", excess["consistent"],
               "log10(computed) − log10(predicted): " + ", ".join(
                   f"T={r['T']}: {number(r['difference'])}" for r in excess["rows"]),
               rule="the remainder at the largest T is within twice its change over the last decade"),
        _check("α* minimises the worst case over the support, max_s |α(1+s) − 1|",
               abs(mm - ex.alpha_star) <= 1e-13 * max(1.0, ex.alpha_star),
               f"golden-section minimiser {number(mm)}, α* {number(ex.alpha_star)}: difference "
               f"{number(abs(mm - ex.alpha_star))}",
               tolerance="1e-13: the golden-section bracket (1e-14) and rounding"),
    ]
    out_json = {
        "law": law.spec(), "model": "one", "alpha_star": ex.alpha_star, "rho": ex.rho,
        "ends": {"lo": alpha["expansion"]["lo"], "hi": alpha["expansion"]["hi"]},
        "correction": {"form": ex.form, "coefficient": ex.coefficient, "log_coefficient": ex.log_coefficient,
                       "second": ex.second, "third": ex.third, "second_reason": ex.second_reason,
                       "third_reason": ex.third_reason, "variable": "α* − α_T as a function of T"},
        "excess": excess["expansion"],
        "excess_decay_per_layer": {"tied": rates["tied"] if rates else excess["expansion"]["rate_per_layer"],
                                   "untied": rates["untied"] if rates else None},
        "minimax": {"alpha": mm, "worst_case_at_alpha_star": float(asy.worst_case(law, ex.alpha_star))},
        "rows": rows, "excess_rows": excess["rows"], "checks": checks,
    }
    if out is not None:
        out_json["figures"] = [str(p) for p in _figures_one(law, out_json, out)]
    return out_json


def _agreement_check(ag: dict) -> dict:
    """The derived first-order coefficient against the computed values less the derived second order
    (``numerics.asymptotics.check_alpha``), within the derived third order's bound and the float64 floor."""
    name = f"derived {ag['name']} against the computed values less the derived second order"
    head = (f"derived {number(ag['derived'])}, extrapolated {number(ag['extrapolated'])} (one window earlier "
            f"{number(ag['previous'])}): difference {number(ag['difference'])}")
    numbers = {k: v for k, v in ag.items() if k != "name"}
    if ag["agrees"] is None:
        return _check(name, None, f"{head}; no error bound: {ag['reason']}", **numbers)
    within = "within" if ag["agrees"] else "exceeds"
    return _check(name, ag["agrees"], f"{head} {within} the bound {number(ag['error_bound'])} (twice the derived "
                  f"third order) + float64 floor {number(ag['floor'])}", **numbers)


def _four_digits(ex, four: list[dict]) -> dict:
    """The whole derived expansion against T·(α* − α_T) at T ≥ 10⁴, to four significant digits.
    Decided only where the second-order term is derived: with the leading term alone the relative
    error is O(1/T) or O(log T/T), which at T = 10⁴ may exceed 5e-5 without anything being wrong —
    then the check is inconclusive and says so."""
    rel = [r["relative_difference_expansion"] for r in four]
    detail = "; ".join(f"T={r['T']}: computed {number(r['T_gap_computed'])}, expansion "
                       f"{number(r['T_gap_expansion'])}, relative difference {_relative(r)}" for r in four)
    name = "the derived expansion matches T·(α* − α_T) to 4 digits at T ≥ 10⁴"
    if not four:
        return _check(name, None, "no depth ≥ 10⁴ was computed (raise --T-max)")
    ok = all(x is not None and x < 5e-5 for x in rel)
    if ex.second is None and not ok:
        return _check(name, None, detail + f"; only the leading term is derived for this law ({ex.second_reason}), "
                      "so this cannot decide",
                      tolerance="relative 5e-5 (four significant digits)")
    return _check(name, ok, detail, tolerance="relative 5e-5 (four significant digits)")


def _relative(row: dict) -> str:
    x = row.get("relative_difference_expansion")
    return "—" if x is None else number(x)


def _figures_one(law, res: dict, out: Path) -> list[Path]:
    """limits_one.png: T·(α* − α_T) against log T with the derived line (``proofs.figures.limits_one``)."""
    from mmicl.numerics import asymptotics as asy
    from mmicl.proofs.figures import limits_one

    out.mkdir(parents=True, exist_ok=True)
    return [limits_one(out / "limits_one.png", res, asy.alpha_expansion(law), title=law.spec())]


def two_parameter(law, t_max: int, basin: int) -> dict:
    from mmicl.numerics import asymptotics as asy
    from mmicl.numerics.flows import basin_two

    Ts = [T for T in (5, 10, 20, 30, 50, 70, 100) if T <= t_max]
    if len(Ts) < 4:  # two_parameter_limits fits the rate on four depths at least
        raise click.BadParameter(f"--T-max {t_max}: --model two needs the depths 5, 10, 20 and 30 at least",
                                 param_hint="--T-max")
    res = asy.two_parameter_limits(law, Ts)
    out = {"law": law.spec(), "model": "two", "alpha_star": asy.alpha_expansion(law).alpha_star,
           "rho": res["rho"], "gamma_decay": res["gamma_decay"], "T_gap_limit": res["T_gap_limit"],
           "rows": res["rows"], "checks": [],
           "note": "measured, not derived: the rate of γ_T = α_T + β_T per layer and the limit of T·(α* − α_T)"}
    if basin:
        minimisers = {r["T"]: (r["alpha_T"], r["beta_T"]) for r in res["rows"]}
        out["basin"] = []
        for T in [T for T in (5, 10, 20) if T in minimisers]:
            b = basin_two(law, T, basin, minimisers[T])
            counts: dict[str, int] = {}
            for *_, status in b["starts"]:
                counts[status] = counts.get(status, 0) + 1
            out["basin"].append({"T": T, "grid": basin, "counts": counts,
                                 "fraction_at_minimiser": counts.get("rest", 0) / basin**2})
    return out


def untied_model(law, t_max: int, out: Path | None) -> dict:
    from mmicl.numerics import untied
    from mmicl.numerics.lca import alpha_T, excess_risk_scaled

    Ts = [T for T in (1, 2, 5, 10, 20, 50, 100, 200, 400) if T <= t_max]
    rows = []
    for T in Ts:
        opt = untied.optimal_schedule(law, T)
        tied = excess_risk_scaled(law, T, alpha_T(law, T)).log10
        rows.append({"T": T, "log10_excess_untied": opt.log10_excess if not opt.exact_zero else None,
                     "exact_zero": opt.exact_zero, "log10_excess_tied": tied, "alphas": list(opt.alphas)})
    rates = untied.predicted_rates(law)
    positive = [r["T"] for r in rows if not r["exact_zero"] and r["T"] >= 10]
    # a law with m atoms has an optimum exactly 0 from T = m: no rate per layer there
    measured = untied.measured_rate(law, positive).to_json() if len(positive) >= 2 else None

    def shown(r):
        return "exactly 0" if r["exact_zero"] else f"10^{number(r['log10_excess_untied'])}"

    checks = [_check("the untied optimum is never worse than the tied α_T",
                     all(r["exact_zero"] or r["log10_excess_untied"] <= r["log10_excess_tied"] + 1e-9 for r in rows),
                     "; ".join(f"T={r['T']}: untied {shown(r)}, tied 10^{number(r['log10_excess_tied'])}"
                               for r in rows),
                     tolerance="1e-9 in log10: the untied optimum's stated accuracy")]
    res = {"law": law.spec(), "model": "untied", "excess_decay_per_layer": {"tied": rates["tied"],
           "untied": rates["untied"], "untied_measured": measured}, "rows": rows, "checks": checks}
    if out is not None:
        from matplotlib.figure import Figure

        out.mkdir(parents=True, exist_ok=True)
        fig = Figure(figsize=(5, 4))
        ax = fig.subplots()
        ax.plot(Ts, [r["log10_excess_tied"] for r in rows], "o-", label="tied α_T")
        ax.plot([r["T"] for r in rows if not r["exact_zero"]],
                [r["log10_excess_untied"] for r in rows if not r["exact_zero"]], "s-", label="untied optimum")
        for name, rate in (("tied", rates["tied"]), ("untied", rates["untied"])):
            last = [r for r in rows if r[f"log10_excess_{name}"] is not None][-1]
            ax.plot(Ts, [last[f"log10_excess_{name}"] + (T - last["T"]) * math.log10(rate) for T in Ts], ":",
                    label=f"predicted rate {name} ({number(rate)}/layer)")
        ax.set_xlabel("depth T")
        ax.set_ylabel("log10 excess risk")
        ax.legend()
        path = out / "limits_untied.png"
        save_figure(fig, path, dpi=120, bbox_inches="tight")
        res["figures"] = [str(path)]
    return res


def unbounded(law, t_max: int) -> dict:
    import numpy as np

    from mmicl.numerics.unbounded import MAX_DEPTH_UNBOUNDED, alpha_T_unbounded

    Ts = [T for T in (1, 2, 5, 10, 20, 50, 100, 200, 500) if T <= min(t_max, MAX_DEPTH_UNBOUNDED)]
    rows = [{"T": T, "alpha_T": (a := alpha_T_unbounded(law, T)), "T_alpha_T": T * a} for T in Ts]
    tail = rows[-3:]
    slope = float(np.polyfit(np.log([r["T"] for r in tail]), np.log([r["alpha_T"] for r in tail]), 1)[0])
    return {"law": law.spec(), "model": "one", "alpha_star": 0.0,
            "hypothesis": {"bounded support": False,
                           "message": "the T → ∞ statements need s_hi < ∞ (hypothesis not met); α_T exists at "
                                      "every finite T because every moment of s is finite"},
            "rows": rows, "decay": {"log_slope_last_points": slope, "Ts": [r["T"] for r in tail]},
            "correction": None, "excess_decay_per_layer": None, "checks": []}


@click.command("limits", cls=Command)
@law_options
@click.option("--model", type=click.Choice(["one", "two", "untied"]), default=None,
              help="one (default): the tied one-parameter LCA (derived expansion); two: the two-parameter LCA "
                   "(measured rates); untied: one α per layer (the optimal schedule).  --model M is "
                   "--variant param=M.")
@click.option("--T-max", "t_max", type=IntIn(1, MAX_T), default=None,
              help=f"Largest depth (one: 10^6, at most {MAX_T}; two: {MAX_T_TWO}; untied: {MAX_T_UNTIED}).")
@click.option("--basin", type=IntIn(0, 41), default=0, show_default=True,
              help="--model two: run the gradient flow from an N×N grid of starts at T = 5, 10, 20 and count "
                   "how many reach the minimiser (0: skip; minutes for N ≈ 10).")
@click.option("--out", type=WritablePath("folder"), default=None, help="Folder for the figures and limits.json.")
@variant_option("With readout, f0 or skip other than the default: the variant's floor and least excess.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def limits(law, model, t_max, basin, out, variant, as_json):
    """The T → ∞ limit of the LCA for LAW: how α_T approaches α* (the derived leading term, its
    form by the law's end behaviour, checked against computed α_T), the excess risk's decay per
    layer (tied and untied), and the minimax reading of α*.

    \b
    JSON (--model one): {"alpha_star", "ends", "correction": {"form", "coefficient",
    "log_coefficient", "second", "third"}, "excess": {"rate_per_layer", "power", "prefactor"},
    "excess_decay_per_layer": {"tied", "untied"}, "minimax", "rows", "checks": [{"name",
    "passed", "detail", "numbers"}]}.  A law with unbounded support gets α_T at finite depths
    and "hypothesis": the T → ∞ statements do not apply.

    \b
    --model M is an alias of --variant param=M (both: the variant's param, one where it does not
    say, must be M).  With --variant V whose readout, f0 or skip is not the default (param one or
    two): V's floor (numerics.variants.floor: the least excess as T → ∞, over the stable and the
    1/T-scaled families) and the least excess at T = 10, 100, 1000 (each capped by --T-max) with
    its gap to the floor; the T → ∞ expansion above is derived for the default readout, f0 and skip
    only.  JSON: {"law", "variant", "model": "variant", "floor": {"value", "regime", "phi": {name:
    value}, "stable", "scaled"}, "rows": [{"T", "theta": {name: value}, "excess", "unique",
    "gap_to_floor"}], "note", "checks": []}."""

    variant = variant_or_alias(variant, "--model", model, model)
    if not plain_variant(variant):
        res = variant_limits(law, variant, t_max or 1000, basin)
        if out is not None:
            write_json(Path(out) / "limits_variant.json", res)
        emit_json(res) if as_json else _print_variant(res)
        return
    model = variant.param if variant is not None else "one"
    sl = law.s_law()
    if not sl.is_bounded:
        if model != "one":
            raise click.BadParameter(f"--model {model} needs a bounded law; {sl.spec()} is unbounded",
                                     param_hint="--model")
        res = unbounded(law, t_max or 500)
    elif model == "one":
        res = one_parameter(law, t_max or MAX_T, out)
    elif model == "two":
        res = two_parameter(law, min(t_max or MAX_T_TWO, MAX_T_TWO), basin)
    else:
        res = untied_model(law, min(t_max or MAX_T_UNTIED, MAX_T_UNTIED), out)
    if out is not None:
        write_json(Path(out) / f"limits_{model}.json", res)
    if as_json:
        emit_json(res)
        return
    _print(res)


def variant_limits(law, variant, t_max: int, basin: int) -> dict:
    """``limits --variant``: the floor and the least excess at depths 10, 100, 1000 (capped by ``t_max``)."""
    if variant.param == "untied":
        raise click.BadParameter(f"{variant.short}: the untied LCA's limits are computed with the default readout, "
                                 "f0 and skip ('mmicl limits --model untied')", param_hint="--variant")
    if basin:
        raise click.BadParameter("--basin counts the default two-parameter LCA's flows; it cannot go with "
                                 f"--variant {variant.short}", param_hint="--basin")
    fl = variant_floor(law, variant)
    rows = [{"T": T, **(m := variant_minimiser(law, T, variant)), "gap_to_floor": m["excess"] - fl["value"]}
            for T in sorted({min(T, t_max) for T in (10, 100, 1000)})]
    return {"law": law.spec(), "variant": variant.text, "model": "variant", "floor": fl, "rows": rows,
            "note": "the least excess at depth T tends to the floor as T → ∞ (claim variant.floor); the T → ∞ "
                    "expansion of the default LCA (α* − α_T, the excess's decay per layer) is not derived for "
                    "variants", "checks": []}


def _print_variant(res: dict) -> None:
    echo = click.echo
    echo(f"{res['law']}  (variant {res['variant']})")
    echo(f"  {floor_line(res['floor'], num=number)}")
    for r in res["rows"]:
        gap = r["gap_to_floor"]
        echo(f"  T={r['T']:>5}: least excess {show_excess(r, num=number)} (gap to the floor "
             f"{'+' if gap >= 0 else ''}{number(gap)}) at {show_named(r['theta'], num=number)}")
    echo(f"  note: {res['note']}")


def correction_text(c: dict) -> str:
    """α* − α_T as the text ``mmicl limits`` prints, from the JSON's "correction": ``0.08613/T −
    0.1057/T² + …`` or ``(−0.0163·log T + 0.00211)/T + (−0.00125·log²T + 0.0126·log T − 0.0312)/T² +
    …`` (``number``'s 4 significant digits, each sign once); ``+ o(1/T)`` where the second order is not
    derived."""
    powers = ("", "·log T", "·log²T", "·log³T")
    if c["form"] == "c/T":
        second = [] if c["second"] is None else [(c["second"][0], "/T²")]
        return signed_sum([(c["coefficient"], "/T"), *second]) + (" + …" if second else " + o(1/T)")
    first = f"({signed_sum([(c['log_coefficient'], '·log T'), (c['coefficient'], '')])})/T"
    if c["second"] is None:
        return first + " + o(1/T)"
    second = signed_sum([(v, powers[j]) for j, v in reversed(list(enumerate(c["second"])))])
    return f"{first} + ({second})/T² + …"


def _print(res: dict) -> None:
    """The text of ``mmicl limits``: every number by ``number`` (4 significant digits, a true minus
    sign); the JSON keeps the full float64 values."""
    echo = click.echo
    echo(f"{res['law']}  (model {res['model']})")
    if res.get("hypothesis"):
        echo(f"  α* = 0; {res['hypothesis']['message']}")
        for r in res["rows"]:
            echo(f"  T={r['T']:>5}: α_T = {number(r['alpha_T'])}   T·α_T = {number(r['T_alpha_T'])}")
        echo(f"  log-log slope of α_T over T = {res['decay']['Ts']}: {number(res['decay']['log_slope_last_points'])}")
        return
    if res["model"] == "one":
        echo(f"  α* = {number(res['alpha_star'])}, ρ = {number(res['rho'])}")
        for side in ("lo", "hi"):
            e = res["ends"][side]
            echo(f"  {side} end s = {number(e['value'])}: {e['description']} (exponent b = {number(e['b'])})")
        echo(f"  α* − α_T = {correction_text(res['correction'])}")
        if res["correction"]["second_reason"]:
            echo(f"  (second order not derived: {res['correction']['second_reason']})")
        x = res["excess"]
        untied = res["excess_decay_per_layer"]["untied"]
        echo(f"  excess(α_T) ≈ {number(x['zeta2'])}·{number(x['prefactor'])}·ρ^(2T)·(2T)^({number(-x['power'])}); "
             f"per layer: tied {number(res['excess_decay_per_layer']['tied'])}, untied "
             f"{'—' if untied is None else number(untied)}")
        for r in res["rows"]:
            echo(f"  T={r['T']:>8}: T·(α*−α_T) computed {number(r['T_gap_computed'])}   derived "
                 f"{number(r['T_gap_expansion'])}   relative difference {_relative(r)}")
    elif res["model"] == "two":
        g = res["gamma_decay"]
        echo(f"  γ_T = α_T + β_T falls by {number(g['rate_per_layer'])} per layer (ρ = {number(res['rho'])}); "
             f"T·(α* − α_T) → {number(res['T_gap_limit']['c'])} (one-parameter: "
             f"{number(res['T_gap_limit']['one_parameter_c'])})")
        for b in res.get("basin", []):
            echo(f"  basin at T={b['T']}: {b['counts'].get('rest', 0)}/{b['grid'] ** 2} starts reach the minimiser; "
                 f"{b['counts']}")
    else:
        d = res["excess_decay_per_layer"]
        m = d["untied_measured"]
        echo(f"  excess per layer: tied {number(d['tied'])}, untied predicted {number(d['untied'])}, measured "
             + (f"{number(10 ** m['log10_rate'])} over T = {m['T']}" if m else "— (the optimum is exactly 0: atoms)"))
        for r in res["rows"]:
            u = "exactly 0" if r["exact_zero"] else f"10^{number(r['log10_excess_untied'])}"
            echo(f"  T={r['T']:>4}: untied {u}   tied 10^{number(r['log10_excess_tied'])}")
    for ch in res["checks"]:
        verdict = {True: "holds", False: "FAILS", None: "inconclusive"}[ch["passed"]]
        echo(f"  [{verdict}] {ch['name']}: {ch['detail']}")
