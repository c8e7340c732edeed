"""Version 3 decisions of the testbed claims: exact, bounded tests whose power is known before a run.

Version 2 (``stats.py``) decided a claim from a t / Welch interval over seeds.  With two or three
seeds and bimodal per-seed outcomes (a seed either learns the mechanism or does not) those
intervals rest on a normality they cannot check, and an interval of zero width (every seed
identical) "decides" without any evidence about seed-to-seed variation.  Version 3 instead:

1. resolves each seed against a *margin* (the minimum effect that matters) using that seed's
   evaluation standard error: ``seed_outcomes`` gives +1 (above the margin), −1 (below), 0
   (unresolved);
2. decides over seeds with an exact one-sided **sign test** (``sign_test``): under H0 "a seed is
   as likely to fall below the margin as above" the number of +1 among the resolved seeds is
   Binomial(resolved, ½), whatever the shape of the per-seed distribution;
3. states the power of that rule in advance (``power``, ``seeds_for_power``,
   ``min_plus_to_decide``), exactly, by summing the trinomial law of (+1, −1, 0) counts;
4. combines two seed families by pooling with a consistency guard (``combine_families``);
5. checks per-seed premises by a plain, stated count rule (``premise_count``).

Every public function validates its input at the boundary and refuses with a one-line
``ValueError`` saying what is expected.  numpy and scipy only.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Optional, Sequence

import numpy as np
from scipy import stats as _st

__all__ = [
    "SignTest",
    "Combined",
    "PremiseCount",
    "accuracy_difference_se",
    "binomial_se",
    "slope_and_se",
    "seed_outcomes",
    "sign_test",
    "sign_test_counts",
    "min_plus_to_decide",
    "power",
    "seeds_for_power",
    "outcome_probabilities",
    "combined_power",
    "non_inferior",
    "combine_families",
    "premise_count",
]


# --------------------------------------------------------------------------------------------
# Boundary checks (each raises a one-line ValueError saying what is expected)
# --------------------------------------------------------------------------------------------

def _alpha(alpha) -> float:
    """alpha must be a real number in (0, ½): at ½ or more both one-sided tests could reject."""
    try:
        a = float(alpha)
    except (TypeError, ValueError):
        raise ValueError(f"alpha must be a number in (0, 0.5), got {alpha!r}") from None
    if isinstance(alpha, bool) or not (math.isfinite(a) and 0.0 < a < 0.5):
        raise ValueError(f"alpha must be a number in (0, 0.5), got {alpha!r}")
    return a


def _finite(name: str, x) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite number, got {x!r}") from None
    if isinstance(x, bool) or not math.isfinite(v):
        raise ValueError(f"{name} must be a finite number, got {x!r}")
    return v


def _probability(name: str, x) -> float:
    v = _finite(name, x)
    if not 0.0 <= v <= 1.0:
        raise ValueError(f"{name} must be a probability in [0, 1], got {x!r}")
    return v


def _count(name: str, x, minimum: int = 0) -> int:
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {x!r}")
    if int(x) < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {x!r}")
    return int(x)


def _vector(name: str, x) -> np.ndarray:
    try:
        v = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a 1-D sequence of finite numbers, got {x!r}") from None
    if v.ndim != 1 or v.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of numbers, got shape {v.shape}")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} must contain only finite values, got {v.tolist()!r}")
    return v


# --------------------------------------------------------------------------------------------
# 1. Per-seed resolution against a margin
# --------------------------------------------------------------------------------------------

def accuracy_difference_se(p_a, p_b, n_eval) -> np.ndarray | float:
    """Standard error of an accuracy difference p_a − p_b measured on ``n_eval`` evaluation items.

    Conservative independent-items formula::

        se = sqrt( (p_a (1 − p_a) + p_b (1 − p_b)) / n_eval ).

    This is the exact standard error when the two arms are scored on independent items.  When
    both arms are scored on the *same* items (the usual paired case), the variance of the
    difference is (p_a(1−p_a) + p_b(1−p_b) − 2 c) / n_eval with c the per-item covariance of the
    two correctness indicators; two models that err on overlapping items have c ≥ 0, so the
    formula above over-states the noise (it never under-states it while c ≥ 0).  Conservative
    here means: fewer seeds are resolved, never more.

    ``p_a`` and ``p_b`` are accuracies in [0, 1] (scalars or equal-length 1-D sequences, one per
    seed); ``n_eval`` is a positive integer.  If every item is right (or wrong) in both arms the
    se is 0.
    """
    n = _count("n_eval", n_eval, minimum=1)
    scalar = np.ndim(p_a) == 0 and np.ndim(p_b) == 0
    a = np.atleast_1d(_vector_or_scalar("p_a", p_a))
    b = np.atleast_1d(_vector_or_scalar("p_b", p_b))
    if a.shape != b.shape:
        raise ValueError(f"p_a and p_b must have the same length, got {a.size} and {b.size}")
    if np.any((a < 0) | (a > 1)) or np.any((b < 0) | (b > 1)):
        raise ValueError("p_a and p_b must be accuracies in [0, 1]")
    se = np.sqrt((a * (1 - a) + b * (1 - b)) / n)
    return float(se[0]) if scalar else se


def area_under_se(curve, steps, n_eval) -> np.ndarray:
    """A bound on the evaluation standard error of a normalised area under an accuracy curve
    (``experiments.area_under``), per seed.

    The area is A = Σ_k w_k p_k, the trapezoid weights w_k ≥ 0 (Σ w_k = 1) over the evaluation steps
    and p_k the accuracy at evaluation k, measured on ``n_eval`` items with binomial se
    s_k = √(p_k(1 − p_k)/n_eval).  The evaluations reuse the same items, so their errors are
    correlated in an unknown way; whatever the correlation, sd(Σ w_k e_k) ≤ Σ w_k sd(e_k) (the
    triangle inequality for standard deviations), so::

        se(A) ≤ Σ_k w_k s_k,

    which is what this returns (the bound is attained when the errors are perfectly correlated).
    ``curve``: (evaluations,) or (evaluations, seeds) accuracies in [0, 1]; ``steps``: the
    evaluation steps (increasing).  For the difference of two arms' areas on independent items,
    combine the two bounds as √(se_A² + se_B²)."""
    n = _count("n_eval", n_eval, minimum=1)
    p = np.asarray(curve, dtype=float)
    x = np.asarray(steps, dtype=float)
    if p.ndim not in (1, 2) or p.shape[0] != x.size or x.ndim != 1:
        raise ValueError(f"curve must be (evaluations,) or (evaluations, seeds) with one row per step; got curve "
                         f"{p.shape} and {x.size} steps")
    if np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError("curve must hold accuracies in [0, 1]")
    return np.tensordot(trapezoid_weights(x), np.sqrt(p * (1 - p) / n), axes=(0, 0))


def binomial_se(p, n_eval: int) -> np.ndarray:
    """The binomial se √(p(1 − p)/n) of accuracies ``p`` on ``n_eval`` items."""
    p = np.asarray(p, float)
    return np.sqrt(np.clip(p * (1 - p), 0.0, None) / int(n_eval))


def slope_and_se(x, y, se_x, se_y) -> tuple[np.ndarray, np.ndarray]:
    """Per seed, the least-squares slope b of y on x over the doses (levels of a knob) and its se:
    x, y, se_x, se_y (doses, seeds).  b = Σ c_k y_k with c_k = (x_k − x̄)/Sxx, so the doses' independent evaluation
    errors in y give Var = Σ c_k² se_y,k² exactly; the errors in x enter to first order through
    ∂b/∂x_k = (r_k − b(x_k − x̄))/Sxx (r_k the residual), adding Σ (∂b/∂x_k)² se_x,k².  nan where
    the doses' x do not vary."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    se_x, se_y = np.broadcast_to(np.asarray(se_x, float), x.shape), np.broadcast_to(np.asarray(se_y, float), x.shape)
    if x.shape != y.shape or x.ndim != 2:
        raise ValueError(f"x and y must both be (doses, seeds), got {x.shape} and {y.shape}")
    xc, yc = x - x.mean(0), y - y.mean(0)
    sxx = (xc ** 2).sum(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        b = np.where(sxx > 0, (xc * yc).sum(0) / sxx, np.nan)
        c = xc / sxx
        r = yc - b * xc
        dbdx = (r - b * xc) / sxx
        se = np.sqrt((c ** 2 * se_y ** 2).sum(0) + (dbdx ** 2 * se_x ** 2).sum(0))
    return b, np.where(np.isfinite(b), se, np.nan)


def trapezoid_weights(steps) -> np.ndarray:
    """The weights w_k ≥ 0, Σ w_k = 1, with which the normalised trapezoid area over increasing
    ``steps`` is Σ_k w_k y_k (``experiments.area_under``): w = (Δ_k + Δ_{k+1})/2 over the span, the
    end points taking half an interval; one step gets weight 1."""
    x = np.asarray(steps, dtype=float)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"steps must be a non-empty 1-D sequence, got shape {x.shape}")
    if x.size == 1:
        return np.ones(1)
    if np.any(np.diff(x) <= 0):
        raise ValueError(f"steps must increase, got {x.tolist()}")
    w = np.zeros(x.size)
    dx = np.diff(x) / (x[-1] - x[0])
    w[:-1] += dx / 2
    w[1:] += dx / 2
    return w


