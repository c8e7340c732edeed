"""Commands for the theory: ``alpha`` (one-parameter LCA) and ``flow2`` (two-parameter flow)."""
from __future__ import annotations

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from mmicl.numerics import flows, lca

from mmicl.commands.common import (MAX_DEPTH, MAX_FLOW2_DEPTH, START_BOX, Command, RealIn, depth_type, emit_json, floor_line,
                     law_options, named, show_excess, show_named, variant_floor, variant_minimiser, variant_names, variant_option,
                     plain_variant)
from mmicl.numerics.variants import gradient_flow
from mmicl.numerics.strict_json import null_reason_key

__all__ = ["START", "alpha", "flow2"]


START = RealIn(-START_BOX, START_BOX, why="α* lies in (0, 1]; from farther the flow takes minutes to hours")


@click.command(cls=Command)
@law_options
@click.option("--T", "Ts", type=depth_type(MAX_DEPTH), multiple=True, metavar="T [T ...]",
              help=f"Depths from 1 to {MAX_DEPTH}: --T 1 10 100 (default 1 10 100 1000).")
@click.argument("more_ts", nargs=-1, metavar="")  # --T 1 10 100: the depths after the first
@click.option("--alpha0", type=START, default=0.0, show_default=True,
              help=f"Start of the gradient flow, in [-{START_BOX:g}, {START_BOX:g}].")
