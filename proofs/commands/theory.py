"""Commands for the theory: ``alpha`` (one-parameter LCA) and ``flow2`` (two-parameter flow)."""
from __future__ import annotations

import click
from rich.console import Console
from rich.table import Table

from mmicl.numerics import flows, lca
from mmicl.numerics.laws import LawError

from .common import emit_json, law_options


def _fail(e: Exception):
    raise click.UsageError(str(e)) from None


@click.command()
@law_options
@click.option("--T", "Ts", type=int, multiple=True, metavar="T [T ...]",
              help="Depths: --T 1 10 100 (default 1 10 100 1000).")
@click.argument("more_ts", nargs=-1, type=int, metavar="")
@click.option("--alpha0", type=float, default=0.0, show_default=True, help="Start of the gradient flow.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def alpha(law, Ts, more_ts, alpha0, as_json):
    """α* and, for each depth T: α_T (root of dL/dα), the excess risk at α_T, the flow's limit.

    \b
    JSON: {"schema_version", "alpha_star", "law", "rows": [{"T", "alpha", "excess", "log10_excess",
    "flow_alpha", "flow_converged", "flow_clock"}]}.  "excess" is null where float64 cannot hold it
    (see log10_excess), with "excess_null_reason" next to it."""
    Ts = list(Ts) + list(more_ts) or [1, 10, 100, 1000]
    try:
        a_star = lca.alpha_star(law)
        rows = []
        for T in Ts:
            a = lca.alpha_T(law, T)
            ex = lca.excess_risk_scaled(law, T, a)
            fl = flows.gradient_flow_one(law, T, alpha0)
            rows.append({"T": T, "alpha": a, **ex.to_json("excess"),
                         "flow_alpha": fl.alpha, "flow_converged": fl.converged, "flow_clock": fl.clock})
    except (LawError, ValueError) as e:
        _fail(e)
    if as_json:
        emit_json({"alpha_star": a_star, "law": law.spec(), "rows": rows})
        return
    table = Table(title=f"one-parameter LCA on {law.spec()}: α* = {a_star:.15g}")
    for col in ("T", "α_T", "excess risk", "flow − α_T", "flow"):
        table.add_column(col, justify="right")
    for r in rows:
        ex = f"{r['excess']:.6e}" if r["excess"] is not None else f"10^{r['log10_excess']:.2f}"
        table.add_row(str(r["T"]), f"{r['alpha']:.15f}", ex, f"{r['flow_alpha'] - r['alpha']:.1e}",
                      ("ok" if r["flow_converged"] else "NOT converged") + f", {r['flow_clock']} clock")
    Console(width=110).print(table)


@click.command()
@law_options
@click.option("--T", "T", type=int, required=True, help="Depth.")
@click.option("--alpha0", type=float, default=0.0, show_default=True)
@click.option("--beta0", type=float, default=0.0, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def flow2(law, T, alpha0, beta0, as_json):
    """End point of the two-parameter gradient flow (W^S = αI, W^V = βI) from (alpha0, beta0).

    JSON: {"alpha", "beta", "gamma" (= α + β, kept as its own coordinate), "converged", "t_end",
    "reason", "minimiser": [α_T, β_T]}."""
    try:
        r = flows.gradient_flow_two(law, T, alpha0, beta0)
    except (LawError, ValueError) as e:
        _fail(e)
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
    Console().print(f"flow from ({alpha0}, {beta0}) at T = {T}: α = {r.alpha:.15g}, β = {r.beta:.15g}, "
                    f"t_end = {r.t_end:.4g}; {r.reason}")
    if why:
        Console().print(f"no global minimiser: {why}")
    if mini:
        Console().print(f"global minimiser (α_T, β_T) = ({mini[0]:.15g}, {mini[1]:.15g}); "
                        f"α* = {lca.alpha_star(law):.15g}")
