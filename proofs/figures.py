"""Figures of the LCA claims (PNG): each is a pure function of numbers that the claim computed, so
``mmicl verify`` regenerates every figure from one command.

matplotlib is imported inside the functions and only through its object-oriented API
(``matplotlib.figure.Figure``): no pyplot, no ``matplotlib.use``, so importing or calling these
never changes the user's matplotlib backend or pyplot's figure list.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from mmicl.numerics.atomic import save_figure


def _finite(x, y, positive: bool = False):
    """The points of (x, y) that a plot can draw: finite y (and y > 0 on a log axis)."""
    x = np.asarray(x, float)
    y = np.asarray([np.nan if v is None else v for v in y], float)
    keep = np.isfinite(y) & (y > 0 if positive else True)
    return x[keep], y[keep], int((~keep).sum())


def _dropped_note(n_dropped: int, n_total: int, what: str) -> str:
    if n_dropped == 0:
        return ""
    if n_dropped == n_total:
        return f": not drawn, {what} at every T"
    return f": {n_dropped} of {n_total} points not drawn, {what}"


def alpha_sweep(path: Path, sweeps: dict[str, dict]) -> Path:
    """α_T against T, |α_T − α*| against T (log axes), and log10 excess risk against T, one line per law.

    ``sweeps[law] = {"T": [...], "alpha": [...], "alpha_star": x, "log10_excess": [...]}``.  The excess is
    plotted as its log10 on a linear axis: beyond T ≈ 10³ it is far below what float64 can hold
    (e.g. 10⁻⁵³⁸¹ at T = 10⁴).  A law with points that cannot be drawn (|α_T − α*| = 0, or an excess of
    exactly 0 for a one-point law) says so in the legend rather than vanishing from the panel."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(16, 4.9 + 0.2 * len(sweeps)), layout="constrained")  # room for the legends below
    axes = fig.subplots(1, 3)
    drawn = [0, 0, 0]  # points drawn per panel: a log axis with none cannot be drawn at all
    for i, (label, sw) in enumerate(sweeps.items()):
        colour = f"C{i % 10}"
        T = np.asarray(sw["T"], float)
        a = np.asarray(sw["alpha"], float)
        axes[0].plot(T, a, "o-", color=colour, label=label)
        drawn[0] += len(T)
        axes[0].axhline(sw["alpha_star"], color=colour, ls=":", lw=1)
        x, y, n = _finite(T, np.abs(a - sw["alpha_star"]), positive=True)
        axes[1].plot(x, y, "o-", color=colour,
                     label=label + _dropped_note(n, len(T), "α_T = α* in float64 (0 has no log)"))
        drawn[1] += len(x)
        x, y, n = _finite(T, sw["log10_excess"])
        axes[2].plot(x, y, "o-", color=colour,
                     label=label + _dropped_note(n, len(T), "excess exactly 0 (log₁₀ = −∞)"))
        drawn[2] += len(x)
    for ax, n in zip(axes, drawn):
        if n:
            ax.set_xscale("log")
        else:
            ax.text(0.5, 0.5, "nothing to draw\n(see the legend)", transform=ax.transAxes, ha="center", va="center")
        ax.grid(True, which="both", alpha=0.3)
        ax.set_xlabel("depth T (log scale)")
    if drawn[1]:
        axes[1].set_yscale("log")
    axes[0].set(ylabel="α_T", title="minimiser α_T (dotted: α* = 2/(2+s_lo+s_hi))")
    axes[1].set(ylabel="|α_T − α*| (log scale)", title="distance to the limit α*")
    axes[2].set(ylabel="log₁₀(excess risk over Bayes at α_T)",
                title="excess risk (as its log₁₀: it underflows float64)")
    for ax in axes:  # under each panel: on it, a long note about a law hid the lines
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.13), frameon=False)
    save_figure(fig, path, dpi=110)
    return path


def two_parameter_plane(path: Path, *, T: int, grid_alpha, grid_beta, loss, trajectories, starts, minimiser,
                        alpha_star: float) -> Path:
    """Loss contours in the (α, β) plane, flow trajectories, and the starts coloured by outcome.

    ``loss``: array (len(grid_beta), len(grid_alpha)) of log10 excess; ``trajectories``: list of
    (k, 2) arrays; ``starts``: list of (α0, β0, status) with status rest/other or an outcome of ``flows.gradient_flow_two``."""
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    fig = Figure(figsize=(8, 7.4), layout="constrained")
    ax = fig.subplots()
    cs = ax.contourf(grid_alpha, grid_beta, loss, levels=30, cmap="viridis")
    fig.colorbar(cs, ax=ax, label="log₁₀ excess risk (clipped to [10⁻¹⁶, 10⁶])")
    for tr in trajectories:
        tr = np.asarray(tr, float)
        ax.plot(tr[:, 0], tr[:, 1], "w-", lw=0.8, alpha=0.8)
    handles = [Line2D([], [], color="w", lw=0.8, label="gradient-flow paths")] if len(trajectories) else []
    colours = {"rest": "lime", "other": "orange", "degenerate": "white", "plateau": "yellow", "diverged": "red",
               "moving": "magenta", "stiff-failure": "cyan"}
    meaning = {"rest": "converges to (α_T, β_T)", "other": "comes to rest at another minimum",
               "degenerate": "stationary, Hessian not definite to float64",
               "plateau": "plateau α ≈ 0 of the zero predictor (below float64's resolution)",
               "diverged": "diverges (|α| or |β| > 10)", "moving": "still moving at the end",
               "stiff-failure": "the stiff integrator gave up"}
    for status, col in colours.items():
        pts = [(a, b) for a, b, st in starts if st == status]
        if pts:
            pa, pb = zip(*pts)
            handles.append(ax.scatter(pa, pb, s=26, c=col, edgecolors="k", lw=0.4, zorder=3, clip_on=False,
                                      label=f"start: {meaning[status]} ({len(pts)})"))
    handles += ax.plot(*minimiser, "w*", ms=15, mec="k", label="minimiser (α_T, β_T)")
    xs = np.array([grid_alpha[0], grid_alpha[-1]])
    handles += ax.plot(xs, -xs, "w--", lw=0.9, label="β = −α")
    handles.append(ax.axvline(alpha_star, color="w", ls=":", lw=0.9, label=f"α = α* = {alpha_star:.4g}"))
    ax.set(xlim=(grid_alpha[0], grid_alpha[-1]), ylim=(grid_beta[0], grid_beta[-1]), xlabel="α  (W^S = αI)",
           ylabel="β  (W^V = βI)")
    ax.set_title(f"two-parameter LCA, T = {T}: flows and basin of starts", pad=10)
    # the legend sits under the plane (on it, it hid the starts it describes), on a dark ground so
    # that the white lines it names show
    fig.legend(handles=handles, fontsize=8, loc="outside lower center", ncol=2, facecolor="0.3", labelcolor="w",
               framealpha=1, edgecolor="0.3")
    save_figure(fig, path, dpi=110)
    return path
