"""Claims 1, 2, 3 and 8 of the testbed (unimodal; stated in docs/testbed.md): empirical, several seeds, intervals.

Each claim trains its grid as one ensemble per model shape (``numerics.testbed.experiments``),
compares final accuracies (and head strengths) across arms with Welch 95% intervals over seeds, and
says ``holds`` when every interval lies on the claimed side, ``fails`` when one lies on the other
side, ``inconclusive`` when an interval straddles zero.  Sizes: ``quick`` fits 2 CPU cores in
minutes; full is meant for a GPU.  The numbers, the curves (JSON) and the figures go under
``OUT/testbed/``.  Not run by a plain ``mmicl verify`` (default=False).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from mmicl.numerics.atomic import write_json
from mmicl.numerics.testbed.config import DataConfig, ModelConfig, TrainConfig
from mmicl.numerics.testbed.experiments import Arm, ArmResults, run_arms
from mmicl.numerics.testbed.figures import plot_against, plot_curves
from mmicl.numerics.testbed.metrics import ablated_icl_accuracy, ablation_drop, baselines, uniform_baselines
from mmicl.numerics.testbed.stats import decide, spearman, t_interval, welch_interval

from ..registry import Check, Claim, Hypothesis, RunConfig, register


@dataclass(frozen=True)
class Sizes:
    """The knobs of one size of the testbed claims."""

    data: DataConfig
    model: ModelConfig
    train: TrainConfig
    seeds: int
    K_lo: int
    K_mid: int
    K_hi: int
    K_edge: int
    """K where bursty training neither saturates ICL nor memorises outright (the ε comparison)"""
    K_grid: tuple[int, ...]
    eps_hi: float
    zipf_hi: float
    heads_grid: tuple[int, ...]
    layers_grid: tuple[int, ...]


QUICK = Sizes(
    # N=4, B=2, L=16, D=16: 9-token sequences; the ICL transition of the high-K bursty arm comes at
    # 1000-2500 steps on this size (measured, width 32, batch 128, lr 2e-3); N=8 at width 32 had not
    # left the copy plateau after 3000 steps with APE.
    data=DataConfig(K=512, L=16, D=16, N=4, B=2, p_bursty=1.0, eps=0.1),
    model=ModelConfig(layers=2, heads=1, width=32, mlp_ratio=2, pos="ape", ape_slots=16),
    train=TrainConfig(steps=3000, batch=128, lr=2e-3, eval_every=250, eval_size=256),
    seeds=3, K_lo=64, K_mid=512, K_hi=16384, K_edge=128, K_grid=(512, 16384),
    eps_hi=0.5, zipf_hi=1.5, heads_grid=(1, 4), layers_grid=(2, 4),
)
FULL = Sizes(
    data=DataConfig(K=1024, L=32, D=64, N=8, B=2, p_bursty=1.0, eps=0.1),
    model=ModelConfig(layers=2, heads=1, width=64, mlp_ratio=2, pos="ape", ape_slots=32),
    train=TrainConfig(steps=20000, batch=128, lr=1e-3, eval_every=500, eval_size=1024),
    seeds=5, K_lo=256, K_mid=1024, K_hi=16384, K_edge=1024, K_grid=(256, 512, 1024, 2048, 4096, 8192, 16384),
    eps_hi=0.5, zipf_hi=1.5, heads_grid=(1, 2, 4), layers_grid=(2, 3, 4),
)


INDUCTION_HEAD = 0.5
"""A head counts as an induction head when its induction score (in [−1, 1]) exceeds this."""


def sizes(config: RunConfig) -> Sizes:
    return QUICK if config.quick else FULL


def _out(config: RunConfig) -> Path:
    p = Path(config.out) / "testbed"
    p.mkdir(parents=True, exist_ok=True)
    return p


def _run(config: RunConfig, model: ModelConfig, arms: list[Arm], description: str) -> ArmResults:
    sz = sizes(config)
    seeds = [config.seed * 100 + s for s in range(sz.seeds)]
    return run_arms(model, arms, seeds, sz.train, device=config.device, data_seed=config.seed,
                    progress=True, description=description)


def compare(name: str, a: np.ndarray, b: np.ndarray, what: str) -> Check:
    """Check that mean(a) > mean(b) over seeds (Welch 95% interval of the difference)."""
    iv = welch_interval(a, b)
    return Check(name=name, method="empirical (seeds)", passed=decide(iv),
                 numbers={"difference": iv.to_json(), "a": a.round(4).tolist(), "b": b.round(4).tolist()},
                 tolerance=f"Welch 95% interval over {iv.n} seeds; passes if it lies above 0, fails if below",
                 detail=f"{what}: difference {iv}")


def above(name: str, values: np.ndarray, threshold: float, what: str) -> Check:
    """Check that the mean over seeds exceeds ``threshold`` (t 95% interval)."""
    iv = t_interval(values)
    return Check(name=name, method="empirical (seeds)", passed=decide(iv, threshold),
                 numbers={"interval": iv.to_json(), "threshold": threshold, "seeds": values.round(4).tolist()},
                 tolerance=f"t 95% interval over {iv.n} seeds against {threshold:.3g}",
                 detail=f"{what}: {iv} vs {threshold:.3g}")


def below(name: str, values: np.ndarray, threshold: float, what: str) -> Check:
    iv = t_interval(values)
    d = decide(iv, threshold)
    return Check(name=name, method="empirical (seeds)", passed=None if d is None else not d,
                 numbers={"interval": iv.to_json(), "threshold": threshold, "seeds": values.round(4).tolist()},
                 tolerance=f"t 95% interval over {iv.n} seeds against {threshold:.3g}",
                 detail=f"{what}: {iv} vs {threshold:.3g}")


def _chance(d: DataConfig) -> tuple[float, float]:
    """(uniform guess 1/L, copy a random in-context label B/N)."""
    return 1 / d.L, d.B / d.N


def _hyps(sz: Sizes, config: RunConfig) -> list[Hypothesis]:
    hyps = [Hypothesis(f"{sz.seeds} seeds per arm (an interval needs ≥ 2)", sz.seeds >= 2)]
    if config.law:
        hyps.append(Hypothesis("no task LAW applies to the testbed (it has its own data law)", True,
                               f"--law {config.law!r} ignored by the testbed claims"))
    return hyps


# ---- claim 1: data complexity ----------------------------------------------------------------
def claim1(config: RunConfig):
    sz = sizes(config)
    d = sz.data
    arms = [
        Arm("lowK_iid", replace(d, K=sz.K_lo, p_bursty=0.0)),
        Arm("lowK_bursty", replace(d, K=sz.K_lo, p_bursty=1.0)),
        Arm("highK_bursty", replace(d, K=sz.K_hi, p_bursty=1.0)),
        Arm("highK_iid", replace(d, K=sz.K_hi, p_bursty=0.0)),
        # ε is compared at K_edge, where neither ICL nor IWL is saturated (at K_mid both ε gave ICL ≈ 1
        # in the first quick run: a ceiling, not evidence); Zipf at K_hi, p_B = 0.9, where α = 0 gives
        # ICL, so that a trade toward IWL can show (at K_mid, α = 0 already memorised: see
        # notes/issue-5.md)
        Arm("edgeK_eps_lo", replace(d, K=sz.K_edge, p_bursty=1.0, eps=d.eps)),
        Arm("edgeK_eps_hi", replace(d, K=sz.K_edge, p_bursty=1.0, eps=sz.eps_hi)),
        Arm("highK_zipf0", replace(d, K=sz.K_hi, p_bursty=0.9, zipf=0.0)),
        Arm(f"highK_zipf{sz.zipf_hi:g}", replace(d, K=sz.K_hi, p_bursty=0.9, zipf=sz.zipf_hi)),
    ]
    r = _run(config, sz.model, arms, "testbed.claim1")
    uniform, copy = _chance(d)
    zhi = f"highK_zipf{sz.zipf_hi:g}"
    icl, iwl = (lambda a: r.final("acc_icl", a)), (lambda a: r.final("acc_iwl", a))
    checks = [
        above("high-K bursty: ICL above the copy baseline B/N", icl("highK_bursty"), copy,
              f"ICL accuracy at K={sz.K_hi}, p_B=1"),
        below("high-K bursty: IWL at chance (below 2/L)", iwl("highK_bursty"), 2 * uniform,
              f"IWL accuracy at K={sz.K_hi}, p_B=1"),
        above("low-K iid: IWL above 1/2", iwl("lowK_iid"), 0.5, f"IWL accuracy at K={sz.K_lo}, p_B=0"),
        below("low-K iid: ICL at chance (below 2/L)", icl("lowK_iid"), 2 * uniform, f"ICL accuracy at K={sz.K_lo}, p_B=0"),
        compare("more classes K → more ICL", icl("highK_bursty"), icl("lowK_bursty"),
                f"ICL(K={sz.K_hi}) − ICL(K={sz.K_lo}), bursty"),
        compare("burstiness → more ICL", icl("highK_bursty"), icl("highK_iid"),
                f"ICL(p_B=1) − ICL(p_B=0) at K={sz.K_hi}"),
        compare("within-class variation ε → more ICL", icl("edgeK_eps_hi"), icl("edgeK_eps_lo"),
                f"ICL(ε={sz.eps_hi}) − ICL(ε={d.eps}) at K={sz.K_edge}, bursty"),
        compare("Zipf α → more IWL", iwl(zhi), iwl("highK_zipf0"),
                f"IWL(α={sz.zipf_hi}) − IWL(α=0) at K={sz.K_hi}, p_B=0.9"),
        compare("Zipf α → less ICL", icl("highK_zipf0"), icl(zhi),
                f"ICL(α=0) − ICL(α={sz.zipf_hi}) at K={sz.K_hi}, p_B=0.9"),
    ]
    out = _out(config)
    figs = [plot_curves(r, out / "claim1_curves.png", ("acc_icl", "acc_iwl", "induction_max"),
                        f"claim 1 ({'quick' if config.quick else 'full'}): ICL/IWL along training")]
    figs.append(plot_against([sz.K_lo, sz.K_hi], {
        "ICL (bursty)": [icl("lowK_bursty"), icl("highK_bursty")],
        "IWL (bursty)": [iwl("lowK_bursty"), iwl("highK_bursty")],
        "ICL (iid)": [icl("lowK_iid"), icl("highK_iid")],
        "IWL (iid)": [iwl("lowK_iid"), iwl("highK_iid")]}, out / "claim1_vs_K.png", "K", "final accuracy vs K", True))
    write_json(out / "claim1.json", {"sizes": asdict(sz), "baselines": baselines(sz.data), "seeds": r.seeds, "table": r.table(),
                                     "history": r.run.history.to_json(), "seconds": r.run.history.seconds})
    summary = {"ICL_highK_bursty": float(icl("highK_bursty").mean()), "IWL_lowK_iid": float(iwl("lowK_iid").mean())}
    return _hyps(sz, config), checks, summary, figs


# ---- claim 2: scaling layers or heads favours IWL --------------------------------------------
def claim2(config: RunConfig):
    sz = sizes(config)
    arm = [Arm("midK_bursty", replace(sz.data, K=sz.K_mid, p_bursty=1.0))]
    shapes = {f"{sz.model.layers}L{h}H": replace(sz.model, heads=h) for h in sz.heads_grid}
    shapes |= {f"{n}L{sz.model.heads}H": replace(sz.model, layers=n) for n in sz.layers_grid}
    runs = {name: _run(config, m, arm, f"testbed.claim2 {name}") for name, m in shapes.items()}
    pref = {n: r.final("acc_iwl", "midK_bursty") - r.final("acc_icl", "midK_bursty") for n, r in runs.items()}
    base = f"{sz.model.layers}L{sz.model.heads}H"
    checks = []
    for h in sz.heads_grid[1:]:
        n = f"{sz.model.layers}L{h}H"
        checks.append(compare(f"{h} heads favour IWL over {sz.model.heads}", pref[n], pref[base],
                              f"(IWL − ICL) of {n} minus that of {base}"))
    for layers in sz.layers_grid[1:]:
        n = f"{layers}L{sz.model.heads}H"
        checks.append(compare(f"{layers} layers favour IWL over {sz.model.layers}", pref[n], pref[base],
                              f"(IWL − ICL) of {n} minus that of {base}"))
    out = _out(config)
    figs = []
    for label, names, xs in (("heads", [f"{sz.model.layers}L{h}H" for h in sz.heads_grid], list(sz.heads_grid)),
                             ("layers", [f"{n}L{sz.model.heads}H" for n in sz.layers_grid], list(sz.layers_grid))):
        figs.append(plot_against(xs, {
            "ICL": [runs[n].final("acc_icl", "midK_bursty") for n in names],
            "IWL": [runs[n].final("acc_iwl", "midK_bursty") for n in names]},
            out / f"claim2_vs_{label}.png", label, f"final accuracy vs {label} (K={sz.K_mid}, bursty)"))
    write_json(out / "claim2.json", {"sizes": asdict(sz), "baselines": baselines(sz.data), "shapes": {n: asdict(m) for n, m in shapes.items()},
                                     "tables": {n: r.table() for n, r in runs.items()},
                                     "histories": {n: r.run.history.to_json() for n, r in runs.items()}})
    summary = {f"IWL-ICL_{n}": float(v.mean()) for n, v in pref.items()}
    return _hyps(sz, config), checks, summary, figs


# ---- claim 3: RoPE vs absolute positions -----------------------------------------------------
def claim3(config: RunConfig):
    sz = sizes(config)
    arms = [Arm(f"K{k}", replace(sz.data, K=k, p_bursty=1.0)) for k in sz.K_grid]
    runs = {pos: _run(config, replace(sz.model, pos=pos), arms, f"testbed.claim3 {pos}") for pos in ("ape", "rope")}
    uniform, copy = _chance(sz.data)
    thresholds = {pos: _threshold(r, sz.K_grid, copy) for pos, r in runs.items()}
    per_k = {k: welch_interval(runs["ape"].final("acc_icl", f"K{k}"), runs["rope"].final("acc_icl", f"K{k}"))
             for k in sz.K_grid}
    # "RoPE raises the threshold": APE does more ICL than RoPE at some K of the grid and RoPE does
    # more than APE at none.  One K with RoPE ahead contradicts it; no decisive K leaves it open.
    ahead = [k for k, iv in per_k.items() if decide(iv) is True]
    behind = [k for k, iv in per_k.items() if decide(iv) is False]
    checks = [Check(
        name="APE reaches ICL at a smaller K than RoPE", method="empirical (seeds)",
        passed=False if behind else (True if ahead else None),
        numbers={"ICL(APE) - ICL(RoPE)": {str(k): iv.to_json() for k, iv in per_k.items()},
                 "K_threshold": thresholds},
        tolerance="Welch 95% interval over seeds at each K; passes if above 0 at some K and below at none",
        detail="; ".join(f"K={k}: {iv}" for k, iv in per_k.items())
        + f"; APE ahead at {ahead}, RoPE ahead at {behind}; thresholds (smallest K with ICL above B/N) {thresholds}")]
    k_hi = f"K{sz.K_hi}"
    base = uniform_baselines(sz.data.N, sz.data.B)
    checks.append(compare("RoPE weakens the previous-token pattern", runs["ape"].final("prev_token_max", k_hi),
                          runs["rope"].final("prev_token_max", k_hi),
                          f"max previous-token strength APE − RoPE at K={sz.K_hi} (APE "
                          f"{runs['ape'].final('prev_token_max', k_hi).mean():.3f}, RoPE "
                          f"{runs['rope'].final('prev_token_max', k_hi).mean():.3f}; uniform attention "
                          f"{base['prev_token']:.3f})"))
    checks.append(compare("RoPE weakens the induction pattern", runs["ape"].final("induction_max", k_hi),
                          runs["rope"].final("induction_max", k_hi),
                          f"max induction strength APE − RoPE at K={sz.K_hi} (uniform attention "
                          f"{base['induction']:.3f})"))
    out = _out(config)
    figs = [plot_against(list(sz.K_grid), {f"ICL {p}": [runs[p].final("acc_icl", f"K{k}") for k in sz.K_grid] for p in runs}
                         | {f"IWL {p}": [runs[p].final("acc_iwl", f"K{k}") for k in sz.K_grid] for p in runs},
                         out / "claim3_vs_K.png", "K", "APE vs RoPE: final accuracy vs K (bursty)", True)]
    figs += [plot_curves(r, out / f"claim3_curves_{p}.png", ("acc_icl", "prev_token_max", "induction_max"), p)
             for p, r in runs.items()]
    write_json(out / "claim3.json", {"sizes": asdict(sz), "baselines": baselines(sz.data), "thresholds": thresholds,
                                     "tables": {p: r.table() for p, r in runs.items()},
                                     "histories": {p: r.run.history.to_json() for p, r in runs.items()}})
    summary = {f"K_threshold_{p}": str(t) for p, t in thresholds.items()}
    return _hyps(sz, config), checks, summary, figs


def _threshold(r: ArmResults, grid, copy: float) -> int | None:
    """Smallest K of the grid whose final ICL interval lies above the copy baseline (None: none)."""
    for k in grid:
        if decide(t_interval(r.final("acc_icl", f"K{k}")), copy):
            return int(k)
    return None


# ---- claim 8: induction heads ------------------------------------------------------------------
def claim8(config: RunConfig):
    sz = sizes(config)
    model = replace(sz.model, heads=2)
    arms = [Arm("highK_bursty", replace(sz.data, K=sz.K_hi, p_bursty=1.0))]
    r = _run(config, model, arms, "testbed.claim8")
    uniform, copy = _chance(sz.data)
    icl_curve, ind_curve = r.curve("acc_icl", "highK_bursty"), r.curve("induction_max", "highK_bursty")
    rho = np.array([spearman(ind_curve[:, s], icl_curve[:, s]) for s in range(len(r.seeds))])
    finite = rho[np.isfinite(rho)]
    checks = [above("induction strength rises with ICL accuracy (Spearman over checkpoints)", finite, 0.0,
                    "per-seed rank correlation of max induction strength and ICL accuracy along training")
              if finite.size >= 2 else Check("induction strength rises with ICL accuracy", "empirical (seeds)", None,
                                             numbers={"spearman": rho.tolist()},
                                             tolerance="needs ≥ 2 seeds whose curves are not constant",
                                             detail="fewer than 2 seeds with a non-constant curve")]
    # ablation: per member, zero every head whose final induction score exceeds INDUCTION_HEAD (half
    # of a perfect induction head's score); the strongest head if none does.  A first quick run that
    # zeroed only the strongest head found that both heads of the last layer had become induction
    # heads (scores ≈ 0.9 each): one of them alone carried ICL (0.91 left); see notes/issue-5.md.
    model_, sets = r.run.model, r.run.eval_sets
    ind = r.run.history.final("induction")                                   # (E, layers, H)
    E = ind.shape[0]
    heads = ind > INDUCTION_HEAD
    top = ind.flatten(1).argmax(1)
    for e in range(E):
        if not heads[e].any():
            heads[e].view(-1)[top[e]] = True
    base = r.final("acc_icl", "highK_bursty")
    after = ablated_icl_accuracy(model_, sets, [], heads).cpu().numpy()
    single = ablation_drop(model_, sets)                                      # (E, layers, H)
    checks.append(above("the model does ICL before ablation (above B/N)", base, copy, "final ICL accuracy"))
    checks.append(below(f"ablating the induction heads (score > {INDUCTION_HEAD}) collapses ICL to at most B/N",
                        after, copy, "ICL accuracy with the induction heads zeroed"))
    extra = {"induction_heads": heads.tolist(), "icl_ablate_induction_heads": after.tolist(),
             "single_head_drop": single.tolist(), "final_induction": ind.tolist()}
    out = _out(config)
    figs = [plot_curves(r, out / "claim8_curves.png", ("acc_icl", "induction_max", "prev_token_max"),
                        "claim 8: induction strength and ICL along training")]
    write_json(out / "claim8.json", {"sizes": asdict(sz), "baselines": baselines(sz.data), "model": asdict(model), "spearman": rho.tolist(),
                                     "icl_before": base.tolist(), **extra,
                                     "history": r.run.history.to_json()})
    summary = {"spearman_mean": float(finite.mean()) if finite.size else float("nan"), "ICL_before": float(base.mean()),
               "ICL_ablated_induction_heads": float(after.mean()),
               "induction_heads_per_model": float(heads.flatten(1).sum(1).float().mean())}
    return _hyps(sz, config), checks, summary, figs


register(Claim("testbed.claim1", "ICL needs data complexity (K, burstiness, ε; Zipf trades ICL for IWL)",
               "More classes K, burstiness and within-class variation ε push a small transformer toward ICL; "
               "a Zipfian class law trades ICL against IWL.", claim1, default=False))
register(Claim("testbed.claim2", "Scaling layers or heads favours IWL over ICL (unimodal)",
               "At fixed data complexity, more layers or heads shift the trained model from ICL toward IWL.",
               claim2, default=False))
register(Claim("testbed.claim3", "RoPE raises the ICL threshold and weakens prev-token/induction patterns",
               "Compared with absolute (one-hot, shifted) positions, RoPE needs more classes K for ICL and shows "
               "weaker previous-token and induction attention.", claim3, default=False))
register(Claim("testbed.claim8", "Induction-head strength tracks ICL; ablating the induction head collapses ICL",
               "Along training the induction score rises with ICL accuracy, and zeroing the induction heads "
               "brings ICL down to the copy baseline.", claim8, default=False))
