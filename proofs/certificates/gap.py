"""A certified enclosure of Theorem 4.1's gap: the excess risk of the best single-layer LSA over Bayes.

**The formula.**  In the large-context limit the best LSA has one γ per block of m (the whole of m
for ``s=…``; v and r for ``sv=…; sr=…``; docs/lsa.md), and its excess over the task-known Bayes risk is
the minimum of a convex quadratic (``numerics.lsa._block_solution``, used here with exact arithmetic):

    G = E[ζ²] (κ − bᵀA⁻¹b),   A_ab = δ_ab E S_a + E[S_a S_b],   b_a = E S_a,   κ = E[s/(1+s)],

with ``S_a`` the block norms (independent, so ``E[S_a S_b] = E S_a E S_b`` for a ≠ b); a block with
``E S_a = 0`` carries no signal and is left out.  For ``s=…`` this is ``E[ζ²](κ − μ₁²/(μ₁ + μ₂))``
(``theory.lsa.isotropic_best_gamma``).

**What is exact.**  A and b are rational functions of the first two moments of the block norms,
rational for every supported law.  κ is not a polynomial moment: it is a finite rational sum for
atomic laws (``point``, ``discrete``, ``twopoint`` and mixtures of them), but transcendental in
general for a continuous part (``uniform(a,b)`` gives ``1 − log((1+b)/(1+a))/(b − a)``).  So the gap
of an atomic law is certified as an exact rational; for a law with a continuous part it is enclosed
by rational bounds from finitely many moments:

**The bounds on κ.**  ``κ = 1 − E[1/t]``, ``t = 1 + s``.  E is split into pieces (the leaves of the
law; for ``S_v + S_r`` the pairs of leaves): atoms give exact terms; a continuous piece has
``t = t₀ + Σ_i w_i X_i`` on ``[t₀, t₁]`` with ``X_i ~ Beta(p_i, q_i)`` independent (one or two of them).
With the centre ``c = (t₀ + t₁)/2`` and ``u = 1 − t/c = Σ_i ρ_i Y_i`` (``Y_i = 1 − 2X_i``, ``ρ_i = w_i/(2c)``,
``|u| ≤ ρ = (t₁ − t₀)/(t₁ + t₀) < 1``), the identity ``1/t = (1/c)Σ_{k<K} u^k + u^K/t`` with K even gives

    E[1/t] ∈ (1/c) Σ_{k<K} E[u^k] + [0, ρ^K / t₀],

where ``E[u^k]`` is a finite sum of products of the moments of the ``Y_i`` (``exact_law.centred_beta_moments``).
K doubles from 16 until the lower bound of G is > 0 and its relative width is below 2^−64, up to
``MAX_KAPPA_TERMS``; a law that needs more (a continuous piece with ``(1 + s_hi)/(1 + s_lo)`` above
~60) is refused with the reason.
"""
from __future__ import annotations

import math
from fractions import Fraction

from mmicl.numerics.lsa import block_solution

from .document import FORMAT, Stopwatch, exact_decimal, outward_decimal, provenance
from .exact_law import (
    Atoms,
    BetaPiece,
    ExactTaskLaw,
    UnsupportedLawError,
    centred_beta_moments,
    fraction_text,
    read_exact_law,
)
from mmicl.numerics.laws.language import parse_law
from mmicl.numerics.lsa import best_lsa

__all__ = ["MAX_KAPPA_TERMS", "RELATIVE_WIDTH", "certify_gap", "kappa_enclosure", "kappa_pieces"]

MAX_KAPPA_TERMS = 2048
"""Most series terms used for ``E[1/(1+s)]`` on a continuous piece: the remainder is ``ρ^K``, so a piece
needs ``K ≈ 45/(−ln ρ)`` terms for 10^−20; 2048 reaches ``ρ ≈ 0.978``, a support ratio
``(1 + s_hi)/(1 + s_lo) ≈ 90`` (a pair of continuous modalities costs K² products, about a second
at K = 1000 on one core)."""
RELATIVE_WIDTH = Fraction(1, 2**64)
"""The enclosure of a law with a continuous part is narrowed to ``(hi − lo) ≤ 2^−64 · lo``: far below
float64's resolution, so the float gap of the numerics can be compared with it."""
SIGNIFICANT = 30
"""Digits of the decimal bounds written beside the exact ones (rounded outwards)."""


