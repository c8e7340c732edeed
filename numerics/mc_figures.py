"""Figures of the Monte Carlo studies (``mmicl train-figures``): PNG plus the numbers behind each figure
as JSON next to it.  matplotlib is imported lazily and used through ``matplotlib.figure.Figure`` only
(no pyplot, no ``matplotlib.use``): making a figure leaves the user's backend alone.

(a) ``finite_n_bias.png``   SAA minimiser α_n of the finite-n loss (one-parameter LCA) against n, ±1 se,
                            with the theory's α_T (``numerics.lca.alpha_T``) and the SAA α_∞ ± se;
                            right panel n·(α_n − α_T) ± n·se (α_T is exact, so se(bias) = se(α_n)).
(b) ``sgd_vs_flow.png``     plain SGD (online, n = ∞) at several learning rates against the gradient-flow
                            ODE (``gradient_flow_one(..., time="real")``) at time t = step × lr; right
                            panel the gap α_SGD − α_flow.  One SGD run per learning rate (seed recorded).
(c) ``full_matrix.png``     tied general LCA (all matrices trained): scalar parts of the gauge invariants
                            RS = W^R W^S and GV = (W^K)ᵀW^Q W^V over training against α_T and −α_T, and
                            their non-scalar residuals ‖M − cI‖_F / ‖I‖_F (c the mean diagonal).

Sizes: ``full`` (the default), ``quick`` (< ~60 s on one CPU thread) and ``tiny`` (a smoke test; its
numbers mean nothing).  Every random choice derives from ``seed``; the seed and sizes go into each JSON.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from mmicl.numerics.atomic import save_figure, write_json
from mmicl.numerics.laws.language import parse_law, takes_law

__all__ = ["SIZES", "FILES", "figure_finite_n", "figure_sgd_flow", "figure_full_matrix", "make_figures"]


SIZES = {
    # finite-n: SAA prompts, context lengths; SGD: batch, learning rates, flow horizon; full-matrix: steps, seeds
    "full": {"T": 5, "saa_samples": 200_000, "ns": [10, 30, 100, 300, 1000, 3000, 10000],
             "sgd_batch": 4096, "lrs": [0.04, 0.02, 0.01], "t_max": 1.0, "alpha0": 0.05,
             "fm_steps": 6000, "fm_seeds": [0, 1], "fm_batch": 1024, "fm_risk_samples": 100_000},
    "quick": {"T": 5, "saa_samples": 50_000, "ns": [10, 30, 100, 300, 1000, 3000],
              "sgd_batch": 4096, "lrs": [0.04, 0.02, 0.01], "t_max": 1.0, "alpha0": 0.05,
              "fm_steps": 2000, "fm_seeds": [0], "fm_batch": 1024, "fm_risk_samples": 50_000},
    "tiny": {"T": 3, "saa_samples": 1024, "ns": [10, 100], "sgd_batch": 256, "lrs": [0.05], "t_max": 0.5,
             "alpha0": 0.05, "fm_steps": 20, "fm_seeds": [0], "fm_batch": 128, "fm_risk_samples": 1024},
}

FILES = ("finite_n_bias", "sgd_vs_flow", "full_matrix")


def _figure(figsize=(10, 4)):
    """A figure with two panels, made without pyplot."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize)
    return fig, fig.subplots(1, 2)