def _vector_or_scalar(name: str, x) -> np.ndarray:
    if np.ndim(x) == 0:
        return np.array([_finite(name, x)])
    return _vector(name, x)


def seed_outcomes(diffs, ses, margin, z: float = 2.0) -> np.ndarray:
    """Resolve each seed against the margin: +1 above, −1 below, 0 unresolved.

    For seed i, ``diffs[i]`` = d_i is a paired difference (arm A minus arm B on the same seed and
    data stream) and ``ses[i]`` = se_i ≥ 0 its *evaluation* standard error (from the evaluation
    items, e.g. ``accuracy_difference_se``).  With margin m and z > 0::

        +1  if d_i − m >  z · se_i     (the seed shows an effect above the margin)
        −1  if d_i − m < −z · se_i     (the seed shows less than the margin)
         0  otherwise                  (unresolved: within z evaluation se's of the margin)

    A seed with se_i = 0 (e.g. every evaluation item right in both arms) carries no evaluation
    noise, so it is classified by d_i against m exactly (+1 if d_i > m, −1 if d_i < m, 0 if
    d_i = m); the formula above already does this.  Comparisons are exact in floating point, so a
    difference that equals the margin only up to rounding is resolved by the rounding; choose
    margins that are not attainable differences (e.g. 0.02 rather than 1/n_eval) to avoid this.

    This step removes *evaluation* noise only.  A seed classified +1 is one seed; whether seeds
    in general exceed the margin — seed-to-seed variation, which is what a zero-variance
    interval ignores — is what the sign test (``sign_test``) accounts for.  With z = 2 a seed
    whose true difference equals the margin is resolved upward or downward with about equal
    probability (≈ 2.3 % each under a normal evaluation error), so the sign test's null is kept.
    """
    d = _vector("diffs", diffs)
    s = _vector("ses", ses)
    if d.size != s.size:
        raise ValueError(f"diffs and ses must have the same length, got {d.size} and {s.size}")
    if np.any(s < 0):
        raise ValueError(f"ses must be >= 0, got {s.tolist()!r}")
    m = _finite("margin", margin)
    zz = _finite("z", z)
    if zz <= 0:
        raise ValueError(f"z must be a finite number > 0, got {z!r}")
    excess = d - m
    out = np.zeros(d.size, dtype=np.int64)
    out[excess > zz * s] = 1
    out[excess < -zz * s] = -1
    return out


