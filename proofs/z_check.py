"""The Monte Carlo check of a mean against a value, with the power to tell them apart stated.

``z_check(name, estimate, expected, detect=δ)``: a sampled mean (an ``Estimate``: mean and standard
error) against the value a statement predicts.  The test rejects when |z| > k, z = (mean −
expected)/se.  Under a true difference δ, z ~ N(δ/se, 1), so it rejects with probability

    power(δ) = Φ(δ/se − k) + Φ(−δ/se − k).

A check that cannot fail is no evidence: the check passes only when |z| ≤ k *and* the test had
power ≥ ``power`` at the smallest difference that matters, ``detect``; it fails whenever |z| > k (a
rejection is valid at any power: its false-alarm rate is 2Φ(−k) whatever the sample size); and it
is undecided (``None``: the claim ``inconclusive``) when it passed without that power: more
samples, or a larger ``detect``, decide it.
"""
from __future__ import annotations

import math

from mmicl.numerics.estimate import Estimate
from mmicl.proofs.claim import DECISIVE, MOVE_Z, Check
from mmicl.proofs.claims.number_tolerances import sampling_atol

__all__ = ["z_check", "rejection_power"]


def _phi(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def rejection_power(delta: float, se: float, k: float) -> float:
    """The probability that the two-sided test |z| > k rejects when the true difference is
    ``delta`` and the estimate's standard error ``se``: Φ(|δ|/se − k) + Φ(−|δ|/se − k) (the
    false-alarm rate 2Φ(−k) at δ = 0; 1 for se = 0 and δ ≠ 0)."""
    if se < 0 or not math.isfinite(se) or k < 0:
        raise ValueError(f"rejection_power needs se ≥ 0 finite and k ≥ 0, got se={se!r}, k={k!r}")
    delta = abs(float(delta))
    if se == 0:
        return 1.0 if delta > 0 else 0.0
    r = delta / se
    return _phi(r - k) + _phi(-r - k)


def z_check(name: str, estimate, expected: float, *, detect: float, k: float = 3.0, power: float = 0.8,
            method: str = "monte-carlo", role: str = DECISIVE, detail: str = "") -> Check:
    """The check that the sampled ``estimate`` (an ``mmicl.Estimate``, or ``(mean, se)``) agrees
    with ``expected`` (module docstring): passes when |z| ≤ ``k`` and the test's power at a
    difference of ``detect`` is at least ``power``; fails when |z| > ``k``; else undecided.

    Its numbers: ``mean``, ``se``, ``expected``, ``z``, ``k``, ``detect``, ``power_at_detect``;
    ``sampled`` and ``se`` are stated (two runs with different seeds compare ``mean`` as two
    independent estimates), and ``atol`` lets a rerun's mean move by ``MOVE_Z``·√2·se."""
    if isinstance(estimate, Estimate):
        mean, se = float(estimate.mean), float(estimate.se)
    else:
        try:
            mean, se = (float(v) for v in estimate)
        except (TypeError, ValueError):
            raise TypeError(f"z_check takes an mmicl.Estimate or (mean, se), got {estimate!r}") from None
    for label, v in (("expected", expected), ("detect", detect), ("k", k), ("power", power)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ValueError(f"z_check's {label} is a finite number, got {v!r} (check {name!r})")
    if not (detect > 0 and k > 0 and 0 < power < 1):
        raise ValueError(f"z_check needs detect > 0, k > 0 and 0 < power < 1, got detect={detect!r}, k={k!r}, "
                         f"power={power!r} (check {name!r})")
    if not (math.isfinite(mean) and math.isfinite(se) and se >= 0):
        passed, z, pw = None, None, None
    else:
        z = (mean - expected) / se if se > 0 else (0.0 if mean == expected else math.copysign(math.inf, mean - expected))
        pw = rejection_power(detect, se, k)
        passed = False if abs(z) > k else (True if pw >= power else None)
    rerun = sampling_atol(se)
    return Check(
        name, method, passed,
        numbers={"mean": mean, "se": se, "expected": float(expected), "z": z, "k": float(k), "detect": float(detect),
                 "power_at_detect": pw},
        tolerance=(f"|z| ≤ {k:g} (false alarm 2Φ(−{k:g}) = {2 * _phi(-k):.2g}), with power ≥ {power:g} at a "
                   f"difference of {detect:g}; fails at |z| > {k:g} whatever the power"),
        detail=detail or ("" if passed is not None or pw is None else
                          f"undecided: power {pw:.2f} < {power:g} at a difference of {detect:g} (se {se:.3g})"),
        role=role,
        atol={"mean": rerun, "se": rerun, "expected": 0.0, "z": sampling_atol(1.0), "k": 0.0, "detect": 0.0,
              "power_at_detect": 1.0},
        numbers_tolerance=f"mean and se: {MOVE_Z:g}·√2·se (two runs are at worst two independent estimates); z: "
                          f"{MOVE_Z:g}·√2; the power moves with se; settings exact",
        sampled=("mean", "se", "z", "power_at_detect"), se={"mean": "se"})
