"""``mmicl testbed stage1|stage2|fusion|encoder``: the multimodal protocol of the testbed, step by step.

``stage1`` trains decoders on M1 alone and saves them (weights, M1 tables, settings) in one
checkpoint file; ``stage2 --from CKPT`` freezes their blocks and trains a projector of M2 (and the
final norm and readout) on two-modality sequences; ``fusion`` trains everything from scratch on the
two-modality sequences (early fusion); ``encoder`` pretrains the M2 encoder alone and reports its
held-out accuracy against its number of pretraining steps.  ``--quick`` starts from the small CPU
size of the multimodal registry claims (``MULTIMODAL_QUICK`` of ``proofs/claims/testbed/sizes.py``),
otherwise from their full (GPU) size (``MULTIMODAL_FULL``); any option overrides.

The subcommands join the ``testbed`` group of ``testbed.py`` when this module is imported
(``mmicl/cli.py`` loads the group from here).
"""
from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path

import click

from mmicl.commands.common import MAX_STEPS, SEED, IntIn, WritablePath, device_option, emit_json
from mmicl.commands.testbed import (DATA_KNOBS, KNOB_TYPES, MAX_ACTIVATIONS, MAX_SEEDS, MODEL_KNOBS, TRAIN_KNOBS,
                                    check_size, comma_list, metric_entry, options_named, pick_metrics, run_summary,
                                    testbed, threads_option)
from mmicl.numerics.testbed.config import MultimodalConfig, MultimodalMember, TestbedConfigError, stage1_ape_slots
from mmicl.numerics.atomic import require_space, write_json

__all__ = ["M1_KNOBS", "M2_KNOBS", "MULTIMODAL_METRICS", "STAGE1_METRICS", "CURVES", "quick_option", "m1_options",
           "model_options", "train_options", "m2_options", "layout_option", "encoder_steps_option", "run_options",
           "json_option", "out_folder_option", "M2_HINT", "stage1", "stage2", "fusion", "encoder"]


M1_KNOBS = {k: v for k, v in DATA_KNOBS.items() if k != "pB"}
"""M1's knobs in the two-modality commands (there ``--pB`` is the burstiness of the multimodal data)."""
M2_KNOBS = {"K2": "K", "D2": "D", "eps2": "eps", "zipf2": "zipf"}

MULTIMODAL_METRICS = ("acc_icl", "acc_icl_m2only", "acc_icl_m1only", "acc_icl_m2known", "acc_iwl", "acc_flip", "conflict_follow_m1",
                      "conflict_follow_m2", "induction_max", "prev_token_max", "attn_match_m1_top",
                      "attn_match_m2_top", "pair_attn_m1_top", "pair_attn_m2_top")
"""The final metrics of stage 2 and fusion (every scalar metric of the multimodal evaluation sets)."""
STAGE1_METRICS = ("acc_icl", "acc_flip", "acc_iwl", "iwl_context_rate", "induction_max", "prev_token_max")
CURVES = ("acc_icl_m2only", "acc_icl", "conflict_follow_m1", "conflict_follow_m2", "induction_max")


# ---------------------------------------------------------------------------------------------
# options
# ---------------------------------------------------------------------------------------------


def _apply(f, opts):
    for o in reversed(opts):
        f = o(f)
    return f


def quick_option():
    return click.option("--quick", is_flag=True,
                        help="Start from the small CPU size of the multimodal claims (else their full, GPU size).")


def m1_options(f):
    T = KNOB_TYPES
    return _apply(f, [
        click.option("--K", "K", type=T["K"], help="M1 classes."),
        click.option("--N", "N", type=T["N"], help="Context items (pairs) per sequence."),
        click.option("--D", "D", type=T["D"], help="M1 dimension."),
        click.option("--L", "L", type=T["L"], help="Labels."),
        click.option("--B", "B", type=T["B"], help="Burstiness: each context class B times."),
        click.option("--pB", "pB", type=T["pB"], help="Probability that a training sequence is bursty."),
        click.option("--eps", type=T["eps"], help="M1 within-class noise ε."),
        click.option("--zipf", type=T["zipf"], help="Zipf exponent α of M1's class law.")])