@takes_law
def figure_finite_n(law, out: Path, size: dict, seed: int) -> dict:
    from mmicl.numerics.lca import alpha_T
    from mmicl.numerics.mc_studies import finite_n_study

    T = size["T"]
    rows = finite_n_study(law, T, size["ns"], samples=size["saa_samples"], seed=seed)
    inf, fin = rows[0], rows[1:]
    a_T = alpha_T(law, T)
    n = np.array([r["n"] for r in fin], float)
    a = np.array([r["alpha_n"] for r in fin])
    se = np.array([r["se"] for r in fin])
    fig, (ax, bx) = _figure()
    ax.errorbar(n, a, yerr=se, fmt="o", capsize=3, label="SAA minimiser α_n ± se")
    ax.axhline(a_T, color="k", lw=1, label=f"α_T (theory) = {a_T:.5f}")
    ax.axhspan(inf["alpha_n"] - inf["se"], inf["alpha_n"] + inf["se"], color="C1", alpha=0.3,
               label=f"SAA α_∞ ± se = {inf['alpha_n']:.5f} ± {inf['se']:.5f}")
    ax.set_xscale("log")
    ax.set_xlabel("context length n (log scale)")
    ax.set_ylabel("α")
    ax.set_title(f"finite-n minimiser, one-parameter LCA, T = {T}")
    ax.legend(fontsize=8)
    bx.errorbar(n, n * (a - a_T), yerr=n * se, fmt="o", capsize=3)
    bx.axhline(0, color="k", lw=0.5)
    bx.set_xscale("log")
    bx.set_xlabel("context length n (log scale)")
    bx.set_ylabel("n · (α_n − α_T)  (± n·se)")
    bx.set_title("bias × n (constant ⇔ bias ∝ 1/n)")
    fig.suptitle(law.spec(), fontsize=8)
    fig.tight_layout()
    save_figure(fig, out / "finite_n_bias.png", dpi=120)
    return {"T": T, "alpha_T": a_T, "samples": size["saa_samples"], "rows": rows}


@takes_law
def figure_sgd_flow(law, out: Path, size: dict, seed: int) -> dict:
    from mmicl.numerics.flows import gradient_flow_one
    from mmicl.numerics.mc_studies import gd_versus_flow

    T, a0, t_max = size["T"], size["alpha0"], size["t_max"]
    t_fine = np.linspace(0.0, t_max, 201)
    fine = np.asarray(gradient_flow_one(law, T, a0, time="real", t_eval=t_fine).path, float).reshape(len(t_fine), -1)[:, 0]
    runs = []
    for i, lr in enumerate(size["lrs"]):
        r = gd_versus_flow(law, T, alpha0=a0, lr=lr, steps=int(round(t_max / lr)), batch=size["sgd_batch"],
                           seed=seed + i)
        t = np.asarray(r["t"], float)
        a = np.asarray(r["alpha_gd"], float)
        flow = np.asarray(gradient_flow_one(law, T, a0, time="real", t_eval=t).path, float).reshape(len(t), -1)[:, 0]
        gap = a - flow
        late = t >= 0.2 * t_max
        runs.append({"lr": lr, "seed": seed + i, "steps": len(t) - 1, "t": t.tolist(), "alpha_sgd": a.tolist(),
                     "alpha_flow": flow.tolist(), "max_abs_gap": float(np.abs(gap).max()),
                     "max_abs_gap_late": float(np.abs(gap[late]).max()), "late_from_t": 0.2 * t_max,
                     "diverged": r["diverged"]})
    fig, (ax, bx) = _figure()
    ax.plot(t_fine, fine, "k-", lw=1.5, label="gradient flow (ODE)")
    for i, r in enumerate(runs):
        ax.plot(r["t"], r["alpha_sgd"], "o", ms=3, color=f"C{i}", label=f"SGD lr = {r['lr']}")
        bx.plot(r["t"], np.subtract(r["alpha_sgd"], r["alpha_flow"]), "-o", ms=2, color=f"C{i}",
                label=f"lr = {r['lr']}: max |gap| {r['max_abs_gap']:.3g}; over t ≥ {r['late_from_t']:.2g}: "
                      f"{r['max_abs_gap_late']:.3g}")
    ax.set_xlabel("t = step × lr")
    ax.set_ylabel("α")
    ax.set_title(f"SGD (batch {size['sgd_batch']}, n = ∞) vs flow, T = {T}, α₀ = {a0}")
    ax.legend(fontsize=8)
    bx.axhline(0, color="k", lw=0.5)
    bx.set_xlabel("t = step × lr")
    bx.set_ylabel("α_SGD − α_flow")
    bx.set_title("gap between SGD and the flow at the same t")
    bx.legend(fontsize=7)
    fig.suptitle(law.spec(), fontsize=8)
    fig.tight_layout()
    save_figure(fig, out / "sgd_vs_flow.png", dpi=120)
    return {"T": T, "alpha0": a0, "batch": size["sgd_batch"], "flow_t": t_fine.tolist(), "flow_alpha": fine.tolist(),
            "runs": runs}


