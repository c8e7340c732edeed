"""``mmicl train``: train one model on sampled prompts and report its risk with standard errors."""
from __future__ import annotations

import click
import torch

from mmicl.numerics.models import MODELS, build_model

from mmicl.commands.common import (MAX_SAMPLES, MAX_STEPS, MAX_TRAIN_DEPTH, Command, ContextLength, IntIn, RealIn, WritablePath,
                     check_batch_memory, context_help, depth_type, device_option, emit_json, exclusive, law_options,
                     plain_variant, seed_option, variant_minimiser, variant_option, variant_or_alias)
from mmicl.numerics.strict_json import context_length_fields, null_reason_key
from mmicl.numerics.training import describe, estimate_risk, train
from mmicl.numerics.montecarlo import stationary_point
from mmicl.numerics.atomic import write_json
from mmicl.numerics.laws.scalar import LawError
from mmicl.numerics.mc_figures import make_figures

__all__ = ["STATIONARY_PROMPTS", "RISK_CHUNK", "ALIASES", "SMALL_START", "train_command", "train_figures_command"]


STATIONARY_PROMPTS = 200_000  # lca1/lca2: the sampled loss's minimiser (numerics.montecarlo.stationary_point)
RISK_CHUNK = 8192  # estimate_risk draws the fresh prompts in chunks of this many
ALIASES = {"lca1": "one", "lca2": "two"}  # --model lca1/lca2 is --variant param=one/two
SMALL_START = 0.01  # the start of a variant whose population gradient at 0 is exactly 0


@click.command("train", cls=Command)
@click.option("--model", "model_name", type=click.Choice(MODELS), default=None,
              help="The architecture (required without --variant); lca1 is --variant param=one, lca2 param=two.")
@law_options
@click.option("--T", "T", type=depth_type(MAX_TRAIN_DEPTH), default=5, show_default=True,
              help=f"Depth of the LCA, 1 to {MAX_TRAIN_DEPTH} (ignored for lsa).")
@click.option("--n", type=ContextLength(old_zero=True, old="0: the large-context limit, the old spelling"),
              default=2000, help=context_help("2000", "The old spelling --n 0 still means inf."))
@click.option("--steps", type=IntIn(1, MAX_STEPS), default=3000, show_default=True)
@click.option("--lr", type=RealIn(0.0, lo_open=True), default=3e-3, show_default=True)
@click.option("--batch", type=IntIn(1), default=1024, show_default=True,
              help="Prompts per step (batch × (d+1)² numbers must fit in 1 GiB).")
@click.option("--optimizer", type=click.Choice(["adam", "sgd"]), default="adam", show_default=True)
@device_option()
@seed_option()
@click.option("--samples", type=IntIn(2, MAX_SAMPLES, "at least 2 for a standard error"), default=200_000,
              show_default=True, help="Fresh prompts for the risk.")
@click.option("--checkpoint", type=WritablePath("file"), default=None,
              help="Resume from / save to this file.")
@click.option("--out", type=WritablePath("file"), default=None,
              help="Also write the result (with the trajectory) to this JSON file, atomically.")