def model_options(f):
    T = KNOB_TYPES
    return _apply(f, [click.option("--layers", type=T["layers"]), click.option("--heads", type=T["heads"]),
                      click.option("--width", type=T["width"]), click.option("--pos", type=T["pos"])])


def train_options(f):
    T = KNOB_TYPES
    return _apply(f, [click.option("--steps", type=T["steps"]), click.option("--batch", type=T["batch"]),
                      click.option("--lr", type=T["lr"]),
                      click.option("--eval-every", "eval_every", type=T["eval_every"])])


def m2_options(f):
    T = KNOB_TYPES
    return _apply(f, [
        click.option("--K2", "K2", type=IntIn(1, 2**20, "M2 classes"),
                     help="M2 classes, a multiple of L (default: L, each M2 class one label)."),
        click.option("--D2", "D2", type=T["D"], help="M2 dimension."),
        click.option("--eps2", type=T["eps"], help="M2 within-class noise ε2."),
        click.option("--zipf2", type=T["zipf"], help="Zipf exponent of M2's class law.")])


def layout_option():
    return click.option("--layout", type=click.Choice(["m1_first", "m2_first"]), default="m1_first",
                        show_default=True,
                        help="m1_first: [M1, M2, y] triples (M2 next to the label); m2_first: [M2, M1, y].")


def encoder_steps_option():
    return click.option("--encoder-steps", "encoder_steps", type=IntIn(0, MAX_STEPS), default=None,
                        help="Pretrain an M2 encoder (MLP D2→64→32→K2) this many steps and feed its features "
                             "to the projector (default: no encoder, raw M2 items).")


def run_options(seeds: bool = True):
    opts = []
    if seeds:
        opts.append(click.option("--seeds", type=IntIn(1, MAX_SEEDS), default=None,
                                 help="Models (seeds 0..n-1 offset by 100·--seed)."))
    opts += [click.option("--seed", type=SEED, default=0, show_default=True,
                          help="Seed of the data stream and evaluation sets."),
             device_option(), threads_option()]
    return lambda f: _apply(f, opts)


def json_option():
    return click.option("--json", "as_json", is_flag=True, help="Print the results (with curves) as JSON.")


def out_folder_option():
    return click.option("--out", type=WritablePath("folder"), default=None,
                        help="Folder for the JSON results and the curves figure.")


# ---------------------------------------------------------------------------------------------
# settings
# ---------------------------------------------------------------------------------------------


def _sizes(quick: bool):
    from mmicl.proofs.claims.testbed.sizes import MULTIMODAL_FULL, MULTIMODAL_QUICK

    return MULTIMODAL_QUICK if quick else MULTIMODAL_FULL


def _replace(obj, hint: str | None = None, **changes):
    """``replace(obj, **changes)``; a setting that does not go together becomes a ``BadParameter``
    naming ``hint``, by default the options that the message names (``K=100 … L=16`` → ``--K/--L``)."""

    try:
        return replace(obj, **changes)
    except TestbedConfigError as e:
        raise click.BadParameter(str(e), param_hint=hint or options_named(str(e))) from None


M2_HINT = "--K2/--D2/--eps2/--zipf2"


def _m2(sz, L: int, kw: dict):
    """M2 of the sizes with the options; K2 defaults to L (each M2 class one label, as in the sizes)."""
    m2 = _replace(sz.m2, M2_HINT, **pick_metrics(M2_KNOBS, kw))
    if kw.get("K2") is None and m2.K != L:
        m2 = replace(m2, K=L)
    return m2


