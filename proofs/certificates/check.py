"""Re-check an mmicl certificate with nothing but the standard library.

    python -m mmicl.proofs.certificates.check FILE        (or: python check.py FILE, standalone)

This module is the independent half of ``mmicl certify``: it imports only ``fractions``, ``json``,
``math`` and ``sys`` (and, for an all-depth certificate, ``tail.py`` beside it, which imports ``fractions``
and ``math``), never the certifier, the numerics or the theory, and it trusts no number in
the certificate that it can recompute.  From the law as the certificate writes it (every parameter
a rational ``"p/q"``; the LAW text is read again here and must give the same law) it recomputes,
in exact rational arithmetic and by its own route:

``alpha_T``  the signs of ``D(α) = 2T·E[ζ²]·E[s·(α(1+s) − 1)^(2T−1)]`` (the α-derivative of the
             one-parameter LCA loss at depth T) at ``lo`` and ``hi``, which must be ``< 0`` and ``> 0``;
             ``lo < hi`` and ``hi − lo < width``; and the facts of the uniqueness argument: every value
             of s is ≥ 0, ``E[ζ²] > 0``, ``E[s(1+s)] > 0``.  Then ``D' = 2T(2T−1)E[ζ²]E[s(1+s)r^(2T−2)] ≥ 0``
             (even power) with ``D'(0) = 2T(2T−1)E[ζ²]E[s(1+s)] > 0``, so D increases strictly and its
             only zero, the unique minimiser α_T, lies in (lo, hi).
``lsa_gap``  ``G = E[ζ²](κ − bᵀA⁻¹b)`` from the first two moments of the block norms and
             ``κ = E[s/(1+s)]`` (exactly for atoms; for a continuous piece ``t = 1 + s ∈ [t₀, t₁]`` by the
             K-term series ``E[1/t] ∈ (1/c)Σ_{k<K}E[u^k] + [0, ρ^K/t₀]``, ``c = (t₀+t₁)/2``,
             ``u = 1 − t/c``, ``ρ = (t₁−t₀)/(t₁+t₀)``, K even), and checks that the claimed bounds
             contain it (equal it, for an exact gap) and that the lower bound is > 0 where G > 0 is
             claimed.
``alpha_all_T``  every ``alpha_T`` certificate of T = 1, …, T₀ − 1 as above, the side of α* each
             encloses, and the tail proof for T ≥ T₀ (``tail.check_tail``: the end form of the law, the
             expansion cancelling F to second order exactly over ℚ[λ], the third-order coefficients'
             signs over the box of T₀ in interval arithmetic, the tail's side), and the statement.

The inequalities that carry the proofs are strict where the statements are: ``D(lo) < 0 < D(hi)`` (a
zero at an end is the root on the boundary of the open (lo, hi), refused), ``hi − lo < width``, and
``lo > 0`` for ``G > 0`` (``lo = 0`` is refused).  The bounds on G are closed: ``lo ≤ G ≤ hi``.

How D is evaluated here (the certifier expands it as a polynomial in α instead): for atoms, term by
term; for ``S = a + wX``, ``X ~ Beta(p, q)``, ``r = α(1+S) − 1 = U + VX`` is itself affine in X, and its
moments ``M_n = E[r^n]`` obey the three-term recurrence (``r ∈ [t₀, t₁]``, ``t₀ = U``, ``t₁ = U + V``)

    (n + p + q) M_{n+1} = (n(t₀ + t₁) + p t₁ + q t₀) M_n − n t₀ t₁ M_{n−1},

(integrate ``d/dr [r^n (r − t₀)^p (t₁ − r)^q]`` over the support), run in integers over nested common
denominators; since ``s = (r + 1 − α)/α``, ``E[s r^N] = (M_{N+1} + (1 − α) M_N)/α``.  For two continuous
modalities r is the sum of two independent such parts, and ``M_n`` their binomial convolution.

``check(certificate) -> (ok, reasons)``: ``reasons`` lists every check that failed (empty when ok).
A document ``{"certificates": [...]}`` (a bundle) is ok when each of its certificates is.
"""
from __future__ import annotations

import json
import math
import sys
from fractions import Fraction

__all__ = ["FORMAT", "MAX_T", "MAX_TERMS", "law_from_text", "law_pieces", "derivative_value", "reciprocal_bounds", "check", "main"]

FORMAT = "mmicl-certificate/1"
MAX_T = 100_000
"""Depths beyond this are refused rather than re-checked (the work grows like T²)."""
MAX_TERMS = 100_000
"""Series lengths (``kappa.terms``) beyond this are refused rather than re-checked."""


class _Bad(Exception):
    """A certificate that cannot be read as one."""


def _q(text) -> Fraction:
    """A rational written as text (``"p/q"``, ``"4"``, a decimal); nothing else."""
    if not isinstance(text, str):
        raise _Bad(f"expected a rational as a string, got {text!r}")
    try:
        return Fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        raise _Bad(f"{text!r} is not a rational number") from None