@variant_option("Trains that variant of the LCA (tied weights: param=one or two).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def train_command(model_name, law, T, n, steps, lr, batch, optimizer, device, seed, samples, checkpoint, out, variant,
                  as_json):
    """Train MODEL on fresh prompts each step (Adam, cosine-annealed) and report its risk.

    For lca1/lca2 also the minimiser of the sampled loss at n and at n = ∞ (Newton on 200k prompts)
    and the stated error of the trained α: |optimisation error| + |finite-n bias| + 3 se.

    \b
    --variant V: --model may be left out (lca1 is param=one, lca2 param=two; another --model with
    --variant is refused).  V with readout, f0 or skip other than the default trains
    numerics.variant_models.VariantLCA(V, T) from every parameter 0, or from 0.01 in the sign of
    θ_T's entry where V's population gradient at 0 is exactly 0 (both sides evolved, F⁰ = 0: the
    flow cannot leave 0; the sign picks the basin), and reports "variant", "params" (the trained
    α/β), the risk and excess with standard errors as for every model, and "minimiser": θ_T of
    V's population loss at n = ∞ (numerics.variants.minimise) with its excess, for comparison."""

    if variant is None and model_name is None:
        raise click.UsageError("give --model (or --variant)")
    if variant is not None:
        if model_name not in (None, *ALIASES):
            raise click.UsageError(f"--model {model_name} is not an LCA variant; --variant goes with --model lca1 "
                                   "or lca2 (or no --model)")
        variant = variant_or_alias(variant, "--model", model_name, ALIASES.get(model_name))
        if variant.param == "untied":
            raise click.BadParameter(f"{variant.short}: train has tied weights (param=one or two)",
                                     param_hint="--variant")
        if not plain_variant(variant):
            return _train_variant(variant, law, T, n, steps, lr, batch, optimizer, device, seed, samples,
                                  checkpoint, out, as_json)
        model_name = {v: k for k, v in ALIASES.items()}[variant.param]
    layers = T if model_name in ("lca", "lca-noskip") else 1
    check_batch_memory(batch, law.d, "--batch", "--batch, d1/d2 or --T" if layers > 1 else "--batch or d1/d2",
                       "one training batch", copies=layers)
    check_batch_memory(min(samples, RISK_CHUNK), law.d, "--d1/--d2", "d1/d2 (--d1, --d2 or d1=, d2= in LAW)",
                       "one chunk of the risk estimate")
    if model_name in ("lca1", "lca2"):
        check_batch_memory(STATIONARY_PROMPTS, law.d, "--d1/--d2", "d1/d2 (--d1, --d2 or d1=, d2= in LAW)",
                           f"{model_name}'s stationary point (float64)", float_bytes=8)
    torch.set_num_threads(1)
    ctx = n  # None: the large-context limit (--n inf, or the old --n 0)
    model = build_model(model_name, law.d, T, law, seed)
    res = train(model, law, n=ctx, steps=steps, batch=batch, lr=lr, optimizer=optimizer, schedule="cosine",
                seed=seed, device=device, checkpoint=checkpoint, progress=not as_json)
    est = estimate_risk(model, law, n=ctx, samples=samples, seed=seed + 1, device=device)
    result = {"model": model_name, "params": describe(model), "risk": est.risk, "risk_se": est.risk_se,
              "excess": est.excess, "excess_se": est.excess_se, **_bayes(law), "steps": res.steps_done,
              "device": device, **context_length_fields(ctx), "T": T, "law": law.spec(), "seed": seed,
              "diverged": res.diverged, "message": res.message}
    if model_name in ("lca1", "lca2") and not res.diverged:

        at_n = stationary_point(model, law, n=ctx, seed=seed + 2, device=device)
        at_inf = stationary_point(model, law, n=None, seed=seed + 2, device=device)
        trained = float(model.alpha.detach())
        opt_err, bias = trained - at_n.theta[0], at_n.theta[0] - at_inf.theta[0]
        result["stationary"] = {"theta_n": at_n.theta, "se_n": at_n.se, "theta_inf": at_inf.theta,
                                "se_inf": at_inf.se, "optimisation_error_alpha": opt_err,
                                "finite_n_bias_alpha": bias,
                                "stated_error_alpha": abs(opt_err) + abs(bias) + 3 * at_n.se[0] + 3 * at_inf.se[0]}
    _report(result, res, out, as_json)


def _report(result: dict, res, out, as_json: bool) -> None:
    """Write, print, and exit 1 where training diverged."""

    if out is not None:
        write_json(out, {**result, "history": res.history})
    if as_json:
        emit_json(result)
    else:
        for k, v in result.items():
            click.echo(f"{k}: {v}")
    if res.diverged:  # a result, not a usage error: status 1 (2 is click's for bad input)
        click.echo(f"training diverged: {res.message}", err=True)
        raise SystemExit(1)


