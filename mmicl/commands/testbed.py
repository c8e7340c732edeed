"""``mmicl testbed``: train small decoders on the synthetic in-context classification data.

``train`` trains ``--seeds`` models of one setting as one ensemble and prints the final metrics
(mean and per seed) and, with ``--json``, the metric curves; ``sweep`` varies one knob (a data knob
goes in one ensemble, a model knob gives one ensemble per value).  ``--quick`` starts from the
small CPU size of the registry claims (``QUICK`` of ``proofs/claims/testbed/sizes.py``), otherwise
from the full (GPU) size (``FULL``); any option overrides.
"""
from __future__ import annotations

import os
from dataclasses import asdict, replace
from pathlib import Path

import click

from mmicl.commands.common import MAX_STEPS, SEED, Group, IntIn, RealIn, WritablePath, device_option, emit_json
from mmicl.numerics.testbed.config import TestbedConfigError
from mmicl.numerics.atomic import write_json
from mmicl.numerics.runs.store import Store

__all__ = ["DATA_KNOBS", "MODEL_KNOBS", "TRAIN_KNOBS", "MAX_SEEDS", "MAX_ACTIVATIONS", "KNOB_TYPES", "threads_option",
           "pick_metrics", "testbed_options", "options_named", "check_size", "UNIMODAL_METRICS", "metric_entry",
           "run_summary", "testbed", "train", "comma_list", "sweep", "plateau"]


DATA_KNOBS = {"K": "K", "N": "N", "D": "D", "L": "L", "B": "B", "pB": "p_bursty", "eps": "eps", "zipf": "zipf"}
MODEL_KNOBS = {"layers": "layers", "heads": "heads", "width": "width", "pos": "pos"}
TRAIN_KNOBS = {"steps": "steps", "batch": "batch", "lr": "lr", "eval_every": "eval_every", "warmup": "warmup"}

MAX_SEEDS = 256
MAX_ACTIVATIONS = 2**28
"""Models × batch × tokens × width × layers (the residual streams alone, a lower bound on the memory
a step needs) and models × K × D (the class means) may each be at most this many floats (1 GiB)."""

# the allowed value of each knob (the full size is K=1024, D=64, width 64, 2 layers, 20000 steps)
KNOB_TYPES: dict[str, click.ParamType] = {
    "K": IntIn(1, 2**20, "classes"), "N": IntIn(1, 1024, "items per sequence"), "D": IntIn(1, 4096, "input dimension"),
    "L": IntIn(1, 2**16, "labels"), "B": IntIn(1, 1024, "burstiness"),
    "pB": RealIn(0.0, 1.0, why="a probability"), "eps": RealIn(0.0, 1e3),
    "zipf": RealIn(0.0, 8.0, why="from about 12 on, class 0 holds so much mass that the IWL evaluation set "
                                 "cannot be drawn"),
    "layers": IntIn(1, 64), "heads": IntIn(1, 64), "width": IntIn(1, 4096),
    "pos": click.Choice(["ape", "rope", "alibi"]),
    "steps": IntIn(1, MAX_STEPS), "batch": IntIn(1, 65536), "lr": RealIn(0.0, lo_open=True),
    "eval_every": IntIn(1, MAX_STEPS), "warmup": IntIn(0, MAX_STEPS),
}


def threads_option():
    return click.option("--threads", type=IntIn(1, os.cpu_count() or 1, "this machine's CPU count"),
                        default=os.cpu_count() or 1, show_default=True,
                        help="torch CPU threads (default: every core of this machine).")


def pick_metrics(table: dict, kw: dict) -> dict:
    """The options given (not None) of ``table`` (option name → settings field), by field."""
    return {v: kw[k] for k, v in table.items() if kw.get(k) is not None}