# ---------------------------------------------------------------------------------------------
# the law: its normal form, read from the LAW text, and its leaves
# ---------------------------------------------------------------------------------------------


def _split(text: str, sep: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if depth < 0:
            raise _Bad(f"unbalanced parentheses in {text!r}")
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if depth:
        raise _Bad(f"unbalanced parentheses in {text!r}")
    parts.append("".join(cur))
    return parts


def _num(text: str) -> str:
    return str(_q(text))


def _dist_from_text(text: str) -> dict:
    """The normal form of a DIST (docs/certificates.md): twopoint as point or discrete, discrete
    probabilities divided by their sum with zero ones dropped, every number as ``str(Fraction)``."""
    text = text.strip()
    if not text.endswith(")") or "(" not in text:
        raise _Bad(f"expected NAME(ARGS) in the LAW text, got {text!r}")
    name, inner = text[: text.index("(")].strip(), text[text.index("(") + 1 : -1]
    args = _split(inner, ",") if inner.strip() else []
    if name == "point" and len(args) == 1:
        return {"family": "point", "c": _num(args[0])}
    if name == "uniform" and len(args) == 2:
        return {"family": "uniform", "a": _num(args[0]), "b": _num(args[1])}
    if name == "beta" and len(args) == 4:
        return {"family": "beta", **{k: _num(a) for k, a in zip("pqab", args)}}
    if name == "twopoint" and len(args) == 3:
        a, b, p = (_q(x) for x in args)
        if a == b or p in (0, 1):
            return {"family": "point", "c": str(a if p > 0 else b)}
        return {"family": "discrete", "values": [str(a), str(b)], "probs": [str(p), str(1 - p)]}
    if name == "discrete" and args:
        pairs = [(_q(v), _q(p)) for v, _, p in (a.partition(":") for a in args)]
        total = sum(p for _, p in pairs)
        if total <= 0:
            raise _Bad(f"{text}: probabilities with no positive sum")
        kept = [(v, p / total) for v, p in pairs if p > 0]
        return {"family": "discrete", "values": [str(v) for v, _ in kept], "probs": [str(p) for _, p in kept]}
    if name == "mix" and args:
        pairs = [a.partition("*") for a in args]
        return {"family": "mix", "weights": [_num(w) for w, _, _ in pairs], "parts": [_dist_from_text(d) for _, _, d in pairs]}
    raise _Bad(f"{text!r} is not a family a certificate can be about")


def law_from_text(text: str) -> dict:
    """The normal form of a LAW text (without the text itself)."""
    items: dict[str, str] = {}
    for part in _split(text, ";"):
        if not part.strip():
            continue
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or key not in ("s", "sv", "sr", "zeta", "d1", "d2") or key in items:
            raise _Bad(f"the LAW text {text!r} has a bad item {part.strip()!r}")
        items[key] = value.strip()
    out: dict = {key: _dist_from_text(items[key]) for key in ("s", "sv", "sr") if key in items}
    zeta = items.get("zeta", "normal")
    if zeta in ("normal", "rademacher"):
        out["zeta"] = {"family": zeta}
    elif zeta.startswith("const(") and zeta.endswith(")"):
        out["zeta"] = {"family": "const", "c": _num(zeta[6:-1])}
    else:
        raise _Bad(f"zeta={zeta} is not normal, rademacher or const(c)")
    for key in ("d1", "d2"):
        try:
            out[key] = int(items.get(key, "1"))
        except ValueError:
            raise _Bad(f"{key}={items[key]} is not an integer") from None
    return out


def law_pieces(block: dict) -> list[tuple[Fraction, tuple]]:
    """The law of s of a certificate's law block as ``[(weight, piece)]`` (``_Law.pieces``), checked
    against its LAW text on the way."""
    try:
        return _Law(block).pieces()
    except _Bad as err:
        raise ValueError(str(err)) from None


def _leaves(nf: dict, weight: Fraction = Fraction(1)) -> list[tuple[Fraction, tuple]]:
    """``[(weight, leaf)]``: a leaf is ``("atoms", values, probs)`` or ``("beta", p, q, a, b)``;
    the law's parameters are checked on the way (a law that is not one is a bad certificate)."""
    fam = nf.get("family")
    if fam == "point":
        c = _q(nf["c"])
        if c < 0:
            raise _Bad("an atom is negative: s is a squared norm")
        return [(weight, ("atoms", [c], [Fraction(1)]))]
    if fam == "discrete":
        values, probs = [_q(v) for v in nf["values"]], [_q(p) for p in nf["probs"]]
        if not values or len(values) != len(probs) or min(values) < 0 or min(probs) <= 0 or sum(probs) != 1:
            raise _Bad("a discrete law needs values ≥ 0 and probabilities > 0 that sum to exactly 1")
        return [(weight, ("atoms", values, probs))]
    if fam in ("uniform", "beta"):
        p, q = (Fraction(1), Fraction(1)) if fam == "uniform" else (_q(nf["p"]), _q(nf["q"]))
        a, b = _q(nf["a"]), _q(nf["b"])
        if not (0 <= a < b and p > 0 and q > 0):
            raise _Bad(f"{fam} needs 0 ≤ a < b and p, q > 0")
        return [(weight, ("beta", p, q, a, b))]
    if fam == "mix":
        weights = [_q(w) for w in nf["weights"]]
        if len(weights) != len(nf["parts"]) or min(weights) < 0 or sum(weights) != 1:
            raise _Bad("mixture weights must be ≥ 0 and sum to exactly 1")
        return [leaf for w, part in zip(weights, nf["parts"]) for leaf in _leaves(part, weight * w)]
    raise _Bad(f"unknown family {fam!r}")


class _Law:
    """The certificate's law, checked against its own LAW text."""

    def __init__(self, block: dict):
        if not isinstance(block, dict) or not isinstance(block.get("text"), str):
            raise _Bad("the law block needs its LAW text")
        written = {k: v for k, v in block.items() if k != "text"}
        if law_from_text(block["text"]) != written:
            raise _Bad(f"the law written in the certificate is not the law of its text {block['text']!r}")
        names = [k for k in ("s", "sv", "sr") if k in written]
        if names not in (["s"], ["sv", "sr"]):
            raise _Bad("the law needs s=…, or sv=… and sr=…")
        self.blocks = [(name, _leaves(written[name])) for name in names]
        zeta = written["zeta"]
        self.zeta2 = _q(zeta["c"]) ** 2 if zeta["family"] == "const" else Fraction(1)
        self.dims = [written["d1"] + written["d2"]] if names == ["s"] else [written["d1"], written["d2"]]

    @staticmethod
    def block_moment(leaves, k: int) -> Fraction:
        """``E[S^k]`` of one block."""
        total = Fraction(0)
        for w, leaf in leaves:
            if leaf[0] == "atoms":
                total += w * sum(p * v**k for v, p in zip(leaf[1], leaf[2]))
            else:
                _, p, q, a, b = leaf
                m = [Fraction(1)]
                for i in range(k):
                    m.append(m[-1] * (p + i) / (p + q + i))
                total += w * sum(math.comb(k, j) * a ** (k - j) * (b - a) ** j * m[j] for j in range(k + 1))
        return total

    def s_moment(self, k: int) -> Fraction:
        if len(self.blocks) == 1:
            return self.block_moment(self.blocks[0][1], k)
        (_, v), (_, r) = self.blocks
        return sum(math.comb(k, j) * self.block_moment(v, j) * self.block_moment(r, k - j) for j in range(k + 1))

    def pieces(self) -> list[tuple[Fraction, tuple]]:
        """The law of s as ``[(weight, piece)]``: ``("atoms", values, probs)``, ``("beta", p, q, a, b)``
        (an atom of the other modality shifts a), or ``("pair", beta1, beta2)`` (two continuous
        modalities)."""
        if len(self.blocks) == 1:
            return [(w, leaf) for w, leaf in self.blocks[0][1] if w]
        out = []
        (_, v), (_, r) = self.blocks
        for wv, lv in v:
            for wr, lr in r:
                w = wv * wr
                if not w:
                    continue
                if lv[0] == lr[0] == "atoms":
                    out.append((w, ("atoms", [x + y for x in lv[1] for y in lr[1]], [p * q for p in lv[2] for q in lr[2]])))
                elif lv[0] == "atoms" or lr[0] == "atoms":
                    atoms, beta = (lv, lr) if lv[0] == "atoms" else (lr, lv)
                    _, p, q, a, b = beta
                    out += [(w * pa, ("beta", p, q, a + x, b + x)) for x, pa in zip(atoms[1], atoms[2])]
                else:
                    out.append((w, ("pair", lv, lr)))
        return out


# ---------------------------------------------------------------------------------------------
# alpha_T
# ---------------------------------------------------------------------------------------------


def _affine_beta_moments(t0: Fraction, t1: Fraction, p: Fraction, q: Fraction, n: int):
    """``E[r^k]``, ``k = 0..n``, for ``r = t₀ + (t₁ − t₀)X``, ``X ~ Beta(p, q)``, as unreduced pairs
    ``(numerator, denominator)`` of integers from the recurrence of the module docstring
    (``M_k = N_k / (v^k E_k)``, ``E_k = Π_{i<k} a_i``: every step multiplies by small integers)."""
    v = math.lcm(t0.denominator, t1.denominator)
    u0, u1 = int(t0 * v), int(t1 * v)
    pn, pd, qn, qd = p.numerator, p.denominator, q.numerator, q.denominator
    L, sigma = pd * qd, pn * qd + qn * pd
    nums, dens = [1, pn * qd * u1 + qn * pd * u0], [1, v * sigma]
    for k in range(1, n):
        a_prev, a_k = (k - 1) * L + sigma, k * L + sigma
        b_k = k * L * (u0 + u1) + pn * qd * u1 + qn * pd * u0
        c_k = k * L * u0 * u1
        nums.append(b_k * nums[k] - c_k * a_prev * nums[k - 1])
        dens.append(dens[k] * v * a_k)
    return list(zip(nums, dens))[: n + 1]


def _beta_moments_of_r(alpha: Fraction, N: int, p: Fraction, q: Fraction, a: Fraction, b: Fraction):
    """``E[r^k]`` (k ≤ N + 1) for ``r = α(1+S) − 1``, ``S = a + (b − a)X``: r runs over
    ``[α(1+a) − 1, α(1+b) − 1]`` as an affine image of X."""
    return _affine_beta_moments(alpha * (1 + a) - 1, alpha * (1 + b) - 1, p, q, N + 1)


def _convolved(t0: Fraction, t1: Fraction, p1: Fraction, q1: Fraction, V2: Fraction, p2: Fraction, q2: Fraction,
               n: int) -> Fraction:
    """``E[(r₁ + r₂)^n]`` for independent ``r₁ = t₀ + (t₁ − t₀)X₁`` and ``r₂ = V₂X₂`` (``X_i ~ Beta(p_i, q_i)``):
    ``Σ_k c_k A_k`` with ``A_k = E[r₁^k]`` and ``c_k = C(n, k) E[r₂^{n−k}] = C(n, k) V₂^{n−k} E[X₂^{n−k}]``.

    ``A`` obeys the recurrence of the module docstring, ``A_{k+1} = α_k A_k + β_k A_{k−1}`` with
    ``α_k = (k(t₀+t₁) + p₁t₁ + q₁t₀)/(k + p₁ + q₁)``, ``β_k = −k t₀t₁/(k + p₁ + q₁)`` (``β₀ = 0``, ``A₀ = 1``), so
    Clenshaw's backward sum ``b_k = c_k + α_k b_{k+1} + β_{k+1} b_{k+2}`` (``b_{n+1} = b_{n+2} = 0``) gives
    ``Σ c_k A_k = b₀``.  ``c_k = c_{k+1} μ_k`` with the small ratio
    ``μ_k = (k+1)/(n−k) · V₂ (p₂ + n−k−1)/(p₂ + q₂ + n−k−1)``.  ``b_k`` is kept as ``Z_k/G_k`` with
    ``G_k = G_{k+1} g_k``, ``g_k = den(α_k) den(β_{k+1}) den(μ_k)``, so that every step multiplies big
    integers by small ones only:

        Z_k = c_k G_k + num(α_k) den(β_{k+1}) den(μ_k) Z_{k+1} + num(β_{k+1}) den(α_k) den(μ_k) g_{k+1} Z_{k+2},
        c_k G_k = c_{k+1} G_{k+1} · num(μ_k) den(α_k) den(β_{k+1})."""
    def alpha_k(k):
        return (k * (t0 + t1) + p1 * t1 + q1 * t0) / (k + p1 + q1)

    def beta_k(k):
        return -k * t0 * t1 / (k + p1 + q1)

    Z_next2, Z_next, cG, g_next = 0, 1, 1, 1  # Z_{n+1} = 0, Z_n = c_n G_n = 1 (c_n = 1, G_n = 1)
    G = 1
    for k in range(n - 1, -1, -1):
        a, b = alpha_k(k), beta_k(k + 1)
        mu = Fraction(k + 1, n - k) * V2 * (p2 + n - k - 1) / (p2 + q2 + n - k - 1)
        g = a.denominator * b.denominator * mu.denominator
        cG = cG * mu.numerator * a.denominator * b.denominator
        Z = (cG + a.numerator * b.denominator * mu.denominator * Z_next
             + b.numerator * a.denominator * mu.denominator * g_next * Z_next2)
        Z_next2, Z_next, g_next = Z_next, Z, g
        G *= g
    return Fraction(Z_next, G)


def _power_mean(law_piece: tuple, alpha: Fraction, N: int) -> tuple[Fraction, Fraction]:
    """``(E[r^N], E[r^{N+1}])``, ``r = α(1+s) − 1``, over one continuous piece of the law."""
    if law_piece[0] == "beta":
        moments = _beta_moments_of_r(alpha, N, *law_piece[1:])
        return Fraction(*moments[N]), Fraction(*moments[N + 1])
    _, (_, p1, q1, a1, b1), (_, p2, q2, a2, b2) = law_piece
    # r = (α(1 + a₁ + a₂) − 1 + α w₁X₁) + α w₂X₂: the two parts independent
    t0, t1, V2 = alpha * (1 + a1 + a2) - 1, alpha * (1 + b1 + a2) - 1, alpha * (b2 - a2)
    return _convolved(t0, t1, p1, q1, V2, p2, q2, N), _convolved(t0, t1, p1, q1, V2, p2, q2, N + 1)


def derivative_value(law: _Law, T: int, alpha: Fraction) -> Fraction:
    """``D(α) = 2T E[ζ²] E[s r^N]``, ``r = α(1+s) − 1``, ``N = 2T − 1``, exactly.  Over a continuous
    piece, ``s = (r + 1 − α)/α`` turns it into moments of r: ``E[s r^N] = (E[r^{N+1}] + (1 − α)E[r^N])/α``
    (α ≠ 0; at α = 0, ``r ≡ −1`` and ``E[s r^N] = −E[s]``)."""
    N = 2 * T - 1
    if alpha == 0:
        return -2 * T * law.zeta2 * law.s_moment(1)
    total = Fraction(0)
    for w, piece in law.pieces():
        if piece[0] == "atoms":
            total += w * sum(p * v * (alpha * (1 + v) - 1) ** N for v, p in zip(piece[1], piece[2]))
        else:
            mN, mN1 = _power_mean(piece, alpha, N)
            total += w * (mN1 + (1 - alpha) * mN) / alpha
    return 2 * T * law.zeta2 * total


def _log10_abs(x: Fraction) -> float:
    return math.log10(abs(x.numerator)) - math.log10(x.denominator)


def _check_alpha(cert: dict, law: _Law, reasons: list[str]) -> None:
    T = cert.get("T")
    if isinstance(T, bool) or not isinstance(T, int) or not 1 <= T <= MAX_T:
        reasons.append(f"T must be an integer from 1 to {MAX_T}, got {T!r}")
        return
    claim = cert["claim"]
    lo, hi, width = _q(claim["lo_rational"]), _q(claim["hi_rational"]), _q(claim["width"])
    for key, value in (("lo", lo), ("hi", hi)):
        if _q(claim[key]) != value:
            reasons.append(f"the decimal {key} = {claim[key]} is not the rational {key}_rational = {value}")
    if not lo < hi:
        reasons.append(f"lo = {lo} is not below hi = {hi}: an enclosure needs lo < hi")
    if not hi - lo < width:  # strictly: the statement is hi − lo < width (width > 0 follows, since lo < hi)
        reasons.append(f"hi − lo = {hi - lo} is not below the width {width}: claim a larger width or narrow [lo, hi]")
    if _q(claim["hi_minus_lo"]) != hi - lo:
        reasons.append("hi_minus_lo is not hi − lo")
    # the uniqueness argument
    facts = cert["uniqueness"]
    nonneg = all(min(leaf[1]) >= 0 if leaf[0] == "atoms" else leaf[3] >= 0 for _, leaves in law.blocks for _, leaf in leaves)
    positive_mass = any(w > 0 and (leaf[0] == "beta" or max(leaf[1]) > 0) for _, leaves in law.blocks for w, leaf in leaves)
    m = law.s_moment(1) + law.s_moment(2)
    if not (nonneg and facts.get("s_nonnegative") is True):
        reasons.append("s ≥ 0 fails or is not claimed: the even-power argument needs s(1+s) ≥ 0")
    if not (positive_mass and facts.get("P(s>0)>0") is True):
        reasons.append("P(s > 0) > 0 fails or is not claimed: without it the loss is constant in α")
    if _q(facts["E[zeta^2]"]) != law.zeta2:
        reasons.append(f"E[ζ²] is {law.zeta2}, not the recorded {facts['E[zeta^2]']}")
    if not law.zeta2 > 0:
        reasons.append(f"E[ζ²] = {law.zeta2} is not > 0: the loss does not depend on α, so α_T is not unique")
    if _q(facts["E[s(1+s)]"]) != m:
        reasons.append(f"E[s(1+s)] is {m}, not the recorded {facts['E[s(1+s)]']}")
    if not m > 0:
        reasons.append(f"E[s(1+s)] = {m} is not > 0: D'(0) = 0 and the uniqueness argument fails (s = 0 on every prompt)")
    # the signs: strictly D(lo) < 0 < D(hi).  A zero at an end is the root itself, on the boundary of the
    # open interval (lo, hi) that the statement names, so it is refused like a wrong sign.
    recorded = cert["derivative"]
    for key, x, want in (("at_lo", lo, -1), ("at_hi", hi, 1)):
        end = key[3:]
        d = derivative_value(law, T, x)
        sign = (d > 0) - (d < 0)
        if d == 0:
            reasons.append(f"D({end}) = 0 at {end} = {x}: {end} is the minimiser itself, not strictly "
                           f"{'below' if want < 0 else 'above'} it; move {end} {'down' if want < 0 else 'up'} by a grid step")
        elif sign != want:
            reasons.append(f"D({end}) has sign {sign:+d} at {end} = {x}; the enclosure needs {want:+d}: "
                           f"move {end} {'down' if want < 0 else 'up'}, past the minimiser")
        if recorded[key].get("sign") != sign:
            reasons.append(f"the recorded sign of D {key} ({recorded[key].get('sign')!r}) is not the recomputed {sign:+d}")
        log10 = recorded[key].get("log10_abs")
        if d != 0 and not (isinstance(log10, (int, float)) and not isinstance(log10, bool)
                           and abs(log10 - _log10_abs(d)) <= 1e-6):
            reasons.append(f"the recorded log10|D| {key} ({log10!r}) is not the recomputed {_log10_abs(d):.9f}")


# ---------------------------------------------------------------------------------------------
# lsa_gap
# ---------------------------------------------------------------------------------------------


def _centred_moments(p: Fraction, q: Fraction, n: int) -> list[Fraction]:
    """``E[Y^k]``, ``k = 0..n``, ``Y = 1 − 2X``, ``X ~ Beta(p, q)``, exactly:
    ``E[Y^{k+1}] = (k E[Y^{k−1}] + (q − p)E[Y^k])/(p + q + k)``, ``E[Y⁰] = 1``.

    Y has density ∝ ``(1 − y)^{p−1}(1 + y)^{q−1}`` on [−1, 1].  The integral of
    ``d/dy [y^k (1 − y)^p (1 + y)^q]`` over [−1, 1] is 0 (p, q > 0), and divided by that density the
    derivative is ``k y^{k−1}(1 − y²) − p y^k (1 + y) + q y^k (1 − y)``; its mean is 0, which is the
    recurrence."""
    out = [Fraction(1), (q - p) / (p + q)]
    for k in range(1, n):
        out.append((k * out[k - 1] + (q - p) * out[k]) / (p + q + k))
    return out[: n + 1]


def reciprocal_bounds(law: _Law, K: int | None) -> tuple[Fraction, Fraction]:
    """``(lo, hi)`` with ``lo ≤ E[1/(1+s)] ≤ hi``: exact over atoms; on each continuous piece the K-term
    series (K even; docs/certificates.md, "Bounds on κ", proves it).

    A continuous piece has ``t = 1 + s = t₀ + Σ_i w_i X_i`` on ``[t₀, t₁]``, ``t₀ ≥ 1``, ``X_i ~ Beta(p_i, q_i)``
    independent (one or two).  With ``c = (t₀ + t₁)/2`` and ``u = 1 − t/c = Σ_i ρ_i Y_i`` (``Y_i = 1 − 2X_i``,
    ``ρ_i = w_i/(2c)``), ``|u| ≤ ρ = Σ_i ρ_i = (t₁ − t₀)/(t₁ + t₀) < 1``.  Since ``t = c(1 − u)``, for every t

        1/t = (1/c) Σ_{k<K} u^k + u^K/t      (the geometric sum: (1 − u^K)/(1 − u) = Σ_{k<K} u^k),

    and ``0 ≤ u^K/t ≤ ρ^K/t₀`` because K is even (``u^K = |u|^K``), ``|u| ≤ ρ`` and ``t ≥ t₀ > 0``.  Taking
    means, ``E[1/t] ∈ (1/c) Σ_{k<K} E[u^k] + [0, ρ^K/t₀]``, with ``E[u^k] = ρ₁^k E[Y₁^k]`` for one Beta and
    ``Σ_j C(k, j) ρ₁^j E[Y₁^j] ρ₂^{k−j} E[Y₂^{k−j}]`` for two.  Both ends are needed as they are: ``ρ^K/t₀``
    is the supremum of ``u^K/t`` (at t = t₀), so a law with its mass near t₀ has a remainder above
    ``ρ^{K+1}/t₀`` or ``ρ^K/c``; and for odd K, or with K + 1 terms, ``u^K/t`` is negative where ``t > c``."""
    lo = hi = Fraction(0)
    for w, piece in law.pieces():
        if piece[0] == "atoms":
            exact = sum(p / (1 + v) for v, p in zip(piece[1], piece[2]))
            lo, hi = lo + w * exact, hi + w * exact
            continue
        if K is None:
            raise _Bad("a continuous part needs kappa.terms")
        betas = [piece] if piece[0] == "beta" else [piece[1], piece[2]]
        t0 = 1 + sum(b[3] for b in betas)
        t1 = t0 + sum(b[4] - b[3] for b in betas)
        c = (t0 + t1) / 2
        rhos = [(b[4] - b[3]) / (2 * c) for b in betas]
        ys = [_centred_moments(b[1], b[2], K) for b in betas]
        if len(betas) == 1:
            series = sum(rhos[0] ** k * ys[0][k] for k in range(K))
        else:
            series = sum(math.comb(k, j) * rhos[0] ** j * ys[0][j] * rhos[1] ** (k - j) * ys[1][k - j]
                         for k in range(K) for j in range(k + 1))
        rho = (t1 - t0) / (t1 + t0)
        lo, hi = lo + w * series / c, hi + w * (series / c + rho**K / t0)
    return lo, hi


def _check_gap(cert: dict, law: _Law, reasons: list[str]) -> None:
    K = cert["kappa"].get("terms")
    if K is not None and (isinstance(K, bool) or not isinstance(K, int) or K < 2 or K % 2 or K > MAX_TERMS):
        reasons.append(f"kappa.terms must be null or an even integer from 2 to {MAX_TERMS}, got {K!r}")
        return
    inv_lo, inv_hi = reciprocal_bounds(law, K)
    kappa_lo, kappa_hi = 1 - inv_hi, 1 - inv_lo
    moments = [(name, _Law.block_moment(leaves, 1), _Law.block_moment(leaves, 2)) for name, leaves in law.blocks]
    recorded = cert["moments"]
    if _q(recorded["E[zeta^2]"]) != law.zeta2:
        reasons.append(f"E[ζ²] is {law.zeta2}, not the recorded {recorded['E[zeta^2]']}")
    rec_blocks = recorded["blocks"]
    if [(b["block"], _q(b["E[S]"]), _q(b["E[S^2]"])) for b in rec_blocks] != moments:
        reasons.append("the recorded block moments E[S], E[S²] are not the recomputed ones")
    live = [(e1, e2) for _, e1, e2 in moments if e1 > 0]
    if len(live) == 1:
        (e1, e2), = live
        gamma = [e1 / (e1 + e2)]
        quad = e1 * gamma[0]
    elif len(live) == 2:
        (e1, e2), (f1, f2) = live
        A00, A01, A11 = e1 + e2, e1 * f1, f1 + f2
        det = A00 * A11 - A01 * A01
        gamma = [(A11 * e1 - A01 * f1) / det, (A00 * f1 - A01 * e1) / det]
        quad = e1 * gamma[0] + f1 * gamma[1]
    else:
        gamma, quad = [], Fraction(0)
    if [_q(g) for g in recorded.get("gamma", [])] != gamma:
        reasons.append("the recorded γ is not A⁻¹b")
    g_lo, g_hi = law.zeta2 * (kappa_lo - quad), law.zeta2 * (kappa_hi - quad)
    claim = cert["claim"]
    lo, hi = _q(claim["lo_rational"]), _q(claim["hi_rational"])
    dec_lo, dec_hi = _q(claim["lo"]), _q(claim["hi"])
    if K is None:
        if claim.get("exact") is not True or not lo == hi == g_lo:
            reasons.append(f"the exact gap is {g_lo}, not the claimed {claim['lo_rational']}")
        if not dec_lo <= g_lo <= dec_hi:
            reasons.append("the decimal bounds do not contain the exact gap")
    else:
        if claim.get("exact") is not False:
            reasons.append("a law with a continuous part has no exact gap here")
        if not lo <= g_lo <= g_hi <= hi:  # closed: the statement is lo ≤ G ≤ hi
            side = (f"lo exceeds the recomputed lower bound by {float(lo - g_lo):.3g}" if lo > g_lo else
                    f"hi is below the recomputed upper bound by {float(g_hi - hi):.3g}")
            reasons.append(f"the recomputed bounds [{float(g_lo):.17g}, {float(g_hi):.17g}] ({K} terms) are not inside the "
                           f"claimed [{claim['lo']}, {claim['hi']}]: {side}; claim the recomputed bounds or wider")
        if (dec_lo, dec_hi) != (lo, hi):
            reasons.append("the decimal bounds are not the rational ones")
    positive = claim.get("positive")
    if positive is True and not lo > 0:  # strictly: lo = 0 ≤ G proves nothing about G > 0
        reasons.append(f"G > 0 is claimed but the lower bound lo = {lo} is not > 0: claim positive only with lo > 0, "
                       "or claim G = 0 (positive false) for an exact 0")
    if positive is False and not (K is None and g_lo == 0):
        reasons.append(f"G = 0 is claimed but the gap is not exactly 0 (its lower bound is {float(g_lo):.6g}): claim "
                       "G = 0 only for an atomic law whose exact gap is 0")
    if positive not in (True, False):
        reasons.append("claim.positive must be true or false")


# ---------------------------------------------------------------------------------------------
# the entry points
# ---------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------
# alpha_all_T: finite depths here, the tail in tail.py
# ---------------------------------------------------------------------------------------------


_TAIL = []
"""The loaded ``tail.py`` (loaded once, on the first all-depth certificate)."""


def _tail_module():
    """``tail.py`` from beside this file, by its path: the same code whether this file runs in the package
    or as a standalone copy next to a copy of tail.py (``-I`` keeps the folder off ``sys.path``)."""
    if _TAIL:
        return _TAIL[0]
    import importlib.util
    import os

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tail.py")
    if not os.path.isfile(path):
        raise _Bad("an all-depth certificate needs tail.py beside check.py (both are standard library only)")
    spec = importlib.util.spec_from_file_location("mmicl_certificate_tail", path)
    tail = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tail)
    _TAIL.append(tail)
    return tail


