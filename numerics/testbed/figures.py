"""Figures of testbed runs: metric curves per arm and final values against a knob.

matplotlib is imported lazily and used through ``matplotlib.figure.Figure`` only (no pyplot, no
``matplotlib.use``): making a figure leaves the user's backend alone."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .experiments import ArmResults
from ..atomic import save_figure

__all__ = ["METRIC_LABELS", "plot_curves", "plot_against"]


# axis labels of the metrics (numerics/testbed/metrics.py says what each one measures)
METRIC_LABELS = {
    "acc_icl": "ICL accuracy (new classes)",
    "acc_iwl": "IWL accuracy (class not in context)",
    "acc_flip": "ICL-flip accuracy (labels ℓ → ℓ+1)",
    "iwl_context_rate": "IWL: rate of copying a context label",
    "flip_weights_rate": "flip: rate of the in-weights label",
    "induction_max": "max induction strength over heads",
    "prev_token_max": "max previous-token attention over heads",
}


def _label(metric: str) -> str:
    return METRIC_LABELS.get(metric, metric)


def plot_curves(results: ArmResults, path: Path, metrics=("acc_icl", "acc_iwl"), title: str = "") -> Path:
    """One panel per metric: mean over seeds (line) and every seed (thin) against training step."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(4.6 * len(metrics), 3.9))
    axes = fig.subplots(1, len(metrics), squeeze=False)[0]
    steps = np.asarray(results.steps)
    n_seeds = len(results.seeds)
    for ax, metric in zip(axes, metrics):
        for i, arm in enumerate(results.arms):
            c = np.asarray(results.curve(metric, arm.name), float)
            colour = f"C{i % 10}"
            ax.plot(steps, c, color=colour, lw=0.5, alpha=0.4)
            ax.plot(steps, np.nanmean(c, 1) if np.isfinite(c).any() else c[:, 0], color=colour, lw=1.8,
                    label=arm.name)
        ax.set_xlabel("training step")
        ax.set_ylabel(_label(metric))
        ax.set_title(metric, fontsize=9)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7, title=f"thick: mean of {n_seeds} seeds; thin: each", title_fontsize=7)
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    save_figure(fig, path, dpi=110)
    return path


def plot_against(xs, series: dict[str, list[np.ndarray]], path: Path, xlabel: str, title: str = "",
                 logx: bool = False, categories: list[str] | None = None) -> Path:
    """Final values against a knob: for each series, the mean over seeds with a t-interval bar (95 %).

    ``categories``: the x positions are runs, not values of a knob: they are named on the axis and
    their points are not joined by lines.  Accuracies and rates live in [0, 1] and get that y range (widened to show every bar); a series with no finite value says so in
    the legend."""
    from matplotlib.figure import Figure

    from .stats import t_interval

    fig = Figure(figsize=(5.6, 4.2))
    ax = fig.subplots()
    in_unit, y_lo, y_hi = True, -0.05, 1.05
    single = False
    for i, (name, values) in enumerate(series.items()):
        mean, lo, hi = (np.full(len(values), np.nan) for _ in range(3))
        for k, v in enumerate(values):
            v = np.asarray(v, float).ravel()
            v = v[np.isfinite(v)]  # a seed that produced no finite value is left out of the mean
            if v.size:
                iv = t_interval(v)
                mean[k] = iv.mean
                # one seed: no interval (±∞), drawn without a bar
                lo[k], hi[k] = (iv.lo, iv.hi) if np.isfinite(iv.lo) and np.isfinite(iv.hi) else (iv.mean, iv.mean)
                single |= v.size < 2
        ok = np.isfinite(mean)
        if not ok.any():
            ax.plot([], [], " ", label=f"{name}: no finite value, not drawn")
            continue
        if not ok.all():
            name += f" ({int((~ok).sum())} point(s) without a finite value)"
        in_unit &= bool(np.all((mean[ok] >= 0) & (mean[ok] <= 1)))
        y_lo, y_hi = min(y_lo, float(lo[ok].min()) - 0.02), max(y_hi, float(hi[ok].max()) + 0.02)
        x = np.asarray(xs, float)[ok]
        if categories is not None:  # side by side within a run, so that the bars do not hide each other
            x = x + 0.08 * (i - (len(series) - 1) / 2)
        ax.errorbar(x, mean[ok], yerr=[mean[ok] - lo[ok], hi[ok] - mean[ok]], marker="o", capsize=3, label=name,
                    linestyle="none" if categories is not None else "-",
                    color=f"C{i % 10}")
    if logx:
        ax.set_xscale("log", base=2)
        xlabel += " (log₂ scale)"
    ax.set_xlabel(xlabel)
    ax.set_ylabel("final value (mean over seeds, 95 % t-interval)")
    if single:
        ax.plot([], [], " ", label="a point from one seed has no bar")
    if categories is not None:
        ax.set_xticks(np.asarray(xs, float), categories, rotation=20, ha="right", fontsize=7)
        ax.minorticks_off()
    elif 0 < len(xs) <= 12:  # a knob takes a few values: tick exactly those
        ax.set_xticks(np.asarray(xs, float), [f"{x:g}" if isinstance(x, (int, float)) else str(x) for x in xs])
        ax.minorticks_off()
    if in_unit:  # accuracies and rates: the whole of [0, 1], and every interval bar
        ax.set_ylim(y_lo, y_hi)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    save_figure(fig, path, dpi=110)
    return path