def testbed_options(f):
    T = KNOB_TYPES
    opts = [
        click.option("--quick", is_flag=True, help="Start from the small CPU size (minutes on 2 cores)."),
        click.option("--K", "K", type=T["K"]), click.option("--N", "N", type=T["N"]),
        click.option("--D", "D", type=T["D"]), click.option("--L", "L", type=T["L"]), click.option("--B", "B", type=T["B"]),
        click.option("--pB", "pB", type=T["pB"], help="Probability that a training sequence is bursty."),
        click.option("--eps", type=T["eps"], help="Within-class noise ε."),
        click.option("--zipf", type=T["zipf"], help="Zipf exponent α of the class law."),
        click.option("--layers", type=T["layers"]), click.option("--heads", type=T["heads"]),
        click.option("--width", type=T["width"]), click.option("--pos", type=T["pos"]),
        click.option("--steps", type=T["steps"]), click.option("--batch", type=T["batch"]),
        click.option("--lr", type=T["lr"]), click.option("--eval-every", "eval_every", type=T["eval_every"]),
        click.option("--warmup", type=T["warmup"], help="Steps of linear learning-rate warm-up (0: none)."),
        click.option("--seeds", type=IntIn(1, MAX_SEEDS), default=None,
                     help="Models per setting (seeds 0..n-1 offset by --seed)."),
        click.option("--seed", type=SEED, default=0, show_default=True),
        device_option(),
        threads_option(),
        click.option("--out", type=WritablePath("folder"), default=None,
                     help="Folder for the JSON results and the figures."),
        click.option("--json", "as_json", is_flag=True, help="Print the results (with curves) as JSON."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def _settings(quick, seeds, **kw):

    from mmicl.proofs.claims.testbed.sizes import FULL, QUICK

    base = QUICK if quick else FULL
    try:
        data = replace(base.data, **pick_metrics(DATA_KNOBS, kw))
        model = replace(base.model, **pick_metrics(MODEL_KNOBS, kw))
        train = replace(base.train, **pick_metrics(TRAIN_KNOBS, kw))
    except TestbedConfigError as e:  # settings that do not go together (K and L, N and B, width and heads)
        raise click.BadParameter(str(e), param_hint=options_named(str(e))) from None
    if model.pos == "ape" and model.ape_slots < data.seq_len:
        model = replace(model, ape_slots=data.seq_len + data.seq_len // 2)
    return data, model, train, seeds or base.seeds


def options_named(message: str) -> str | None:
    """The options whose settings a testbed error names (``K=100 … L=16`` → ``--K/--L``)."""
    import re

    option = {v: k for table in (DATA_KNOBS, MODEL_KNOBS, TRAIN_KNOBS) for k, v in table.items()}
    found = [f"--{option[w].replace('_', '-')}" for w in dict.fromkeys(re.findall(r"[A-Za-z_]+", message))
             if w in option]
    return "/".join(found) or None


def check_size(datas, model, train, members: int) -> None:
    """Refuse an ensemble that cannot fit in memory, before anything is allocated."""
    for data in datas:
        acts = members * train.batch * data.seq_len * model.width * model.layers
        means = members * data.K * data.D
        for what, n, fix in (("the residual streams (models × batch × tokens × width × layers)", acts,
                              "--batch, --width, --layers, --N or --seeds"),
                             ("the class means (models × K × D)", means, "--K, --D or --seeds")):
            if n > MAX_ACTIVATIONS:
                raise click.UsageError(f"{what} would hold {n:.3g} numbers ({n * 4 / 2**30:.3g} GiB of float32); "
                                       f"at most {MAX_ACTIVATIONS:.3g} (1 GiB): lower {fix}")


UNIMODAL_METRICS = ("acc_icl", "acc_flip", "acc_iwl", "iwl_context_rate", "induction_max", "prev_token_max")


def metric_entry(values) -> dict:
    """One metric over seeds: mean, 95 % t interval (null, with the reason, for one seed), per seed."""
    from mmicl.numerics.testbed.stats import t_interval

    iv = t_interval(values)
    ivj = iv.to_json()
    out = {"mean": round(iv.mean, 4),
           "interval95": None if ivj["lo"] is None else [round(iv.lo, 4), round(iv.hi, 4)],
           "seeds": [round(float(v), 4) for v in values]}
    if ivj["lo"] is None:
        out["interval95_null_reason"] = ivj["lo_null_reason"]
    return out


def run_summary(results, arm: str, metrics=UNIMODAL_METRICS, peak=("acc_icl",)) -> dict:
    """The final value of each of ``metrics`` for ``arm`` (``metric_entry``), and per seed the peak
    of each metric in ``peak`` along training (``peak_<metric>``)."""
    out = {m: metric_entry(results.final(m, arm)) for m in metrics}
    for m in peak:
        out[f"peak_{m}"] = [round(float(v), 4) for v in results.peak(m, arm)]
    return out


@click.group(cls=Group)
def testbed():
    """Synthetic in-context classification: ICL vs in-weights learning in small transformers."""


@testbed.command()
@testbed_options
def train(quick, seeds, seed, device, threads, out, as_json, **kw):
    """Train --seeds models of one setting as one ensemble; print the final metrics."""
    data, model, tr, n = _settings(quick, seeds, **kw)
    check_size([data], model, tr, n)
    import torch
    from mmicl.numerics.testbed.experiments import Arm, run_arms
    from mmicl.numerics.testbed.figures import plot_curves
    from mmicl.numerics.testbed.metrics import baselines

    torch.set_num_threads(threads)
    r = run_arms(model, [Arm("run", data)], [seed * 100 + s for s in range(n)], tr, device=device,
                 data_seed=seed, progress=not as_json)
    result = {"data": asdict(data), "model": asdict(model), "train": asdict(tr), "seeds": r.seeds,
              "seconds": round(r.run.history.seconds, 2),
              "model_steps_per_s": round(tr.steps * n / r.run.history.seconds, 1),
              "final": run_summary(r, "run"), "baselines": baselines(data), "history": r.run.history.to_json()}
    if out is not None:
        write_json(Path(out) / "testbed_train.json", result)
        plot_curves(r, Path(out) / "testbed_train.png", ("acc_icl", "acc_iwl", "acc_flip", "induction_max"))
    if as_json:
        emit_json(result)
    else:
        click.echo(f"{n} models, {tr.steps} steps, {result['seconds']} s ({result['model_steps_per_s']} model-steps/s)")
        for m, v in result["final"].items():
            click.echo(f"  {m:18s} {v}")


def comma_list(text: str, kind: click.ParamType, what: str, option: str, example: str) -> list:
    """The comma-separated values of ``option``, each checked by ``kind``, at least one, each once."""
    vals = []
    for v in (v.strip() for v in text.split(",")):
        if not v:
            continue
        try:
            vals.append(kind.convert(v, None, None))
        except click.BadParameter as e:
            raise click.BadParameter(f"{what} {e.message}", param_hint=option) from None
    if not vals:
        raise click.BadParameter(f"give at least one value of {what}, comma-separated (e.g. {example}); got {text!r}",
                                 param_hint=option)
    twice = sorted({str(v) for v in vals if vals.count(v) > 1})
    if twice:
        raise click.BadParameter(f"{what} = {', '.join(twice)} is given more than once; give each value once",
                                 param_hint=option)
    return vals


def _sweep_values(knob: str, values: str) -> list:
    """The comma-separated ``values`` of ``knob``, each checked like the option ``--<knob>``."""
    return comma_list(values, KNOB_TYPES[knob], knob, "--values", "64,512")


@testbed.command()
@click.option("--knob", required=True, type=click.Choice(sorted(DATA_KNOBS) + sorted(MODEL_KNOBS)))
@click.option("--values", required=True, help="Comma-separated values of the knob, e.g. 64,512,16384.")
@testbed_options
def sweep(knob, values, quick, seeds, seed, device, threads, out, as_json, **kw):
    """Vary one knob: a data knob trains one ensemble, a model knob one ensemble per value."""

    vals = _sweep_values(knob, values)
    if kw.get(knob) is not None:
        raise click.UsageError(f"--{knob} and --knob {knob} cannot be given together: the sweep sets {knob}")
    if knob in DATA_KNOBS:
        data, model, tr, n = _settings(quick, seeds, **kw)
        try:
            datas = [(f"{knob}={v}", replace(data, **{DATA_KNOBS[knob]: v})) for v in vals]
        except TestbedConfigError as e:
            raise click.BadParameter(str(e), param_hint="--values") from None
        check_size([d for _, d in datas], model, tr, n * len(vals))
        settings = None
    else:
        settings = [(v, _settings(quick, seeds, **{**kw, knob: v})) for v in vals]
        for _, (data, model, tr, n) in settings:
            check_size([data], model, tr, n)
    import torch
    from mmicl.numerics.testbed.experiments import Arm, run_arms
    from mmicl.numerics.testbed.figures import plot_against

    torch.set_num_threads(threads)
    rows = {}
    if settings is None:
        seed_list = [seed * 100 + s for s in range(n)]
        arms = [Arm(name, d) for name, d in datas]
        r = run_arms(model, arms, seed_list, tr, device=device, data_seed=seed, progress=not as_json)
        rows = {a.name: (r, a.name) for a in arms}
    else:
        for v, (data, model, tr, n) in settings:
            seed_list = [seed * 100 + s for s in range(n)]
            r = run_arms(model, [Arm("run", data)], seed_list, tr, device=device, data_seed=seed,
                         progress=not as_json, description=f"{knob}={v}")
            rows[f"{knob}={v}"] = (r, "run")
    result = {"knob": knob, "values": vals, "seeds": seed_list,
              "final": {name: run_summary(r, arm) for name, (r, arm) in rows.items()},
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



@testbed.command()
@click.option("--store", "store_dir", required=True, type=click.Path(exists=True, file_okay=False),
              help="Results store of an `mmicl sweep` of kind ensemble (e.g. studies/plateau.toml).")
@click.option("--json", "as_json", is_flag=True, help="Print the table as JSON.")
def plateau(store_dir, as_json):
    """Which settings of a sweep leave the copy plateau: per run, how many seeds end with ICL above
    B/N + 2 binomial standard errors, and the median step at which they first got there.

    Runs are listed best first: most seeds off the plateau, then the earlier median exit step,
    then the smaller learning rate."""
    from mmicl.numerics.testbed.experiments import Arm, ArmResults, StoredRun
    from mmicl.numerics.testbed.plateau import plateau_exit, plateau_level
    from mmicl.numerics.testbed.train import History

    rows = []
    store = Store(store_dir, writable=False, warn=lambda line: click.echo(line, err=True))  # a query: read only
    for rec in store.records():
        if rec["kind"] != "ensemble" or rec["status"] != "done":
            continue
        c = rec["config"]
        r = ArmResults([Arm(a["name"], None) for a in c["arms"]], c["seeds"],
                       StoredRun(History.from_json(rec["result"]["history"])))
        for a in c["arms"]:
            d = a["data"]
            ex = plateau_exit(r.curve("acc_icl", a["name"]), r.steps,
                              plateau_level(d["N"], d["B"], c["train"]["eval_size"]))
            rows.append({"key": rec["key"], "arm": a["name"], "lr": c["train"]["lr"], "warmup": c["train"]["warmup"],
                         "steps": c["train"]["steps"], "model": c["model"], **ex})
    if not rows:
        raise click.UsageError(f"{store_dir} holds no finished ensemble runs")
    rows.sort(key=lambda x: (-x["n_ended_above"], x["median_exit_step"] if x["median_exit_step"] is not None
                             else float("inf"), x["lr"]))
    if as_json:
        emit_json({"runs": rows})
        return
    for x in rows:
        m = x["model"]
        click.echo(f"{x['key']} {x['arm']}: lr {x['lr']:g}, warm-up {x['warmup']}, {m['layers']}L{m['heads']}H "
                   f"width {m['width']} {m['pos']}: {x['n_ended_above']}/{x['n_seeds']} seeds end above "
                   f"{x['level']:.3f}; median exit step {x['median_exit_step']}; per seed {x['first_step_above']}")