def kappa_pieces(law: ExactTaskLaw) -> tuple[Fraction, list[tuple[Fraction, Fraction, list[BetaPiece]]]]:
    """``(exact, pieces)``: ``E[1/(1+s)] = exact + Σ weight · E[1/t]`` over the continuous pieces
    ``(weight, t₀, [Beta leaves])`` with ``t = t₀ + Σ_leaf (b − a) X_leaf``."""
    exact, pieces = Fraction(0), []
    if not law.per_modality:
        for w, leaf in law.blocks[0][1].leaves():
            if w == 0:
                continue
            if isinstance(leaf, Atoms):
                exact += w * sum((p / (1 + v) for v, p in zip(leaf.values, leaf.probs)), Fraction(0))
            else:
                pieces.append((w, 1 + leaf.a, [leaf]))
        return exact, pieces
    (_, sv), (_, sr) = law.blocks
    for wv, lv in sv.leaves():
        for wr, lr in sr.leaves():
            w = wv * wr
            if w == 0:
                continue
            if isinstance(lv, Atoms) and isinstance(lr, Atoms):
                exact += w * sum((pv * pr / (1 + v + r) for v, pv in zip(lv.values, lv.probs)
                                  for r, pr in zip(lr.values, lr.probs)), Fraction(0))
            elif isinstance(lv, Atoms) or isinstance(lr, Atoms):
                atoms, beta = (lv, lr) if isinstance(lv, Atoms) else (lr, lv)
                pieces += [(w * p, 1 + v + beta.a, [beta]) for v, p in zip(atoms.values, atoms.probs)]
            else:
                pieces.append((w, 1 + lv.a + lr.a, [lv, lr]))
    return exact, pieces


def _piece_sum(t0: Fraction, leaves: list[BetaPiece], K: int) -> tuple[Fraction, Fraction]:
    """``((1/c)Σ_{k<K} E[u^k], ρ^K/t₀)`` for one continuous piece (module docstring)."""
    widths = [leaf.b - leaf.a for leaf in leaves]
    t1 = t0 + sum(widths)
    c = (t0 + t1) / 2
    rhos = [w / (2 * c) for w in widths]
    ys = [centred_beta_moments(leaf.p, leaf.q, K) for leaf in leaves]
    if len(leaves) == 1:
        (rho,), (y,) = rhos, ys
        total, power = Fraction(0), Fraction(1)
        for k in range(K):
            total += power * y[k]
            power *= rho
    else:
        (r1, r2), (y1, y2) = rhos, ys
        p1 = [Fraction(1)]
        p2 = [Fraction(1)]
        for _ in range(K):
            p1.append(p1[-1] * r1)
            p2.append(p2[-1] * r2)
        a = [p1[j] * y1[j] for j in range(K)]
        b = [p2[j] * y2[j] for j in range(K)]
        total = sum((math.comb(k, j) * a[j] * b[k - j] for k in range(K) for j in range(k + 1)), Fraction(0))
    rho = sum(rhos)
    return total / c, rho**K / t0


def kappa_enclosure(law: ExactTaskLaw, K: int | None) -> tuple[Fraction, Fraction]:
    """``(κ_lo, κ_hi)`` with ``κ = E[s/(1+s)]`` in between (equal for an atomic law; K even)."""
    exact, pieces = kappa_pieces(law)
    lo = hi = exact  # bounds on E[1/(1+s)]
    for w, t0, leaves in pieces:
        s, r = _piece_sum(t0, leaves, K)
        lo, hi = lo + w * s, hi + w * (s + r)
    return 1 - hi, 1 - lo


def _solve(A, b):
    """``A⁻¹ b`` exactly (Gauss–Jordan in rationals; A is positive definite)."""
    n = len(b)
    M = [list(map(Fraction, row)) + [Fraction(v)] for row, v in zip(A, b)]
    for i in range(n):
        piv = M[i][i]
        M[i] = [x / piv for x in M[i]]
        for r in range(n):
            if r != i and M[r][i]:
                f = M[r][i]
                M[r] = [x - f * y for x, y in zip(M[r], M[i])]
    return [M[i][n] for i in range(n)]


def _blocks(law: ExactTaskLaw) -> list[dict]:
    dims = [law.d1 + law.d2] if not law.per_modality else [law.d1, law.d2]
    return [{"block": name, "d": d, "E_S": law_.moment(1), "E_S2": law_.moment(2)}
            for (name, law_), d in zip(law.blocks, dims)]


def gap_bounds(law: ExactTaskLaw, K: int | None) -> tuple[Fraction, Fraction, list[Fraction], list[dict]]:
    """``(G_lo, G_hi, γ per live block, blocks)``: G is linear in κ with slope E[ζ²] > 0."""
    blocks = _blocks(law)
    live = [b for b in blocks if b["E_S"] > 0]
    k_lo, k_hi = kappa_enclosure(law, K)
    z2 = law.zeta2()
    if not live:  # s ≡ 0: no signal, κ = 0 and both predictors say 0
        return z2 * k_lo, z2 * k_hi, [], blocks
    args = ([b["d"] for b in live], [b["E_S"] for b in live], [b["E_S2"] for b in live])
    gamma, g_lo, _ = block_solution(*args[:2], args[2], k_lo, z2, None, _solve)
    _, g_hi, _ = block_solution(*args[:2], args[2], k_hi, z2, None, _solve)
    return g_lo, g_hi, gamma, blocks


