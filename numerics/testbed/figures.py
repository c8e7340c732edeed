"""Figures of testbed runs (matplotlib, Agg): metric curves per arm and final values against a knob."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .experiments import ArmResults


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_curves(results: ArmResults, path: Path, metrics=("acc_icl", "acc_iwl"), title: str = "") -> Path:
    """One panel per metric: mean over seeds (line) and every seed (thin) against training step."""
    plt = _plt()
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics), 3.3), squeeze=False)
    steps = np.asarray(results.steps)
    for ax, metric in zip(axes[0], metrics):
        for i, arm in enumerate(results.arms):
            c = results.curve(metric, arm.name)
            colour = f"C{i % 10}"
            ax.plot(steps, c, color=colour, lw=0.5, alpha=0.4)
            ax.plot(steps, c.mean(1), color=colour, lw=1.8, label=arm.name)
        ax.set_xlabel("step")
        ax.set_title(metric)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_against(xs, series: dict[str, list[np.ndarray]], path: Path, xlabel: str, title: str = "",
                 logx: bool = False) -> Path:
    """Final values against a knob: for each series, the mean over seeds with a t-interval bar."""
    from .stats import t_interval

    plt = _plt()
    fig, ax = plt.subplots(figsize=(4.6, 3.3))
    for i, (name, values) in enumerate(series.items()):
        iv = [t_interval(v) for v in values]
        mean = np.array([v.mean for v in iv])
        lo = np.array([v.lo if np.isfinite(v.lo) else v.mean for v in iv])
        hi = np.array([v.hi if np.isfinite(v.hi) else v.mean for v in iv])
        ax.errorbar(xs, mean, yerr=[mean - lo, hi - mean], marker="o", capsize=3, label=name, color=f"C{i}")
    if logx:
        ax.set_xscale("log", base=2)
    ax.set_xlabel(xlabel)
    ax.set_ylim(-0.05, 1.05)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