def _bayes(law) -> dict:
    from mmicl.numerics.lca import bayes_risk

    try:
        return {"bayes_risk": bayes_risk(law)}
    except LawError as e:  # unbounded law: no quadrature
        return {"bayes_risk": None, null_reason_key("bayes_risk"): f"unavailable: {e}"}


def _variant_start(law, T: int, variant, theta: dict) -> list[float]:
    """Every parameter 0, or ``SMALL_START`` in the sign of θ_T's entry where the population gradient
    at 0 is exactly 0 (the flow could not leave 0)."""
    import numpy as np

    from mmicl.numerics.variants import VariantLoss

    if np.any(VariantLoss(law, T, variant).jet(np.zeros(len(theta)))[1]):
        return [0.0] * len(theta)
    return [SMALL_START * (1.0 if v >= 0 else -1.0) for v in theta.values()]


def _train_variant(variant, law, T, n, steps, lr, batch, optimizer, device, seed, samples, checkpoint, out, as_json):
    from mmicl.numerics.variant_models import VariantLCA

    check_batch_memory(batch, law.d, "--batch", "--batch or d1/d2", "one training batch")
    check_batch_memory(min(samples, RISK_CHUNK), law.d, "--d1/--d2", "d1/d2 (--d1, --d2 or d1=, d2= in LAW)",
                       "one chunk of the risk estimate")
    mini = variant_minimiser(law, T, variant)
    if not mini["theta"]:
        raise click.BadParameter(f"{variant.short} has no parameters (it predicts 0): nothing to train",
                                 param_hint="--variant")
    start = _variant_start(law, T, variant, mini["theta"])
    torch.set_num_threads(1)
    ctx = n  # None: the large-context limit (--n inf, or the old --n 0)
    model = VariantLCA(variant, T, start)
    res = train(model, law, n=ctx, steps=steps, batch=batch, lr=lr, optimizer=optimizer, schedule="cosine",
                seed=seed, device=device, checkpoint=checkpoint, progress=not as_json)
    est = estimate_risk(model, law, n=ctx, samples=samples, seed=seed + 1, device=device)
    result = {"model": "variant", "variant": variant.text, "params": model.params(),
              "start": dict(zip(model.names, start)), "risk": est.risk, "risk_se": est.risk_se,
              "excess": est.excess, "excess_se": est.excess_se, **_bayes(law), "steps": res.steps_done,
              "device": device, **context_length_fields(ctx), "T": T, "law": law.spec(), "seed": seed,
              "diverged": res.diverged, "message": res.message, "minimiser": mini}
    _report(result, res, out, as_json)


@click.command("train-figures", cls=Command)
@click.option("--out", type=WritablePath("folder"), required=True,
              help="Folder for the PNGs and the JSON behind each.")
@click.option("--quick", is_flag=True, help="Small sizes: under about a minute on one CPU thread.")
@click.option("--tiny", is_flag=True, help="Smoke-test sizes (seconds; the numbers mean nothing).")
@seed_option()
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.pass_context
def train_figures_command(ctx, out, quick, tiny, seed, as_json):
    """Figures of the Monte Carlo studies (law s=uniform(0.5,4), T = 5): the finite-n bias of the SAA
    minimiser α_n against n, SGD against the gradient flow at t = step × lr, and the full-matrix LCA's
    invariants RS, GV over training.  Writes finite_n_bias, sgd_vs_flow, full_matrix (.png + .json)."""
    exclusive(ctx, "--quick", "--tiny")

    torch.set_num_threads(1)
    summary = make_figures(out, size="tiny" if tiny else "quick" if quick else "full", seed=seed)
    if as_json:
        emit_json(summary)
    else:
        for name, f in summary["files"].items():
            click.echo(f"{name}: {f['png']} + {f['json']} ({f['seconds']} s)")