def certify_gap(law) -> dict:
    """A certificate (a JSON-ready dict) of the Thm 4.1 gap of ``law`` at n → ∞: an exact value
    (atomic laws) or rational bounds ``lo ≤ G ≤ hi`` (a continuous part), with ``lo > 0`` proved
    where the gap is positive (see the module docstring)."""
    watch = Stopwatch()
    with watch("read_law"):
        exact = read_exact_law(law)
    _, pieces = kappa_pieces(exact)
    with watch("bounds"):
        if not pieces:
            K = None
            g_lo, g_hi, gamma, blocks = gap_bounds(exact, None)
        else:
            _refuse_wide(pieces)
            K = 16
            while True:
                g_lo, g_hi, gamma, blocks = gap_bounds(exact, K)
                if g_lo > 0 and g_hi - g_lo <= RELATIVE_WIDTH * g_lo:
                    break
                if 2 * K > MAX_KAPPA_TERMS:
                    raise UnsupportedLawError(f"the series for E[s/(1+s)] did not separate the gap from 0 within "
                                              f"{MAX_KAPPA_TERMS} terms (bounds [{float(g_lo):.3g}, {float(g_hi):.3g}])")
                K *= 2
    positive = g_lo > 0
    lo_dec, hi_dec = outward_decimal(g_lo, SIGNIFICANT, up=False), outward_decimal(g_hi, SIGNIFICANT, up=True)
    # an exact gap is stated exactly; bounds are stated as their (short) outward decimals
    lo_claim, hi_claim = (g_lo, g_hi) if g_lo == g_hi else (lo_dec, hi_dec)
    with watch("numerics"):
        numerics_gap = _numerics_gap(exact)

    z2 = exact.zeta2()
    return {
        "format": FORMAT,
        "certificate": "lsa_gap",
        "law": exact.to_json(),
        "proved": ("The best single-layer linear self-attention (reduced form x_qᵀΓh, which the full layer cannot beat "
                   "for these laws: docs/lsa.md) in the large-context limit n → ∞ has excess risk G over the "
                   "task-known Bayes predictor with lo ≤ G ≤ hi" + (", so G > 0: it is not Bayes-optimal (Theorem 4.1)."
                                                                   if positive else "; here G = 0.")),
        "claim": {"lo": exact_decimal(lo_dec), "hi": exact_decimal(hi_dec), "lo_rational": fraction_text(lo_claim),
                  "hi_rational": fraction_text(hi_claim), "exact": g_lo == g_hi, "positive": positive},
        "formula": {"gap": "G = E[ζ²](κ − bᵀA⁻¹b)", "A": "A_ab = δ_ab E[S_a] + E[S_a S_b] (blocks with E[S_a] > 0)",
                    "b": "b_a = E[S_a]", "kappa": "κ = E[s/(1+s)]",
                    "source": "numerics/lsa.py: block_solution (docs/lsa.md, the block closed form), exact arithmetic"},
        "moments": {"E[zeta^2]": fraction_text(z2),
                    "blocks": [{"block": b["block"], "E[S]": fraction_text(b["E_S"]), "E[S^2]": fraction_text(b["E_S2"])}
                               for b in blocks],
                    "gamma": [fraction_text(g) for g in gamma]},
        "kappa": {"terms": K, "exact": K is None,
                  "method": ("finite sum over the atoms" if K is None else
                             "atoms exactly; each continuous piece by the K-term geometric series of 1/t about the "
                             "centre c of its support, remainder in [0, ρ^K/t₀]")},
        "arithmetic": {"bounds": "exact rational arithmetic (fractions.Fraction)",
                       "decimals": f"lo and hi are the bounds rounded outwards to {SIGNIFICANT} significant digits"},
        "provenance": provenance(watch.total(), numerics_gap=numerics_gap),
    }


def _refuse_wide(pieces) -> None:
    """Refuse, before any work, a continuous piece that would need more than ``MAX_KAPPA_TERMS``
    terms for a remainder of 10^−30 (the loop stops well before that for gaps above 10^−10)."""
    for _, t0, leaves in pieces:
        t1 = t0 + sum(leaf.b - leaf.a for leaf in leaves)
        rho = float((t1 - t0) / (t1 + t0))
        need = math.log(1e-30) / math.log(rho) if rho > 0 else 0
        if need > MAX_KAPPA_TERMS:
            raise UnsupportedLawError(
                f"a continuous part of s spans 1 + s in [{float(t0):.6g}, {float(t1):.6g}], a ratio of {float(t1 / t0):.4g}: "
                f"bounding E[s/(1+s)] there needs about {need:.0f} series terms, more than {MAX_KAPPA_TERMS} (ratios up "
                "to about 90 work); the gap of such a law is computed, not certified, by 'mmicl lsa'")


def _numerics_gap(exact: ExactTaskLaw) -> float | None:
    """``numerics.lsa.best_lsa(law).gap`` (float64), for the record."""

    try:
        return float(best_lsa(parse_law(exact.text)).gap)
    except (ValueError, ArithmeticError):
        return None