def _check_all_depths(cert: dict, law: _Law, reasons: list[str]) -> None:
    tail = _tail_module()
    claim = cert["claim"]
    try:
        ends = tail.ends(law.pieces())
    except tail.TailError as err:
        reasons.append(f"the law is outside the class of the all-depth proof: {err}")
        return
    try:
        reasons += tail.check_tail(claim, ends)
    except tail.TailError as err:
        reasons.append(str(err))
    T0, finite, sides = claim["T0"], cert["finite"], claim["sides"]
    if not isinstance(T0, int) or [c.get("T") if isinstance(c, dict) else None for c in finite] != list(range(1, T0)):
        reasons.append("the finite part must hold the alpha_T certificates of T = 1, 2, …, T0 − 1, in order")
        return
    if not isinstance(sides, list) or len(sides) != len(finite):
        reasons.append("sides must list the side of α* of each finite depth")
        return
    for c, side in zip(finite, sides):
        if c.get("format") != FORMAT or c.get("certificate") != "alpha_T" or c.get("law") != cert["law"]:
            reasons.append(f"T = {c.get('T')}: not an alpha_T certificate of this law")
            continue
        own: list[str] = []
        _check_alpha(c, law, own)
        reasons += [f"T = {c['T']}: {r}" for r in own]
        lo, hi = _q(c["claim"]["lo_rational"]), _q(c["claim"]["hi_rational"])
        if side is not None and (side not in tail.SIDES or tail.side_of(lo, hi, ends.alpha_star) != side):
            reasons.append(f"T = {c['T']}: α_T ∈ ({lo}, {hi}) is not {side} α* = {ends.alpha_star}")
    if claim["statement"] != tail.statement(sides, claim["tail_side"], T0):
        reasons.append(f"the statement {claim['statement']!r} is not what the sides prove: "
                       f"{tail.statement(sides, claim['tail_side'], T0)!r}")


