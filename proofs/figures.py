"""Figures of the LCA claims (matplotlib, PNG, Agg backend): each is a pure function of numbers
that the claim computed, so ``mmicl verify`` regenerates every figure from one command."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def alpha_sweep(path: Path, sweeps: dict[str, dict]) -> Path:
    """α_T and |α_T − α*| against T (log axes), and log10 excess risk against T, one line per law.

    ``sweeps[law] = {"T": [...], "alpha": [...], "alpha_star": x, "log10_excess": [...]}``."""
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for label, sw in sweeps.items():
        T = np.asarray(sw["T"], float)
        a = np.asarray(sw["alpha"], float)
        (line,) = axes[0].semilogx(T, a, "o-", label=label)
        axes[0].axhline(sw["alpha_star"], color=line.get_color(), ls=":", lw=1)
        axes[1].loglog(T, np.abs(a - sw["alpha_star"]), "o-", label=label)
        axes[2].semilogx(T, sw["log10_excess"], "o-", label=label)
    axes[0].set(xlabel="depth T", ylabel="α_T", title="α_T (dotted: α* = 2/(2+s_lo+s_hi))")
    axes[1].set(xlabel="depth T", ylabel="|α_T − α*|", title="distance to the limit")
    axes[2].set(xlabel="depth T", ylabel="log10 excess risk at α_T", title="excess risk over Bayes")
    for ax in axes:
        ax.grid(True, which="both", alpha=0.3)
    axes[1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def two_parameter_plane(path: Path, *, T: int, grid_alpha, grid_beta, loss, trajectories, starts, minimiser,
                        alpha_star: float) -> Path:
    """Loss contours in the (α, β) plane, flow trajectories, and the starts coloured by outcome.

    ``loss``: array (len(grid_beta), len(grid_alpha)) of log10 excess; ``trajectories``: list of
    (k, 2) arrays; ``starts``: list of (α0, β0, status) with status rest/other/diverged/moving."""
    fig, ax = plt.subplots(figsize=(7, 6))
    cs = ax.contourf(grid_alpha, grid_beta, loss, levels=30, cmap="viridis")
    fig.colorbar(cs, ax=ax, label="log10 excess risk")
    for tr in trajectories:
        ax.plot(tr[:, 0], tr[:, 1], "w-", lw=0.8, alpha=0.8)
    colours = {"rest": "lime", "other": "orange", "diverged": "red", "moving": "magenta"}
    for status, col in colours.items():
        pts = [(a, b) for a, b, st in starts if st == status]
        if pts:
            pa, pb = zip(*pts)
            ax.scatter(pa, pb, s=22, c=col, edgecolors="k", lw=0.4, label=f"start → {status}", zorder=3)
    ax.plot(*minimiser, "w*", ms=14, mec="k", label="(α_T, β_T)")
    xs = np.array([grid_alpha[0], grid_alpha[-1]])
    ax.plot(xs, -xs, "w--", lw=0.8, label="β = −α")
    ax.axvline(alpha_star, color="w", ls=":", lw=0.8)
    ax.set(xlim=(grid_alpha[0], grid_alpha[-1]), ylim=(grid_beta[0], grid_beta[-1]), xlabel="α", ylabel="β",
           title=f"two-parameter LCA, T = {T}: flows and basin of starts")
    ax.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