def _multimodal(m1, m2, p_bursty: float | None, layout: str, nb_hint: str, nb_fix: str = ""):
    """The ``MultimodalConfig``; its errors name ``--K2`` (M2 classes against L) or ``nb_hint``
    (N/B < 2: no conflict set)."""

    try:
        return MultimodalConfig(m1, m2, 1.0 if p_bursty is None else p_bursty, layout)
    except TestbedConfigError as e:
        msg = str(e)
        if msg.startswith("M2 K="):
            raise click.BadParameter(msg, param_hint="--K2") from None
        raise click.BadParameter(msg + nb_fix, param_hint=nb_hint) from None


def _check_multimodal_size(mm, model, train, members: int, acts_fix: str, means_fix: str) -> None:
    """``check_size`` for two-modality sequences (3N+2 tokens, the class means of M1 and M2)."""
    acts = members * train.batch * mm.seq_len * model.width * model.layers
    means = members * (mm.m1.K * mm.m1.D + mm.m2.K * mm.m2.D)
    for what, n, fix in (("the residual streams (models × batch × tokens × width × layers)", acts, acts_fix),
                         ("the class means (models × (K·D + K2·D2))", means, means_fix)):
        if n > MAX_ACTIVATIONS:
            raise click.UsageError(f"{what} would hold {n:.3g} numbers ({n * 4 / 2**30:.3g} GiB of float32); "
                                   f"at most {MAX_ACTIVATIONS:.3g} (1 GiB): lower {fix}")


def _seed_list(seed: int, n: int) -> list[int]:
    return [seed * 100 + s for s in range(n)]


def _baselines(m1) -> dict:
    from mmicl.numerics.testbed.multimodal_metrics import baselines

    return baselines(m1)


def _stage1_summary(final: dict) -> dict:
    """The stage-1 metrics of a checkpoint (per member) as ``metric_entry`` per metric; per-head
    metrics reduced to their maximum over heads (``induction_max``, ``prev_token_max``)."""
    import numpy as np

    out = {}
    for m in STAGE1_METRICS:
        base = m.removesuffix("_max")
        if base not in final:
            continue
        v = np.asarray(final[base], dtype=float)
        if m != base:
            v = v.reshape(v.shape[0], -1).max(1)
        out[m] = metric_entry(v)
    return out


def _echo_summary(result: dict, head: str) -> None:
    click.echo(head)
    for m, v in result["final"].items():
        iv = "" if v["interval95"] is None else f"  95% [{v['interval95'][0]}, {v['interval95'][1]}]"
        click.echo(f"  {m:20s} {v['mean']}{iv}  seeds {v['seeds']}")
    click.echo("  baselines: " + ", ".join(f"{k} {v:.4g}" for k, v in result["baselines"].items()))


def _write(out, name: str, result: dict, r, title: str, as_json: bool) -> None:
    if out is None:
        return
    from mmicl.numerics.testbed.figures import plot_curves

    write_json(Path(out) / f"{name}.json", result)
    plot_curves(r, Path(out) / f"{name}.png", CURVES, title)
    if not as_json:
        click.echo(f"wrote {Path(out) / f'{name}.json'} and {Path(out) / f'{name}.png'}")


def _arm_name(layout: str, K2: int, decoder: str = "stage1", encoder_steps: int | None = None) -> str:
    name = f"{layout}, K2={K2}"
    if decoder == "random":
        name += ", random decoder"
    if encoder_steps is not None:
        name += f", encoder {encoder_steps} steps"
    return name


# ---------------------------------------------------------------------------------------------
# commands
# ---------------------------------------------------------------------------------------------


@testbed.command()
@quick_option()
@m1_options
@model_options
@train_options
@run_options()
@click.option("--out", "out", type=WritablePath("file"), required=True,
              help="The checkpoint file to write (stage 2 reads it with --from).")