def _check_one(cert, reasons: list[str]) -> None:
    if not isinstance(cert, dict):
        reasons.append("a certificate is a JSON object")
        return
    if cert.get("format") != FORMAT:
        reasons.append(f"format {cert.get('format')!r} is not {FORMAT!r}")
        return
    try:
        law = _Law(cert.get("law"))
        kind = cert.get("certificate")
        if kind == "alpha_T":
            _check_alpha(cert, law, reasons)
        elif kind == "lsa_gap":
            _check_gap(cert, law, reasons)
        elif kind == "alpha_all_T":
            _check_all_depths(cert, law, reasons)
        else:
            reasons.append(f"unknown certificate kind {kind!r}")
    except _Bad as e:
        reasons.append(str(e))
    except (KeyError, TypeError, ValueError, AttributeError, ZeroDivisionError) as e:
        reasons.append(f"malformed certificate ({type(e).__name__}: {e})")


def check(certificate) -> tuple[bool, list[str]]:
    """``(ok, reasons)``: re-verify a certificate (or a bundle ``{"certificates": [...]}``) from its
    own arithmetic; ``reasons`` lists every failed check (empty when ok)."""
    reasons: list[str] = []
    if isinstance(certificate, dict) and "certificates" in certificate:
        certs = certificate["certificates"]
        if not isinstance(certs, list) or not certs:
            return False, ["a bundle needs a non-empty list of certificates"]
        for i, cert in enumerate(certs):
            own: list[str] = []
            _check_one(cert, own)
            reasons += [f"certificate {i} ({cert.get('certificate') if isinstance(cert, dict) else '?'}): {r}"
                        for r in own]
    else:
        _check_one(certificate, reasons)
    return not reasons, reasons