# --------------------------------------------------------------------------------------------
# 2. The exact sign test over seeds, and its power
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SignTest:
    """The exact one-sided sign test over seeds (see ``sign_test``)."""

    n: int
    plus: int
    minus: int
    unresolved: int
    p_above: float
    p_below: float
    decision: Optional[bool]
    rule: str
    alpha: float = 0.05

    @property
    def resolved(self) -> int:
        return self.plus + self.minus


def _upper_tail_numerator(k: int, m: int) -> int:
    """Σ_{j ≥ k} C(m, j): 2^m · P(Bin(m, ½) ≥ k), as an exact integer."""
    if k <= 0:
        return 1 << m
    return sum(math.comb(m, j) for j in range(k, m + 1))


def _tail(k: int, m: int) -> float:
    """P(Bin(m, ½) ≥ k), exact rational rounded once to float (1 when m = 0 and k = 0)."""
    return float(Fraction(_upper_tail_numerator(k, m), 1 << m))


def _threshold(m: int, alpha: float) -> Optional[int]:
    """Least k in 0..m with P(Bin(m, ½) ≥ k) ≤ alpha, compared exactly; None if there is none."""
    a = Fraction(alpha)
    total = 0
    # walk down from k = m: the tail grows as k falls, so the last k that stays ≤ alpha is the least
    best = None
    for k in range(m, -1, -1):
        total += math.comb(m, k)
        if Fraction(total, 1 << m) <= a:
            best = k
        else:
            break
    return best


