"""``mmicl lsa``: the best single-layer LSA for a task law, its gap to Bayes, and comparisons."""
from __future__ import annotations

import click
import numpy as np

from mmicl.commands.common import MAX_MC, MAX_PROFILE, Command, ContextLength, IntIn, context_help, emit_json, law_options, seed_option

__all__ = ["lsa"]



@click.command("lsa", cls=Command)
@law_options
@click.option("--n", "n", type=ContextLength(old="omit --n for the large-context limit, as before"), default=None,
              help=context_help("inf", "Leaving --n out (the old spelling) is inf too."))
@click.option("--json", "as_json", is_flag=True, help="Print a JSON object.")
@click.option("--profile", "profile", type=IntIn(2, MAX_PROFILE), default=None, metavar="K",
              help="Also the per-prompt excess risk at K values of s across the support (s-laws).")
@click.option("--compare", is_flag=True,
              help="Also Bayes, best LSA and the one-parameter LCA at T = 1, 2, 5, 10, 20 (n → ∞).")
@click.option("--mc", type=IntIn(0, MAX_MC), default=0, show_default=True,
              help="With --compare: Monte Carlo prompts per model (0: theory only).")
@seed_option(help="Seed of the Monte Carlo of --compare --mc (0 to 2^32 − 1).")
def lsa(law, n, as_json, profile, compare, mc, seed):
    """The best LSA ŷ = x_qᵀ Γ (1/n) Σ y_i x_i for LAW: Γ (a scalar when Γ = γI), the gap (excess risk
    over the task-known Bayes risk), the Bayes risk and the LSA risk."""
    if mc and not compare:
        raise click.BadParameter(f"{mc} Monte Carlo prompts are only drawn with --compare; add --compare or "
                                 "drop --mc", param_hint="--mc")
    if profile and law.s is None:
        raise click.BadParameter("needs an s-law (s=…); per-modality laws (sv=…; sr=…) have 2-D profiles",
                                 param_hint="--profile")
    from mmicl.numerics.lsa import best_lsa, excess_given_norms, norm_blocks
    from mmicl.numerics.lsa_training import comparison

    best = best_lsa(law, n)  # an unbounded law is a LawError: a usage error naming it
    out = best.to_json()
    if best.undetermined:
        out["undetermined_coordinates"] = list(best.undetermined)
    if profile:
        lo, hi = law.s_bounds()
        s = np.linspace(lo, hi, profile)
        e = excess_given_norms(norm_blocks(law), best.gamma, s[:, None], best.n) * law.zeta.second_moment()
        out["profile"] = [{"s": float(a), "excess": float(b)} for a, b in zip(s, e)]
    if compare:
        import torch

        torch.set_num_threads(1)
        out["comparison"] = comparison(law, mc_batch=mc, seed=seed)
    if as_json:
        emit_json(out)
        return
    g = out["gamma"]
    click.echo(f"law        {out['law']}")
    click.echo(f"n          {'inf (the large-context limit n → ∞)' if out['n'] is None else out['n']}")
    click.echo(f"gamma      {g!r}" if not isinstance(g, list) else "gamma      diag(" + ", ".join(
        f"{row[i]:.12g}" for i, row in enumerate(g)) + ")")
    for k in ("gap", "bayes_risk", "lsa_risk"):
        click.echo(f"{k:<10} {out[k]:.15g}")
    for row in out.get("profile", []):
        click.echo(f"  s={row['s']:<10.6g} excess={row['excess']:.6g}")
    for row in out.get("comparison", []):
        mcx = row.get("mc_excess")
        extra = f"   MC {mcx['mean']:.4g} ± {mcx['se']:.2g}" if mcx else ""
        click.echo(f"  {row['model']:<10} risk={row['risk']:.12g} excess={row['excess']:.6g}{extra}")

