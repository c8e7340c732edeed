"""Figures of the LCA claims (PNG): each is a pure function of numbers that the claim computed, so
``mmicl verify`` regenerates every figure from one command.

matplotlib is imported inside the functions and only through its object-oriented API
(``matplotlib.figure.Figure``): no pyplot, no ``matplotlib.use``, so importing or calling these
never changes the user's matplotlib backend or pyplot's figure list.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from mmicl.numerics.atomic import save_figure

__all__ = ["alpha_sweep", "two_parameter_plane", "limits_series", "limits_caption", "limits_one"]



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


# ---- mmicl limits --model one --out DIR: limits_one.png ------------------------------------------
def limits_series(res: dict, ex) -> dict:
    """What ``limits_one`` draws, from ``mmicl limits``'s JSON (``res``, model one) and the law's
    derived expansion ``ex`` (``numerics.asymptotics.alpha_expansion``).

    Left panel: ``T·(α* − α_T)`` computed at each depth (``res["rows"]``), against log T, with the
    derived leading term ``a·log T + c`` (``a = 0`` for the form ``c/T``): a straight line in log T,
    the log T term visible as its slope, which a log–log plot of |α* − α_T| hides; and the whole
    derived expansion ``T·ex.gap(T)`` (in n = 2T − 1, with the 1/T² term where it is derived).
    Right panel: ``log₁₀(excess at α_T)/T`` computed and from the derived leading term of the
    excess, and the limits they tend to, log₁₀ of the rate per layer (tied ρ², untied)."""
    rows = res["rows"]
    T = np.array([r["T"] for r in rows], float)
    grid = np.logspace(np.log10(T[0]), np.log10(T[-1]), 200)
    a, c = ex.log_coefficient, ex.coefficient
    if ex.form == "c/T":
        leading = f"derived leading term: T·(α* − α_T) → c = {c:.4g}  (α* − α_T ≈ c/T)"
    else:
        leading = f"derived leading term a·log T + c, a = {a:.4g}, c = {c:.4g}  (α* − α_T ≈ (a log T + c)/T)"
    whole = "whole derived expansion, in n = 2T − 1" + (" (with its second order)" if ex.second is not None else "")
    xrows = res["excess_rows"]
    rate = res["excess_decay_per_layer"]
    levels = [(math.log10(rate["tied"]), f"log₁₀ ρ² = {math.log10(rate['tied']):.4g}: the tied rate per layer "
                                         f"(ρ² = {rate['tied']:.4g}), the limit as T → ∞")] if rate["tied"] > 0 else []
    if rate.get("untied"):
        levels.append((math.log10(rate["untied"]), f"log₁₀ {rate['untied']:.4g} = {math.log10(rate['untied']):.4g}: "
                                                   "the untied optimum's rate per layer, predicted"))
    return {
        "T": T, "T_gap": np.array([r["T_gap_computed"] for r in rows], float),
        "grid": grid, "leading": a * np.log(grid) + c, "expansion": np.array([round(t) * ex.gap(round(t)) for t in grid]),
        "labels": {"computed": "computed T·(α* − α_T), α_T by root finding", "leading": leading, "expansion": whole},
        "excess_T": np.array([r["T"] for r in xrows], float),
        "excess_computed": np.array([r["log10_computed"] / r["T"] for r in xrows], float),
        "excess_derived": np.array([r["log10_predicted"] / r["T"] for r in xrows], float),
        "excess_labels": {"computed": "computed log₁₀(excess at α_T)/T",
                          "derived": "derived leading term log₁₀(E[ζ²]·L·ρ^(2T)·(2T)^(−p))/T"},
        "levels": levels,
    }


def limits_caption(law: str, ex) -> str:
    """The caption ``limits_one`` writes into its PNG (the report shows it)."""
    form = "c/T" if ex.form == "c/T" else "(a·log T + c)/T"
    return (f"mmicl limits, one-parameter LCA on {law}: left, T·(α* − α_T) against the depth T on a log axis, "
            f"computed (markers) and derived (lines; here α* − α_T ≈ {form}, so the derived leading term is "
            f"{'flat' if ex.form == 'c/T' else 'a straight line of slope a'} in log T); right, log₁₀ of the excess "
            "risk over Bayes at α_T per layer, computed and derived, with the rates per layer it tends to.")


def limits_one(path: Path, res: dict, ex, title: str = "") -> Path:
    """The figure of ``mmicl limits --model one --out DIR`` (``limits_series`` says what it draws)."""
    from matplotlib.figure import Figure

    s = limits_series(res, ex)
    fig = Figure(figsize=(13, 5.6), layout="constrained")
    a1, a2 = fig.subplots(1, 2)
    a1.plot(s["T"], s["T_gap"], "o", color="C0", label=s["labels"]["computed"], zorder=3)
    a1.plot(s["grid"], s["leading"], "-", color="C1", label=s["labels"]["leading"])
    a1.plot(s["grid"], s["expansion"], "--", color="C2", label=s["labels"]["expansion"])
    a1.set_xscale("log")
    a1.set(xlabel="depth T (log scale)", ylabel="T·(α* − α_T)", title=f"T·(α* − α_T) against log T\n{title}")
    a2.plot(s["excess_T"], s["excess_computed"], "o", color="C0", label=s["excess_labels"]["computed"], zorder=3)
    a2.plot(s["excess_T"], s["excess_derived"], "-", color="C1", label=s["excess_labels"]["derived"])
    for (level, label), colour in zip(s["levels"], ("C3", "C4")):
        a2.axhline(level, ls=":", color=colour, label=label)
    a2.set_xscale("log")
    a2.set(xlabel="depth T (log scale)", ylabel="log₁₀(excess risk over Bayes at α_T) / T",
           title="excess per layer")
    for ax in (a1, a2):
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.14), frameon=False)
    save_figure(fig, path, dpi=110, metadata={"Description": limits_caption(title or res.get("law", ""), ex)})
    return path