@json_option()
def stage1(quick, seeds, seed, device, threads, out, as_json, **kw):
    """Multimodal stage 1: train decoders on M1 alone and save them in the checkpoint --out."""
    sz = _sizes(quick)
    data = _replace(sz.m1, None, **pick_metrics(DATA_KNOBS, kw))
    model = _replace(sz.model, None, **pick_metrics(MODEL_KNOBS, kw))
    train = _replace(sz.stage1, None, **pick_metrics(TRAIN_KNOBS, kw))
    n = seeds or sz.seeds
    # the checkpoint is for stage 2, whose conflict set needs two context pairs (N/B ≥ 2)
    _multimodal(data, replace(sz.m2, K=data.L), None, "m1_first", "--N/--B")
    check_size([data], model, train, n)
    import torch
    from mmicl.numerics.testbed.checkpoint import size_lower_bound
    from mmicl.numerics.testbed.multimodal_experiments import run_stage1

    # before training: room for at least the file's tensors (a lower bound, see size_lower_bound);
    # a disk that fills up meanwhile is a DiskFullError at save, one line through Command (exit 2)
    require_space(Path(out).absolute().parent, size_lower_bound(model, data, n), "the stage-1 checkpoint")
    torch.set_num_threads(threads)
    s1 = run_stage1(model, data, _seed_list(seed, n), train, device=device, data_seed=seed, progress=not as_json)
    s1.save(out)
    result = {"settings": {"m1": asdict(data), "model": asdict(s1.model), "train": asdict(train), "data_seed": seed,
                           "device": device},
              "seeds": [m.seed for m in s1.members], "seconds": round(s1.seconds, 2), "checkpoint": str(out),
              "final": _stage1_summary(s1.final), "baselines": {"copy": data.B / data.N, "uniform_guess": 1 / data.L}}
    if as_json:
        emit_json(result)
    else:
        _echo_summary(result, f"stage 1: {n} models, {train.steps} steps, {result['seconds']} s; wrote {out}")


@testbed.command()
@click.option("--from", "checkpoint", required=True, type=click.Path(dir_okay=True, path_type=Path),
              metavar="CKPT", help="A stage-1 checkpoint (written by `mmicl testbed stage1 --out CKPT`).")
@quick_option()
@m2_options
@click.option("--pB", "pB", type=KNOB_TYPES["pB"], help="Probability that a training sequence is bursty (default 1).")
@layout_option()
@click.option("--train-readout/--no-train-readout", "train_readout", default=True, show_default=True,
              help="Train the decoder's final norm and readout with the projector (else the projector alone).")
@encoder_steps_option()
@click.option("--random-decoder", is_flag=True,
              help="Control: a frozen decoder with random weights instead of the stage-1 one.")