@variant_option("param=one or two; default: the one-parameter LCA.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def alpha(ctx, law, Ts, more_ts, alpha0, variant, as_json):
    """α* and, for each depth T: α_T (root of dL/dα), the excess risk at α_T, the flow's limit.

    \b
    JSON: {"schema_version", "alpha_star", "law", "rows": [{"T", "alpha", "excess", "log10_excess",
    "flow_alpha", "flow_converged", "flow_clock"}]}.  "excess" is null where float64 cannot hold it
    (see log10_excess), with "excess_null_reason" next to it.

    \b
    With --variant V (other than the default; param=one or two; depths default 1 10 100): per T the
    minimiser θ_T of V's population loss (numerics.variants.minimise, a global search), the excess
    there and the end of V's gradient flow from 0 (from --alpha0 for param=one), and V's floor as
    T → ∞.  JSON: {"schema_version", "variant", "law", "params": [names], "floor": {"value",
    "regime", "phi": {name: value}, "stable", "scaled"}, "rows": [{"T", "theta": {name: value},
    "excess", "unique", "flow": {"params": {name: value}, "start", "converged", "t_end", "excess",
    "reason"}}]}.  φ is the minimiser in the family of the floor's regime (τ = T·α for one
    parameter; c = −α/β or a = T·α, b = T·β for two)."""
    try:
        more = [depth_type(MAX_DEPTH).convert(t, None, None) for t in more_ts]
    except click.BadParameter as e:
        raise click.BadParameter(e.message, param_hint="--T") from None
    if variant is not None and not variant.is_default:
        given = ctx.get_parameter_source("alpha0") != click.core.ParameterSource.DEFAULT
        return _alpha_variant(law, list(Ts) + more or [1, 10, 100], variant, alpha0 if given else None, as_json)
    Ts = list(Ts) + more or [1, 10, 100, 1000]
    law.require_bounded("the LCA theorems", "for α_T at finite depths of s = exponential(rate), run: mmicl limits "
                        f"--law '{law.spec()}'")  # a usage error naming --law
    a_star = lca.alpha_star(law)  # a law the theory cannot take (unbounded, s ≡ 0) is a LawError: a usage error
    rows = []
    for T in Ts:
        a = lca.alpha_T(law, T)
        ex = lca.excess_risk_scaled(law, T, a)
        fl = flows.gradient_flow_one(law, T, alpha0)
        exj = ex.to_json("excess")
        if ex.mantissa == 0:  # say why it is 0, not just that it is (never a silent 0: README)
            lo, hi = law.signal_bounds()
            exj["log10_excess_null_reason"] = (
                f"excess is exactly 0: s = {lo:g} on every prompt with m ≠ 0 and α_T = 1/(1+s) is the Bayes "
                "predictor" if lo == hi else
                "the float64 sum of the excess is 0 (below float64's resolution): its log10 is not known")
        rows.append({"T": T, "alpha": a, **exj,
                     "flow_alpha": fl.alpha, "flow_converged": fl.converged, "flow_clock": fl.clock})
    if as_json:
        emit_json({"alpha_star": a_star, "law": law.spec(), "rows": rows})
        return
    # text from the user or computed (a law, a reason) is escaped: rich would read "[...]" as markup
    table = Table(title=escape(f"one-parameter LCA on {law.spec()}: α* = {a_star:.15g}"))
    for col in ("T", "α_T", "excess risk", "flow − α_T", "flow"):
        table.add_column(col, justify="right")
    for r in rows:
        ex = f"{r['excess']:.6e}" if r["excess"] is not None else f"10^{r['log10_excess']:.2f}"
        table.add_row(str(r["T"]), f"{r['alpha']:.15f}", ex, f"{r['flow_alpha'] - r['alpha']:.1e}",
                      ("ok" if r["flow_converged"] else "NOT converged") + f", {r['flow_clock']} clock")
    Console(width=110).print(table)


def _alpha_variant(law, Ts, variant, alpha0, as_json):
    """``alpha --variant``: θ_T, its excess and the flow from 0 (or ``alpha0``) per T; the floor."""

    if variant.param == "untied":
        raise click.BadParameter(f"{variant.short}: one α per layer is 'mmicl limits --model untied'",
                                 param_hint="--variant")
    if alpha0 is not None and variant.param != "one":
        raise click.BadParameter(f"a start for --variant {variant.short} needs α and β: use 'mmicl flow2 "
                                 f"--variant {variant.short} --alpha0 A --beta0 B'", param_hint="--alpha0")
    names = variant_names(variant)
    start = (alpha0,) if alpha0 is not None and names else None
    rows = []
    for T in Ts:
        fl = gradient_flow(law, T, variant, start=start)
        rows.append({"T": T, **variant_minimiser(law, T, variant),
                     "flow": {"params": named(names, fl.params), "start": named(names, start or [0.0] * len(names)),
                              "converged": fl.converged, "outcome": fl.outcome, "t_end": fl.t_end, "excess": fl.excess,
                              "reason": fl.reason}})
    res = {"variant": variant.text, "law": law.spec(), "params": list(names), "floor": variant_floor(law, variant),
           "rows": rows}
    if as_json:
        emit_json(res)
        return
    table = Table(title=escape(f"LCA variant {variant.short} on {law.spec()}"))
    for col in ("T", "θ_T", "excess at θ_T", "flow's end", "flow"):
        table.add_column(col, justify="right")
    for r in rows:
        f = r["flow"]
        table.add_row(str(r["T"]), escape(show_named(r["theta"]) if r["resolved"] else "not resolved"), show_excess(r),
                      escape(show_named(f["params"])),
                      escape(("ok" if f["converged"] else "NOT converged: ") + ("" if f["converged"] else f["reason"])))
    console = Console(width=130)
    console.print(table)
    console.print(escape(floor_line(res["floor"])))


@click.command(cls=Command)
@law_options
@click.option("--T", "T", type=depth_type(MAX_FLOW2_DEPTH), required=True, help=f"Depth, from 1 to {MAX_FLOW2_DEPTH}.")
@click.option("--alpha0", type=START, default=0.0, show_default=True, help=f"In [-{START_BOX:g}, {START_BOX:g}].")
@click.option("--beta0", type=START, default=0.0, show_default=True, help=f"In [-{START_BOX:g}, {START_BOX:g}].")
@variant_option("param=two; default: the two-parameter LCA.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def flow2(law, T, alpha0, beta0, variant, as_json):
    """End point of the two-parameter gradient flow (W^S = αI, W^V = βI) from (alpha0, beta0).

    JSON: {"alpha", "beta", "gamma" (= α + β, kept as its own coordinate), "converged", "t_end",
    "reason", "minimiser": [α_T, β_T]}.

    With --variant V (param=two; readout, f0 or skip other than the default): V's gradient flow
    (numerics.variants.gradient_flow) from (alpha0, beta0) and V's minimiser θ_T
    (numerics.variants.minimise).  JSON: {"variant", "params": [names], "alpha", "beta",
    "converged", "outcome" (minimum, stationary, moving, overflow, budget or solver-failure), "t_end",
    "excess", "reason", "minimiser": [θ_T], "minimiser_excess"}; "alpha" or
    "beta" is null where V's prediction does not depend on it (with "alpha_null_reason")."""
    if variant is not None and variant.param != "two":
        other = "'mmicl limits --model untied'" if variant.param == "untied" else f"'mmicl alpha --variant {variant.short}'"
        raise click.BadParameter(f"{variant.short} has param={variant.param}; flow2 is the two-parameter flow "
                                 f"(param=two): use {other}", param_hint="--variant")
    if not plain_variant(variant):
        return _flow2_variant(law, T, alpha0, beta0, variant, as_json)
    a_star = lca.alpha_star(law)  # an unbounded law or s ≡ 0: a LawError (usage error) before the flow starts
    r = flows.gradient_flow_two(law, T, alpha0, beta0)
    try:
        mini, why = lca.minimise_two(law, T), None
    except ValueError as e:  # T = 1 or s constant: no unique minimiser, a fact about the model
        mini, why = None, str(e)
    out = {"alpha": r.alpha, "beta": r.beta, "gamma": r.gamma, "converged": r.converged, "t_end": r.t_end,
           "reason": r.reason, "minimiser": list(mini) if mini else None}
    if why:
        out["minimiser_null_reason"] = why
    if as_json:
        emit_json(out)
        return
    Console().print(escape(f"flow from ({alpha0}, {beta0}) at T = {T}: α = {r.alpha:.15g}, β = {r.beta:.15g}, "
                           f"t_end = {r.t_end:.4g}; {r.reason}"))
    if why:
        Console().print(escape(f"no global minimiser: {why}"))
    if mini:
        Console().print(escape(f"global minimiser (α_T, β_T) = ({mini[0]:.15g}, {mini[1]:.15g}); "
                               f"α* = {a_star:.15g}"))


def _flow2_variant(law, T, alpha0, beta0, variant, as_json):
    """``flow2 --variant``: the variant's flow from (alpha0, beta0) and its minimiser."""

    names = variant_names(variant)
    starts = {"alpha": alpha0, "beta": beta0}
    r = gradient_flow(law, T, variant, start=[starts[n] for n in names])
    mini = variant_minimiser(law, T, variant)
    end = named(names, r.params)
    out = {"variant": variant.text, "params": list(names)}
    for key in ("alpha", "beta"):
        out[key] = end.get(key)
        if key not in end:
            out[null_reason_key(key)] = f"the prediction of {variant.short} does not depend on {key}"
    out.update({"converged": r.converged, "outcome": r.outcome, "t_end": r.t_end, "excess": r.excess, "reason": r.reason,
                "minimiser": list(mini["theta"].values()), "minimiser_excess": mini["excess"]})
    if as_json:
        emit_json(out)
        return
    Console().print(escape(f"{variant.short}: flow from ({alpha0}, {beta0}) at T = {T}: {show_named(end, 15)}, "
                           f"excess {r.excess:.6e}, t_end = {r.t_end:.4g}; {r.reason}"))
    Console().print(escape(f"minimiser θ_T: {show_named(mini['theta'], 15)}, excess {show_excess(mini)}"
                           + ("" if mini["resolved"] else f" ({mini['note']})")))
