"""``mmicl testbed``: train small decoders on the synthetic in-context classification data.

``train`` trains ``--seeds`` models of one setting as one ensemble and prints the final metrics
(mean and per seed) and, with ``--json``, the metric curves; ``sweep`` varies one knob (a data knob
goes in one ensemble, a model knob gives one ensemble per value).  ``--quick`` starts from the
small CPU size of the registry claims, otherwise from the full (GPU) size; any option overrides.
"""
from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path

import click
import torch

from mmicl.numerics.atomic import write_json
from mmicl.numerics.testbed.config import TestbedConfigError
from mmicl.numerics.testbed.experiments import Arm, run_arms
from mmicl.numerics.testbed.figures import plot_against, plot_curves
from mmicl.numerics.testbed.stats import t_interval

from .common import emit_json

DATA_KNOBS = {"K": "K", "N": "N", "D": "D", "L": "L", "B": "B", "pB": "p_bursty", "eps": "eps", "zipf": "zipf"}
MODEL_KNOBS = {"layers": "layers", "heads": "heads", "width": "width", "pos": "pos"}
TRAIN_KNOBS = {"steps": "steps", "batch": "batch", "lr": "lr", "eval_every": "eval_every"}


def testbed_options(f):
    opts = [
        click.option("--quick", is_flag=True, help="Start from the small CPU size (minutes on 2 cores)."),
        click.option("--K", "K", type=int), click.option("--N", "N", type=int), click.option("--D", "D", type=int),
        click.option("--L", "L", type=int), click.option("--B", "B", type=int),
        click.option("--pB", "pB", type=float, help="Probability that a training sequence is bursty."),
        click.option("--eps", type=float, help="Within-class noise ε."),
        click.option("--zipf", type=float, help="Zipf exponent α of the class law."),
        click.option("--layers", type=int), click.option("--heads", type=int), click.option("--width", type=int),
        click.option("--pos", type=click.Choice(["ape", "rope", "alibi"])),
        click.option("--steps", type=int), click.option("--batch", type=int), click.option("--lr", type=float),
        click.option("--eval-every", "eval_every", type=int),
        click.option("--seeds", type=int, default=None, help="Models per setting (seeds 0..n-1 offset by --seed)."),
        click.option("--seed", type=int, default=0, show_default=True),
        click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto", show_default=True),
        click.option("--threads", type=int, default=1, show_default=True, help="torch CPU threads."),
        click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
                     help="Folder for the JSON results and the figures."),
        click.option("--json", "as_json", is_flag=True, help="Print the results (with curves) as JSON."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def _settings(quick, seeds, **kw):
    from ..claims.testbed import FULL, QUICK

    base = QUICK if quick else FULL
    pick = lambda table: {v: kw[k] for k, v in table.items() if kw.get(k) is not None}  # noqa: E731
    try:
        data = replace(base.data, **pick(DATA_KNOBS))
        model = replace(base.model, **pick(MODEL_KNOBS))
        train = replace(base.train, **pick(TRAIN_KNOBS))
    except TestbedConfigError as e:
        raise click.BadParameter(str(e)) from None
    if model.pos == "ape" and model.ape_slots < data.seq_len:
        model = replace(model, ape_slots=data.seq_len + data.seq_len // 2)
    return data, model, train, seeds or base.seeds


def _device(choice: str) -> str:
    if choice == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if choice == "cuda" and not torch.cuda.is_available():
        raise click.BadParameter("no CUDA device here; use --device cpu", param_hint="--device")
    return choice


def _summary(results, arm: str) -> dict:
    out = {}
    for m in ("acc_icl", "acc_flip", "acc_iwl", "iwl_context_rate", "induction_max", "prev_token_max"):
        iv = t_interval(results.final(m, arm))
        ivj = iv.to_json()
        out[m] = {"mean": round(iv.mean, 4),
                  "interval95": None if ivj["lo"] is None else [round(iv.lo, 4), round(iv.hi, 4)],
                  "seeds": [round(float(v), 4) for v in results.final(m, arm)]}
        if ivj["lo"] is None:
            out[m]["interval95_null_reason"] = ivj["lo_null_reason"]
    out["peak_acc_icl"] = [round(float(v), 4) for v in results.peak("acc_icl", arm)]
    return out


@click.group()
def testbed():
    """Synthetic in-context classification: ICL vs in-weights learning in small transformers."""


@testbed.command()
@testbed_options
def train(quick, seeds, seed, device, threads, out, as_json, **kw):
    """Train --seeds models of one setting as one ensemble; print the final metrics."""
    torch.set_num_threads(threads)
    data, model, tr, n = _settings(quick, seeds, **kw)
    r = run_arms(model, [Arm("run", data)], [seed * 100 + s for s in range(n)], tr, device=_device(device),
                 data_seed=seed, progress=not as_json)
    result = {"data": asdict(data), "model": asdict(model), "train": asdict(tr), "seeds": r.seeds,
              "seconds": round(r.run.history.seconds, 2),
              "model_steps_per_s": round(tr.steps * n / r.run.history.seconds, 1),
              "final": _summary(r, "run"), "history": r.run.history.to_json()}
    if out is not None:
        write_json(Path(out) / "testbed_train.json", result)
        plot_curves(r, Path(out) / "testbed_train.png", ("acc_icl", "acc_iwl", "acc_flip", "induction_max"))
    if as_json:
        emit_json(result)
    else:
        click.echo(f"{n} models, {tr.steps} steps, {result['seconds']} s ({result['model_steps_per_s']} model-steps/s)")
        for m, v in result["final"].items():
            click.echo(f"  {m:18s} {v}")


@testbed.command()
@click.option("--knob", required=True, type=click.Choice(sorted(DATA_KNOBS) + sorted(MODEL_KNOBS)))
@click.option("--values", required=True, help="Comma-separated values of the knob, e.g. 64,512,16384.")
@testbed_options
def sweep(knob, values, quick, seeds, seed, device, threads, out, as_json, **kw):
    """Vary one knob: a data knob trains one ensemble, a model knob one ensemble per value."""
    torch.set_num_threads(threads)
    cast = {"pos": str, "pB": float, "eps": float, "zipf": float}.get(knob, int)
    try:
        vals = [cast(v.strip()) for v in values.split(",") if v.strip()]
    except ValueError:
        raise click.BadParameter(f"cannot read {values!r} as values of {knob}", param_hint="--values") from None
    if not vals:
        raise click.BadParameter("give at least one value", param_hint="--values")
    dev = _device(device)
    seed_list = None
    rows = {}
    if knob in DATA_KNOBS:
        data, model, tr, n = _settings(quick, seeds, **kw)
        seed_list = [seed * 100 + s for s in range(n)]
        try:
            arms = [Arm(f"{knob}={v}", replace(data, **{DATA_KNOBS[knob]: v})) for v in vals]
        except TestbedConfigError as e:
            raise click.BadParameter(str(e), param_hint="--values") from None
        r = run_arms(model, arms, seed_list, tr, device=dev, data_seed=seed, progress=not as_json)
        rows = {a.name: (r, a.name) for a in arms}
    else:
        for v in vals:
            data, model, tr, n = _settings(quick, seeds, **{**kw, knob: v})
            seed_list = [seed * 100 + s for s in range(n)]
            r = run_arms(model, [Arm("run", data)], seed_list, tr, device=dev, data_seed=seed,
                         progress=not as_json, description=f"{knob}={v}")
            rows[f"{knob}={v}"] = (r, "run")
    result = {"knob": knob, "values": vals, "seeds": seed_list,
              "final": {name: _summary(r, arm) for name, (r, arm) in rows.items()},
              "histories": {name: r.run.history.to_json() for name, (r, _) in rows.items()}}
    if out is not None:
        write_json(Path(out) / f"testbed_sweep_{knob}.json", result)
        numeric = knob != "pos"
        plot_against(vals if numeric else list(range(len(vals))),
                     {m: [r.final(m, arm) for r, arm in rows.values()] for m in ("acc_icl", "acc_iwl", "acc_flip")},
                     Path(out) / f"testbed_sweep_{knob}.png", knob, f"sweep over {knob}", logx=knob == "K")
    if as_json:
        emit_json(result)
    else:
        for name, v in result["final"].items():
            click.echo(f"{name}: ICL {v['acc_icl']['mean']} IWL {v['acc_iwl']['mean']} flip {v['acc_flip']['mean']}")