@train_options
@run_options(seeds=False)
@out_folder_option()
@json_option()
def stage2(checkpoint, quick, pB, layout, train_readout, encoder_steps, random_decoder, seed, device, threads, out,
           as_json, **kw):
    """Multimodal stage 2: freeze the stage-1 decoders of --from, train a projector of M2 on them."""
    from mmicl.numerics.testbed.checkpoint import Stage1

    sz = _sizes(quick)
    train = _replace(sz.stage2, None, **pick_metrics(TRAIN_KNOBS, kw))
    try:  # verified (content hash, names, shapes, finite values); a file that fails is refused, not touched
        s1 = Stage1.load(checkpoint)
    except TestbedConfigError as e:
        raise click.BadParameter(str(e), param_hint="--from") from None
    m1 = s1.members[0].data
    m2 = _m2(sz, m1.L, kw)
    mm = _multimodal(m1, m2, pB, layout, "--from", " (the checkpoint's N and B: train stage 1 with N/B ≥ 2)")
    _check_multimodal_size(mm, s1.model, train, s1.E, "--batch", "--K2 or --D2")
    import torch
    from mmicl.numerics.testbed.multimodal_experiments import MultimodalArm, run_stage2

    torch.set_num_threads(threads)
    decoder = "random" if random_decoder else "stage1"
    trainable = "projector+readout" if train_readout else "projector"
    arm = MultimodalArm(_arm_name(layout, m2.K, decoder, encoder_steps), mm, decoder=decoder,
                        encoder_steps=encoder_steps)
    r = run_stage2(s1, [arm], train, trainable=trainable, device=device, data_seed=seed, progress=not as_json)
    metrics = MULTIMODAL_METRICS + (("encoder_acc",) if encoder_steps is not None else ())
    result = {"settings": {"checkpoint": str(checkpoint), "m1": asdict(m1), "m2": asdict(m2), "p_bursty": mm.p_bursty,
                           "layout": layout, "model": asdict(s1.model), "train": asdict(train),
                           "trainable": trainable, "decoder": decoder, "encoder_steps": encoder_steps,
                           "data_seed": seed, "device": device, "stage1_data_seed": s1.data_seed,
                           "stage1_version": s1.version},
              "seeds": r.seeds, "seconds": round(r.run.history.seconds, 2),
              "stage1_final": _stage1_summary(s1.final),
              "final": run_summary(r, arm.name, metrics, peak=()), "baselines": _baselines(m1),
              "history": r.run.history.to_json()}
    _write(out, "testbed_stage2", result, r, f"stage 2 ({arm.name}, trains {trainable})", as_json)
    if as_json:
        emit_json(result)
    else:
        _echo_summary(result, f"stage 2 ({arm.name}, trains {trainable}): {s1.E} models, {train.steps} steps, "
                              f"{result['seconds']} s")


@testbed.command()
@quick_option()
@m1_options
@model_options
@m2_options
@layout_option()
@encoder_steps_option()
@train_options
@run_options()
@out_folder_option()
@json_option()
def fusion(quick, seeds, seed, layout, encoder_steps, device, threads, out, as_json, **kw):
    """Early fusion: decoder and M2 projector from scratch, trained together on two-modality data.

    Default --steps: stage 1's plus stage 2's (as many updates as the staged protocol)."""
    sz = _sizes(quick)
    m1 = _replace(sz.m1, None, **pick_metrics(M1_KNOBS, kw))
    model = _replace(sz.model, None, **pick_metrics(MODEL_KNOBS, kw))
    # as in claim 6: the steps of stage 1 and stage 2 together, so that both protocols make as many updates
    train = _replace(sz.stage1, None, **{"steps": sz.stage1.steps + sz.stage2.steps, **pick_metrics(TRAIN_KNOBS, kw)})
    m2 = _m2(sz, m1.L, kw)
    mm = _multimodal(m1, m2, kw.get("pB"), layout, "--N/--B")
    n = seeds or sz.seeds
    _check_multimodal_size(mm, model, train, n, "--batch, --width, --layers, --N or --seeds",
                           "--K, --D, --K2, --D2 or --seeds")
    import torch
    from mmicl.numerics.testbed.multimodal_experiments import MultimodalArm, run_fusion

    torch.set_num_threads(threads)
    arm = MultimodalArm(_arm_name(layout, m2.K, encoder_steps=encoder_steps), mm, encoder_steps=encoder_steps)
    r = run_fusion(model, m1, [arm], _seed_list(seed, n), train, device=device, data_seed=seed,
                   progress=not as_json)
    metrics = MULTIMODAL_METRICS + (("encoder_acc",) if encoder_steps is not None else ())
    result = {"settings": {"m1": asdict(m1), "m2": asdict(m2), "p_bursty": mm.p_bursty, "layout": layout,
                           "model": asdict(stage1_ape_slots(model, m1)), "train": asdict(train), "trainable": "all",
                           "encoder_steps": encoder_steps, "data_seed": seed, "device": device},
              "seeds": r.seeds, "seconds": round(r.run.history.seconds, 2),
              "final": run_summary(r, arm.name, metrics, peak=()), "baselines": _baselines(m1),
              "history": r.run.history.to_json()}
    _write(out, "testbed_fusion", result, r, f"early fusion ({arm.name})", as_json)
    if as_json:
        emit_json(result)
    else:
        _echo_summary(result, f"early fusion ({arm.name}): {n} models, {train.steps} steps, {result['seconds']} s")