def sign_test_counts(plus, minus, unresolved=0, alpha=0.05) -> SignTest:
    """The sign test of ``sign_test`` from the counts of +1, −1 and 0 seeds."""
    p = _count("plus", plus)
    q = _count("minus", minus)
    u = _count("unresolved", unresolved)
    a = _alpha(alpha)
    m = p + q
    p_above = _tail(p, m)
    p_below = _tail(q, m)
    if p_above <= a:
        decision: Optional[bool] = True
    elif p_below <= a:
        decision = False
    else:
        decision = None
    rule = (
        f"exact one-sided sign test over {m} resolved of {p + q + u} seeds at alpha={a:g}: "
        f"True if P(Bin({m}, 1/2) >= {p} plus) <= alpha, False if P(Bin({m}, 1/2) >= {q} minus) "
        f"<= alpha, else None; unresolved seeds count for neither side"
    )
    return SignTest(p + q + u, p, q, u, p_above, p_below, decision, rule, a)


def sign_test(outcomes, alpha=0.05) -> SignTest:
    """Exact one-sided sign test over seeds on outcomes in {+1, −1, 0} (from ``seed_outcomes``).

    H0: a seed is as likely to fall below the margin as above it (P(+1) = P(−1); the test is
    also valid for the composite H0 P(+1) ≤ P(−1)).  Given the number of resolved seeds
    r = plus + minus, under H0 the count of +1 is Binomial(r, ½) whatever the per-seed
    distribution (bimodal "works / fails" included), so the one-sided p-values::

        p_above = P(Bin(r, ½) ≥ plus),    p_below = P(Bin(r, ½) ≥ minus)

    are exact (computed as exact rationals, rounded once).  Decision: True if p_above ≤ alpha,
    False if p_below ≤ alpha, otherwise None.  For alpha < ½ the two cannot both hold, and each
    has false-positive probability ≤ alpha conditionally on r, hence unconditionally.  Unresolved
    seeds count for neither side (they cost power, not validity).

    The rule needs enough seeds to decide at all: with 3 seeds the best case, 3 of 3, has
    p = 1/8 = 0.125, so nothing is decided at alpha = 0.05 (the first n that can decide at 0.05
    is 5, at 5 of 5: p = 1/32).  See ``min_plus_to_decide`` and ``power``.
    """
    o = _vector("outcomes", outcomes)
    if not np.all(np.isin(o, (-1.0, 0.0, 1.0))):
        raise ValueError(f"outcomes must be -1, 0 or +1 per seed, got {o.tolist()!r}")
    return sign_test_counts(int(np.sum(o == 1)), int(np.sum(o == -1)), int(np.sum(o == 0)), alpha)


def min_plus_to_decide(n, alpha=0.05) -> Optional[int]:
    """Least count k of +1 out of n resolved seeds with P(Bin(n, ½) ≥ k) ≤ alpha; None if none.

    That is, the sign test over n seeds, all resolved, decides True exactly when plus ≥ k.  At
    alpha = 0.05: n ≤ 4 cannot decide (None), n = 5 and 6 need all seeds, n = 8 needs 7
    (P(Bin(8, ½) ≥ 7) = 9/256 ≈ 0.035, while ≥ 6 gives 37/256 ≈ 0.145), n = 16 needs 12.
    With unresolved seeds the threshold is the one for the resolved count.
    """
    return _threshold(_count("n", n, minimum=1), _alpha(alpha))


def _p_pair(p_plus, p_minus) -> tuple[float, float]:
    pp = _probability("p_plus", p_plus)
    pm = 1.0 - pp if p_minus is None else _probability("p_minus", p_minus)
    if pp + pm > 1.0 + 1e-12:
        raise ValueError(f"p_plus + p_minus must be <= 1, got {pp} + {pm}")
    return pp, min(pm, 1.0 - pp)


