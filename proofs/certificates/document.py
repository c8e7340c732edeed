"""The certificate document: its common blocks, exact numbers as text, and reading and writing.

A certificate is one JSON object (strict JSON, ``numerics.strict_json``), or a *bundle*
``{"certificates": [...]}`` of several about the same law.  Every exact number is a string: a
rational as ``"p/q"`` (``fractions.Fraction``'s text, ``"4"`` for an integer) and, beside it, a
decimal string that is either the same number exactly or a bound rounded outwards (the key says
which).  Floats appear only where they are information, never evidence (``log10_abs``, timings).
Files are written atomically (``numerics.atomic``): a killed run never leaves half a certificate.
"""
from __future__ import annotations

import json
import platform
import time
from fractions import Fraction
from pathlib import Path
from mmicl.numerics.provenance import __version__, utc_now
from mmicl.numerics.atomic import write_json

__all__ = [
    "FORMAT",
    "bundle",
    "decimal_places",
    "exact_decimal",
    "outward_decimal",
    "provenance",
    "read_certificate",
    "write_certificate",
]

FORMAT = "mmicl-certificate/1"
"""The layout of the certificates (docs/certificates.md); raised when a field changes meaning."""


def decimal_places(x: Fraction) -> int | None:
    """The number of decimals of ``x`` if it is a terminating decimal (its denominator is
    ``2^i 5^j``), else None."""
    q = Fraction(x).denominator
    twos = fives = 0
    while q % 2 == 0:
        q, twos = q // 2, twos + 1
    while q % 5 == 0:
        q, fives = q // 5, fives + 1
    return max(twos, fives) if q == 1 else None


def exact_decimal(x: Fraction) -> str:
    """The exact decimal text of a terminating decimal ``x`` (``ValueError`` for any other)."""
    x = Fraction(x)
    places = decimal_places(x)
    if places is None:
        raise ValueError(f"{x} has no finite decimal expansion")
    sign = "-" if x < 0 else ""
    digits = str(abs(x.numerator) * 10**places // x.denominator).rjust(places + 1, "0")
    return sign + (digits[:-places] + "." + digits[-places:] if places else digits)


def outward_decimal(x: Fraction, significant: int, up: bool) -> Fraction:
    """``x`` rounded to ``significant`` significant decimal digits, down (``up=False``) or up: a
    terminating decimal ``≤ x`` or ``≥ x``."""
    x = Fraction(x)
    if x == 0:
        return x
    exponent = len(str(abs(x.numerator) // x.denominator or 1)) if abs(x) >= 1 else -_leading_zeros(abs(x))
    scale = Fraction(10) ** (significant - exponent)
    scaled = x * scale
    rounded = -((-scaled.numerator) // scaled.denominator) if up else scaled.numerator // scaled.denominator
    return Fraction(rounded) / scale


def _leading_zeros(x: Fraction) -> int:
    """For 0 < x < 1: the number of zeros right after the decimal point."""
    k = 0
    while x * 10 ** (k + 1) < 1:
        k += 1
    return k


def provenance(seconds: dict[str, float], **extra) -> dict:
    """Who made the certificate, when, and how long each step took (information, not evidence)."""

    try:
        import flint

        flint_version = flint.__version__
    except ImportError:  # pragma: no cover - a dependency
        flint_version = None
    return {"mmicl": __version__, "python": platform.python_version(), "python_flint": flint_version,
            "created": utc_now(),
            "seconds": {k: round(v, 6) for k, v in seconds.items()}, **extra}


def bundle(certificates: list[dict]) -> dict:
    """Several certificates in one document (the checker checks each)."""
    return {"format": FORMAT, "certificates": list(certificates)}


def write_certificate(path, certificate: dict) -> Path:
    """Write a certificate (or a bundle) as strict JSON, atomically."""

    return write_json(path, certificate)


def read_certificate(path) -> dict:
    """Read a certificate file (strict JSON: ``NaN`` and ``Infinity`` are refused)."""
    def refuse(token):
        raise ValueError(f"{path}: {token} is not strict JSON")

    with open(path, encoding="utf-8") as f:
        return json.load(f, parse_constant=refuse)


class Stopwatch:
    """Seconds per named step: ``with watch("moments"): …``; ``watch.seconds`` holds them."""

    def __init__(self):
        self.seconds: dict[str, float] = {}
        self._start = time.perf_counter()

    def __call__(self, name: str):
        watch = self

        class _Step:
            def __enter__(self):
                self.t = time.perf_counter()

            def __exit__(self, *exc):
                watch.seconds[name] = watch.seconds.get(name, 0.0) + time.perf_counter() - self.t

        return _Step()

    def total(self) -> dict[str, float]:
        return {**self.seconds, "total": time.perf_counter() - self._start}
