"""The ``montecarlo`` kind: one Monte Carlo training of a torch model of ``numerics.models``
(``build_model``) on the multimodal-ICL task law, as ``mmicl train`` does it, on the CPU: settings
``model``, ``law`` (LAW text; d1=, d2=, zeta= in it), ``T``, ``n`` (0: the large-context limit),
``steps``, ``lr``, ``batch``, ``optimizer``, ``seed``, ``samples`` (defaults those of the command);
result: the trained parameters (``numerics.training.describe``: α, β of the reduced models,
summaries of the matrices), the final loss, the risk and excess risk on ``samples`` fresh prompts
with their standard errors, the Bayes risk, and whether training diverged (its time is in the
provenance).  Its inputs are checked by ``numerics.validate`` and ``laws.read_law``, with the
limits of ``mmicl train``."""
from __future__ import annotations

from mmicl.theory.errors import InputError

from . import Kind
from mmicl.numerics.validate import MAX_CONTEXT, MAX_SAMPLES, MAX_STEPS, MAX_TRAIN_DEPTH, check_batch_memory, check_depth, check_finite, check_seed
from mmicl.numerics.strict_json import null_reason_key

__all__ = ["KIND", "MONTECARLO_DEFAULTS", "MONTECARLO_SETTINGS"]

MONTECARLO_DEFAULTS = {"T": 5, "n": 2000, "steps": 3000, "lr": 3e-3, "batch": 1024, "optimizer": "adam",
                       "seed": 0, "samples": 200_000}
"""The defaults of ``mmicl train`` (``model`` and ``law`` have none)."""
MONTECARLO_SETTINGS = frozenset({"model", "law", *MONTECARLO_DEFAULTS})
_RISK_CHUNK = 8192  # the chunk of fresh prompts of the risk estimate (as mmicl train)


def _whole(name: str, v, lo: int, hi: int | None = None, why: str = "") -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < lo or (hi is not None and v > hi):
        allowed = f"an integer from {lo} to {hi}" if hi is not None else f"an integer ≥ {lo}"
        raise InputError(f"{name} = {v!r}: it must be {allowed}" + (f" ({why})" if why else ""))
    return v


def _montecarlo_normalise(config: dict) -> dict:
    from mmicl.numerics.laws.language import read_law
    from mmicl.numerics.models import MODELS

    unknown = set(config) - MONTECARLO_SETTINGS
    if unknown:
        raise InputError(f"montecarlo runs have no setting {sorted(unknown)}; they have {sorted(MONTECARLO_SETTINGS)}")
    if "model" not in config or "law" not in config:
        raise InputError(f"a montecarlo run needs model (one of {', '.join(MODELS)}) and law (LAW text, e.g. "
                         "'s=uniform(0.5,4)'; d1=, d2=, zeta= go in it)")
    c = {**MONTECARLO_DEFAULTS, **config}
    if c["model"] not in MODELS:
        raise InputError(f"model = {c['model']!r}: it must be one of {', '.join(MODELS)}")
    if not isinstance(c["law"], str):
        raise InputError(f"law = {c['law']!r}: it must be LAW text, e.g. 's=uniform(0.5,4)' (see 'mmicl laws')")
    law = read_law(c["law"])
    T = check_depth(c["T"])
    if T > MAX_TRAIN_DEPTH:
        raise InputError(f"T = {T}: it must be at most {MAX_TRAIN_DEPTH} (a T-layer model runs T layers per step)")
    lr = check_finite("lr", c["lr"], InputError)
    if not lr > 0:
        raise InputError(f"lr = {lr!r}: the learning rate must be > 0")
    if c["optimizer"] not in ("adam", "sgd"):
        raise InputError(f"optimizer = {c['optimizer']!r}: it must be 'adam' or 'sgd'")
    out = {"model": c["model"], "law": c["law"], "T": T,
           "n": _whole("n", c["n"], 0, MAX_CONTEXT, "0: the large-context limit"),
           "steps": _whole("steps", c["steps"], 1, MAX_STEPS), "lr": lr,
           "batch": _whole("batch", c["batch"], 1), "optimizer": c["optimizer"], "seed": check_seed(c["seed"]),
           "samples": _whole("samples", c["samples"], 2, MAX_SAMPLES, "at least 2 for a standard error")}
    layers = T if out["model"] in ("lca", "lca-noskip") else 1
    check_batch_memory(out["batch"], law.d, "batch, d1/d2 or T" if layers > 1 else "batch or d1/d2",
                       "one training batch", copies=layers)
    check_batch_memory(min(out["samples"], _RISK_CHUNK), law.d, "d1/d2 (d1=, d2= in law)",
                       "one chunk of the risk estimate")
    return out


def _montecarlo_compute(config: dict, progress: bool = False, description: str | None = None) -> dict:
    """``mmicl train`` on the CPU, one thread, without the stationary point of lca1/lca2; ``progress``
    and ``description`` are accepted for the runner and not used."""
    import torch

    from mmicl.numerics.laws.language import parse_law
    from mmicl.numerics.lca import bayes_risk
    from mmicl.numerics.models import build_model
    from mmicl.numerics.laws.scalar import LawError
    from mmicl.numerics.training import describe, estimate_risk, train

    torch.set_num_threads(1)
    law, seed = parse_law(config["law"]), config["seed"]
    ctx = None if config["n"] == 0 else config["n"]
    model = build_model(config["model"], law.d, config["T"], law, seed)
    res = train(model, law, n=ctx, steps=config["steps"], batch=config["batch"], lr=config["lr"],
                optimizer=config["optimizer"], schedule="cosine", seed=seed, device="cpu")
    est = estimate_risk(model, law, n=ctx, samples=config["samples"], seed=seed + 1, device="cpu", chunk=_RISK_CHUNK)
    try:
        bayes = {"bayes_risk": bayes_risk(law)}
    except LawError as e:  # unbounded law: no quadrature
        bayes = {"bayes_risk": None, null_reason_key("bayes_risk"): f"unavailable: {e}"}
    # timings go to the provenance (seconds), so that results are reproducible
    return {"params": describe(model), "final_loss": res.history["loss"][-1], "risk": est.risk,
            "risk_se": est.risk_se, "excess": est.excess, "excess_se": est.excess_se, **bayes,
            "steps": res.steps_done, "diverged": res.diverged, "message": res.message}


KIND = Kind(MONTECARLO_SETTINGS, _montecarlo_normalise, _montecarlo_compute)