def power(n, p_plus, p_minus=None, alpha=0.05) -> float:
    """P(the sign test decides True) when each of n seeds is independently +1 with probability
    p_plus, −1 with p_minus (default 1 − p_plus: every seed resolved), 0 otherwise.

    Exact: the counts (plus, minus, unresolved) are Trinomial(n; p_plus, p_minus, p_0), and the
    decision depends on them only through r = plus + minus and the threshold k*(r) of
    ``min_plus_to_decide``.  Factoring the trinomial as r ~ Bin(n, p_plus + p_minus) and
    plus | r ~ Bin(r, p_plus / (p_plus + p_minus))::

        power = Σ_r P(R = r) · P(Bin(r, π) ≥ k*(r)),   π = p_plus / (p_plus + p_minus),

    which is the sum over the trinomial grouped by r.  The probability of deciding False is
    ``power(n, p_minus, p_plus, alpha)`` by symmetry.  Under H0 (p_plus = p_minus) the value is
    the false-positive rate, ≤ alpha.

    Examples at alpha = 0.05, all seeds resolved (rounded from this function): 8 seeds decide at
    7 of 8 and have power ≈ 0.813 at p_plus = 0.9 and ≈ 0.503 at 0.8; 16 seeds decide at 12 of 16
    and have power ≈ 0.983 at 0.9 and ≈ 0.798 at 0.8.
    """
    nn = _count("n", n, minimum=1)
    pp, pm = _p_pair(p_plus, p_minus)
    a = _alpha(alpha)
    q = pp + pm
    if q <= 0.0:
        return 0.0
    pi = pp / q
    total = 0.0
    for r in range(nn + 1):
        k = _threshold(r, a) if r > 0 else None
        if k is None:
            continue
        total += float(_st.binom.pmf(r, nn, q)) * float(_st.binom.sf(k - 1, r, pi))
    return min(1.0, max(0.0, total))


def seeds_for_power(p_plus, target=0.8, alpha=0.05, max_n=64, p_minus=None) -> Optional[int]:
    """Least n ≤ max_n whose ``power(n, p_plus, p_minus, alpha)`` is at least ``target``; None if
    no n up to max_n reaches it.

    Power is not monotone in n (the sign test is discrete: adding a seed can raise the threshold
    by one and lower the power), so a run with more seeds than the answer can have less power;
    check ``power`` at the n actually used.  At alpha = 0.05, p_plus = 0.9 needs 8 seeds for 0.8.
    """
    pp, pm = _p_pair(p_plus, p_minus)
    t = _probability("target", target)
    if t <= 0.0:
        raise ValueError(f"target must be a probability in (0, 1], got {target!r}")
    a = _alpha(alpha)
    top = _count("max_n", max_n, minimum=1)
    for n in range(1, top + 1):
        if power(n, pp, pm, a) >= t:
            return n
    return None


def outcome_probabilities(mean, sd, se, margin, z: float = 2.0) -> tuple[float, float]:
    """(p_plus, p_minus) of ``seed_outcomes`` for one seed under a normal model: the seed's true
    difference is N(mean, sd²) over seeds and its measured difference adds evaluation noise
    N(0, se²), so d̂ ~ N(mean, sd² + se²) and

        p_plus  = Φ((mean − margin − z·se) / √(sd² + se²)),
        p_minus = Φ((margin − z·se − mean) / √(sd² + se²)).

    With sd = se = 0 the seed is +1, −1 or 0 exactly as ``mean`` compares with ``margin``."""
    mu, s_seed, s_eval = _finite("mean", mean), _finite("sd", sd), _finite("se", se)
    m, zz = _finite("margin", margin), _finite("z", z)
    if s_seed < 0 or s_eval < 0 or zz <= 0:
        raise ValueError(f"sd and se must be >= 0 and z > 0, got sd={sd!r}, se={se!r}, z={z!r}")
    total = math.hypot(s_seed, s_eval)
    if total == 0:
        return (1.0, 0.0) if mu > m else (0.0, 1.0) if mu < m else (0.0, 0.0)
    return (float(_st.norm.cdf((mu - m - zz * s_eval) / total)), float(_st.norm.cdf((m - zz * s_eval - mu) / total)))