def _summary(cert: dict) -> str:
    claim = cert["claim"]
    if cert["certificate"] == "alpha_T":
        return f"alpha_T at T = {cert['T']} on {cert['law']['text']}: unique, in [{claim['lo']}, {claim['hi']}]"
    if cert["certificate"] == "alpha_all_T":
        return (f"alpha_T at every depth on {cert['law']['text']}: {claim['statement']}; for T ≥ {claim['T0']}, "
                f"|α* − α_T − δ_c(2T − 1)| < K(1 + log n)³/n³ with K = {claim['K']}")
    what = "G > 0" if claim["positive"] else "G = 0"
    return f"LSA gap on {cert['law']['text']}: {claim['lo']} ≤ G ≤ {claim['hi']}, {what}"


def main(argv: list[str] | None = None) -> int:
    """``check FILE``: print what is verified (exit 0) or why not (exit 1)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m mmicl.proofs.certificates.check FILE", file=sys.stderr)
        return 2

    def refuse(token):
        raise ValueError(f"{token} is not strict JSON")

    try:
        with open(args[0], encoding="utf-8") as f:
            doc = json.load(f, parse_constant=refuse)
    except (OSError, ValueError) as e:
        print(f"cannot read {args[0]}: {e}", file=sys.stderr)
        return 1
    ok, reasons = check(doc)
    if not ok:
        print("REJECTED:")
        for r in reasons:
            print(f"  - {r}")
        return 1
    for cert in doc.get("certificates", [doc]):
        print(f"verified: {_summary(cert)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