@takes_law
def figure_full_matrix(law, out: Path, size: dict, seed: int) -> dict:
    from mmicl.numerics.lca import alpha_T
    from mmicl.numerics.mc_studies import full_matrix_study

    T = size["T"]
    a_T = alpha_T(law, T)
    runs = []
    for s in size["fm_seeds"]:
        r = full_matrix_study(law, T, steps=size["fm_steps"], seed=seed + s, batch=size["fm_batch"],
                              risk_samples=size["fm_risk_samples"])
        r.pop("history")
        r["seed"] = seed + s
        runs.append(r)
    fig, (ax, bx) = _figure()
    for i, r in enumerate(runs):
        st = [p["step"] for p in r["invariants"]]
        ax.plot(st, [p["RS_scalar"] for p in r["invariants"]], "-", color=f"C{i}", label=f"RS scalar, seed {r['seed']}")
        ax.plot(st, [p["GV_scalar"] for p in r["invariants"]], "--", color=f"C{i}", label=f"GV scalar, seed {r['seed']}")
        bx.semilogy(st, [p["RS_rel_non_scalar"] for p in r["invariants"]], "-", color=f"C{i}", label=f"RS, seed {r['seed']}")
        bx.semilogy(st, [p["GV_rel_non_scalar"] for p in r["invariants"]], "--", color=f"C{i}", label=f"GV, seed {r['seed']}")
    ax.axhline(a_T, color="k", lw=1, label=f"α_T = {a_T:.4f}")
    ax.axhline(-a_T, color="k", lw=1, ls=":", label="−α_T")
    ax.set_xlabel("Adam step")
    ax.set_ylabel("mean diagonal c of RS and GV")
    ax.set_title(f"tied full-matrix LCA, d = {law.d}, T = {T}, n = ∞")
    ax.legend(fontsize=7)
    bx.set_xlabel("Adam step")
    bx.set_ylabel("‖M − cI‖_F / ‖I‖_F (log scale)")
    bx.set_title("non-scalar residuals")
    bx.legend(fontsize=7)
    fig.suptitle(law.spec(), fontsize=8)
    fig.tight_layout()
    save_figure(fig, out / "full_matrix.png", dpi=120)
    return {"T": T, "alpha_T": a_T, "steps": size["fm_steps"], "runs": runs}


def make_figures(out: str | Path, *, size: str = "full", seed: int = 0, law_text: str = "s=uniform(0.5,4)",
                 matrix_law_text: str = "s=uniform(0.5,4); d1=2; d2=1") -> dict:
    """Run the three studies at ``SIZES[size]`` and write ``<name>.png`` and ``<name>.json`` into ``out``.
    Returns a summary (paths, seconds, and the key numbers)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    sz = SIZES[size]
    meta = {"seed": seed, "size": size, "sizes": sz}
    summary = {"out": str(out), "seed": seed, "size": size, "files": {}}
    for name, fn, text in (("finite_n_bias", figure_finite_n, law_text), ("sgd_vs_flow", figure_sgd_flow, law_text),
                           ("full_matrix", figure_full_matrix, matrix_law_text)):
        law = parse_law(text)
        t0 = time.perf_counter()
        data = fn(law, out, sz, seed)
        sec = time.perf_counter() - t0
        write_json(out / f"{name}.json", {**meta, "law": law.spec(), "seconds": round(sec, 2), **data})
        summary["files"][name] = {"png": str(out / f"{name}.png"), "json": str(out / f"{name}.json"),
                                  "seconds": round(sec, 2)}
    return summary