def _count_law(n: int, pp: float, pm: float) -> list[tuple[int, int, float]]:
    """The trinomial law of (plus, minus) over n seeds: [(plus, minus, probability)]."""
    p0 = max(0.0, 1.0 - pp - pm)
    out = []
    for plus in range(n + 1):
        for minus in range(n - plus + 1):
            prob = math.comb(n, plus) * math.comb(n - plus, minus) * pp ** plus * pm ** minus * p0 ** (n - plus - minus)
            if prob > 0:
                out.append((plus, minus, prob))
    return out


def combined_power(n_a, n_b, p_plus, p_minus=None, alpha=0.05) -> dict:
    """The law of the decision of two families of ``n_a`` and ``n_b`` seeds (``combine_families``
    of their ``sign_test``s at ``alpha``) when each seed is independently +1 with probability
    ``p_plus``, −1 with ``p_minus`` (default 1 − p_plus), 0 otherwise: ``{True: P(holds),
    False: P(fails), None: P(undecided)}``, exact (every pair of trinomial counts enumerated).
    The guard against disagreeing families makes this lower than ``power(n_a + n_b, …)``."""
    na, nb = _count("n_a", n_a, minimum=1), _count("n_b", n_b, minimum=1)
    pp, pm = _p_pair(p_plus, p_minus)
    a = _alpha(alpha)
    law_a, law_b = _count_law(na, pp, pm), _count_law(nb, pp, pm)
    tests_b = [(sign_test_counts(plus, minus, nb - plus - minus, a), prob) for plus, minus, prob in law_b]
    out = {True: 0.0, False: 0.0, None: 0.0}
    for plus, minus, prob in law_a:
        ta = sign_test_counts(plus, minus, na - plus - minus, a)
        for tb, pb in tests_b:
            out[combine_families(ta, tb, a).decision] += prob * pb
    return out


# --------------------------------------------------------------------------------------------
# 3. Non-inferiority
# --------------------------------------------------------------------------------------------

def non_inferior(diffs, ses, margin, alpha=0.05, z: float = 2.0) -> SignTest:
    """Non-inferiority of a candidate B to a reference A within ``margin`` (claim 4: "few M2
    classes suffice"), by the sign test of d_i > −margin.

    Here ``diffs[i]`` = d_i = score(B) − score(A) on seed i (candidate minus reference; a
    negative d_i means B is worse), ``ses[i]`` its evaluation se, and margin ≥ 0 the largest
    loss that still counts as "not worse".  Each seed is resolved against −margin by
    ``seed_outcomes(diffs, ses, -margin, z)``, then ``sign_test``:

    - the claim **holds** (True) when B is not worse than A by more than the margin
      (d_i > −margin, resolved) in significantly many seeds: p_above ≤ alpha;
    - it **fails** (False) when B is worse than A by more than the margin (d_i < −margin,
      resolved) in significantly many seeds: p_below ≤ alpha;
    - otherwise None.  One bad seed does not make the claim fail.
    """
    m = _finite("margin", margin)
    if m < 0:
        raise ValueError(f"margin must be a finite number >= 0 (the allowed loss), got {margin!r}")
    return sign_test(seed_outcomes(diffs, ses, -m, z), alpha)


# --------------------------------------------------------------------------------------------
# 4. Two seed families into one verdict
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Combined:
    """The verdict of two seed families (see ``combine_families``)."""

    decision: Optional[bool]
    pooled: SignTest
    decision_a: Optional[bool]
    decision_b: Optional[bool]
    reason: str
    alpha: float


def _decision_at(t: SignTest, alpha: float) -> Optional[bool]:
    if t.p_above <= alpha:
        return True
    if t.p_below <= alpha:
        return False
    return None