def _steps_list(text: str) -> list[int]:
    """The comma-separated numbers of ``--steps-list``, each an integer in [0, MAX_STEPS], once each."""
    return comma_list(text, IntIn(0, MAX_STEPS), "pretraining steps", "--steps-list", "0,10,100")


@testbed.command()
@quick_option()
@m2_options
@click.option("--steps-list", "steps_list", default=None,
              help="Comma-separated pretraining steps, e.g. 0,10,100 (default: the claims' encoder doses).")
@run_options()
@json_option()
def encoder(quick, steps_list, seeds, seed, device, threads, as_json, **kw):
    """Pretrain the M2 encoder alone for each number of steps; its held-out accuracy per seed."""
    sz = _sizes(quick)
    doses = _steps_list(steps_list) if steps_list is not None else list(sz.encoder_steps)
    m1 = sz.m1
    m2 = _replace(sz.m2, M2_HINT, **{"K": sz.encoder_K2, **pick_metrics(M2_KNOBS, kw)})
    mm = _multimodal(m1, m2, None, "m1_first", "--K2")
    n = seeds or sz.seeds
    means = len(doses) * n * (m1.K * m1.D + m2.K * m2.D)
    if means > MAX_ACTIVATIONS:
        raise click.UsageError(f"the class means (models × (K·D + K2·D2)) would hold {means:.3g} numbers; at most "
                               f"{MAX_ACTIVATIONS:.3g} (1 GiB): lower --seeds, the --steps-list length, --K2 or --D2")
    import time

    import torch
    from mmicl.numerics.testbed.multimodal_data import MultimodalMixture
    from mmicl.numerics.testbed.multimodal_experiments import ENCODER_HIDDEN
    from mmicl.numerics.testbed.multimodal_model import EnsembleMLP
    from mmicl.numerics.testbed.multimodal_train import train_encoder

    torch.set_num_threads(threads)
    seed_list = _seed_list(seed, n)
    # the members of a stage 2 with one arm per dose (run_stage2): member seed s + 7919·dose index,
    # encoder seed + 3, encoder data seed --seed + 77
    members = [MultimodalMember(mm, s + 7919 * i) for i in range(len(doses)) for s in seed_list]
    t0 = time.perf_counter()
    mixture = MultimodalMixture(members, device)
    enc = EnsembleMLP([m2.item_dim, *ENCODER_HIDDEN, m2.K], [m.seed + 3 for m in members], device)
    train = sz.stage2
    acc = train_encoder(enc, mixture, [d for d in doses for _ in seed_list], batch=train.batch, lr=train.lr,
                        eval_size=train.eval_size, seed=seed + 77).view(len(doses), n)
    seconds = time.perf_counter() - t0
    result = {"settings": {"m1": asdict(m1), "m2": asdict(m2), "hidden": list(ENCODER_HIDDEN), "batch": train.batch,
                           "lr": train.lr, "eval_size": train.eval_size, "data_seed": seed, "device": device},
              "seeds": seed_list, "steps": doses, "seconds": round(seconds, 2),
              "encoder_acc": {str(d): metric_entry(acc[i].numpy()) for i, d in enumerate(doses)},
              "baselines": {"uniform_guess": 1 / m2.K}}
    if as_json:
        emit_json(result)
    else:
        click.echo(f"M2 encoder (K2={m2.K}, D2={m2.D}): {n} seeds, {result['seconds']} s; held-out accuracy "
                   f"(chance {1 / m2.K:.3g})")
        for d, v in result["encoder_acc"].items():
            iv = "" if v["interval95"] is None else f"  95% [{v['interval95'][0]}, {v['interval95'][1]}]"
            click.echo(f"  {d:>8s} steps  {v['mean']}{iv}  seeds {v['seeds']}")