def combine_families(a: SignTest, b: SignTest, alpha=0.05) -> Combined:
    """One verdict from two seed families testing the same per-seed hypothesis (same margin,
    same direction): pool, then guard against disagreement.

    Pooled test: the exact sign test at ``alpha`` on plus_a + plus_b of the resolved seeds of
    both families.  Guard: if either family alone decides the opposite of the pooled decision at
    ``alpha`` (or the two families decide opposite ways), the combined decision is None with the
    reason "the families disagree".  Otherwise the combined decision is the pooled one.

    Why this rule:

    - Pooling spends all 2n seeds on one exact test, so under H0 its false-positive rate is
      ≤ alpha, and its power is ``power(2n, ...)`` (e.g. at p_plus = 0.9, 8 seeds each: ≈ 0.98
      pooled against ≈ 0.81 for one family).  The guard only turns decisions into None, so it
      cannot raise the false-positive rate; when the families agree it removes little power.
    - "Both families must decide" has power ≈ power(n)² for independent families (≈ 0.66 at
      p_plus = 0.9, n = 8): lower than either family alone.
    - "Either family decides" has false-positive rate 1 − (1 − alpha)² ≈ 2·alpha.

    The guard catches gross heterogeneity (a family that significantly shows the opposite);
    pooling otherwise assumes the families measure the same thing.
    """
    if not isinstance(a, SignTest) or not isinstance(b, SignTest):
        raise ValueError("combine_families expects two SignTest results (from sign_test)")
    al = _alpha(alpha)
    pooled = sign_test_counts(a.plus + b.plus, a.minus + b.minus, a.unresolved + b.unresolved, al)
    da, db = _decision_at(a, al), _decision_at(b, al)
    fam = f"family A: {da}, family B: {db} (each at alpha={al:g})"
    opposite = {da, db} >= {True, False} or (
        pooled.decision is not None and (not pooled.decision) in (da, db)
    )
    if opposite:
        reason = f"the families disagree: {fam}; pooled test would give {pooled.decision}"
        return Combined(None, pooled, da, db, reason, al)
    reason = (
        f"pooled sign test: {pooled.plus} plus, {pooled.minus} minus of {pooled.n} seeds, "
        f"p_above={pooled.p_above:.4g}, p_below={pooled.p_below:.4g} -> {pooled.decision}; "
        f"no family decides the opposite ({fam})"
    )
    return Combined(pooled.decision, pooled, da, db, reason, al)


# --------------------------------------------------------------------------------------------
# 5. Premises per seed
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PremiseCount:
    """A per-seed premise counted over seeds (see ``premise_count``)."""

    n: int
    count: int
    failing: tuple[int, ...]
    required: int
    holds: bool
    p_below: float
    rule: str


def premise_count(flags: Sequence[bool], required_fraction=1.0, alpha=0.05) -> PremiseCount:
    """Count the seeds that meet a per-seed premise (e.g. "the stage-1 decoder reaches ICL ≥ 0.95
    and induction > 0.3") and apply a plain count rule.

    ``flags[i]`` is True when seed i meets the premise.  Rule (stated, not a test)::

        holds  ⇔  count ≥ required = ⌈required_fraction · n⌉,

    with ``failing`` the indices of the seeds that do not meet it (so a claim can drop or report
    them).  ``required_fraction`` is in (0, 1]; 1 means every seed.  For information only,
    ``p_below`` = P(Bin(n, required_fraction) ≤ count): how likely a count this low would be if
    each seed met the premise with probability exactly ``required_fraction`` (≤ alpha means the
    shortfall is significant at ``alpha``; it is not used by ``holds``).
    """
    try:
        f = np.asarray(flags)
    except (TypeError, ValueError):
        raise ValueError("flags must be a non-empty 1-D sequence of booleans, one per seed") from None
    if f.ndim != 1 or f.size == 0:
        raise ValueError("flags must be a non-empty 1-D sequence of booleans, one per seed")
    if f.dtype != bool:
        if not np.issubdtype(f.dtype, np.number) or not np.all(np.isin(f, (0, 1))):
            raise ValueError(f"flags must be booleans (or 0/1), got {f.tolist()!r}")
        f = f.astype(bool)
    q = _finite("required_fraction", required_fraction)
    if not 0.0 < q <= 1.0:
        raise ValueError(f"required_fraction must be in (0, 1], got {required_fraction!r}")
    a = _alpha(alpha)
    n = int(f.size)
    count = int(f.sum())
    required = min(n, math.ceil(q * n - 1e-12))
    failing = tuple(int(i) for i in np.flatnonzero(~f))
    p_below = float(_st.binom.cdf(count, n, q))
    rule = (
        f"count rule: holds iff at least {required} of {n} seeds (ceil({q:g} * {n})) meet the "
        f"premise; p_below is informational (alpha={a:g})"
    )
    return PremiseCount(n, count, failing, required, count >= required, p_below, rule)
