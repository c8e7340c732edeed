"""docs/variants.md's table of floors is recomputed: every number in it, to the digits it shows."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from mmicl.numerics import variants as nv
from mmicl.numerics.laws.language import parse_law

DOC = Path(__file__).resolve().parents[2] / "docs" / "variants.md"
LAW = "sv=beta(2,5,0.2,3); sr=twopoint(0.5,2,0.5); zeta=rademacher; d1=3; d2=2"
ZERO = 1e-12  # a "0" in the table: at most this fraction of the zero predictor's excess (rounding)


def _rows() -> list[list[str]]:
    text = DOC.read_text(encoding="utf-8")
    table = text[text.index("| variant | floor |"):].split("\n\n")[0].splitlines()[2:]
    return [[c.strip() for c in line.strip("|").split("|")] for line in table]


def _agrees(shown: str, value: float, scale: float) -> bool:
    """``value`` rounds to ``shown`` (half a unit of its last digit), or is 0 to rounding where it shows 0."""
    if shown in ("0", "0.0"):
        return abs(value) <= ZERO * scale
    digits = shown.replace("−", "-").lstrip("-")
    mant, _, exp = digits.partition("e")
    last = 10.0 ** (-(len(mant.split(".")[1]) if "." in mant else 0) + (int(exp) if exp else 0))
    return abs(value - float(shown.replace("−", "-"))) <= 0.5 * last * (1 + 1e-9)


def test_the_table_lists_the_variants_it_says():
    assert [r[0] for r in _rows()][:2] == ["default", "`param=two`"] and len(_rows()) == 9


def _even(variant: str, params) -> list[bool]:
    """Per parameter, whether the depth-50 loss is even in it at ``params``: flipping its sign leaves
    the excess unchanged to 1e-9 relative (float64 rounding of 50 layers is ~1e-14 relative; a loss
    that is not even in a parameter moves by O(1) relative when it flips at a minimiser away from 0).
    Where the loss is even in a parameter, its minimiser's sign is the optimiser's choice, not a
    result (the same holds of the floor's scaled family, the limit of the depth-T parameters)."""
    base = nv.excess_at(LAW, 50, variant, list(params))
    out = []
    for i in range(len(params)):
        flipped = list(params)
        flipped[i] = -flipped[i]
        out.append(abs(nv.excess_at(LAW, 50, variant, flipped) - base) <= 1e-9 * abs(base))
    return out


def _same_up_to_sign(shown: list[str], values, even: list[bool]) -> bool:
    return len(shown) == len(values) and all(_agrees(s, v, 1) or (e and _agrees(s, -v, 1))
                                             for s, v, e in zip(shown, values, even))


@pytest.mark.parametrize("row", _rows(), ids=lambda r: r[0])
def test_each_row_is_what_mmicl_computes(row):
    name, floor, regime, phi, stable, e50, theta50 = row
    variant = "default" if name == "default" else name.strip("`")
    fl = nv.floor(LAW, variant)
    scale = parse_law(LAW).rule(1).expect(lambda s: s / (1 + s))  # the zero predictor's excess
    assert _agrees(floor, fl.value, scale) and _agrees(stable, fl.stable, scale)
    assert regime.split()[0] == fl.regime
    m = nv.minimise(LAW, 50, variant)
    even = _even(variant, m.params)
    if fl.regime == "scaled":
        assert _same_up_to_sign(re.findall(r"[−-]?\d+\.\d+", phi.split("=")[-1]), fl.params, even)
    if e50.startswith("<"):  # below the rounding bound: the page gives the bound, not a number
        assert not m.resolved and _agrees(e50.lstrip("< "), m.resolution, 1) and theta50 == ""
        return
    assert m.resolved and _agrees(e50, m.excess, scale)
    assert _same_up_to_sign(re.findall(r"[−-]?\d+\.\d+", theta50), m.params, even)


def test_the_approach_from_below_that_the_page_quotes():
    text = DOC.read_text(encoding="utf-8")
    e10, e100, F = re.search(r"E_10 = ([\d.]+), E_100 = ([\d.]+) against F = ([\d.]+)", text).groups()
    v = "readout=evolved-keys-and-query"
    assert _agrees(e10, nv.minimise(LAW, 10, v).excess, 1) and _agrees(e100, nv.minimise(LAW, 100, v).excess, 1)
    assert _agrees(F, nv.floor(LAW, v).value, 1)


def test_the_defaults_log_scale_numbers_the_page_quotes():
    from mmicl.numerics import lca

    text = DOC.read_text(encoding="utf-8")
    e50, a50 = re.search(r"E_50 = ([\d.e−-]+) at α_50 = (\d+\.\d+)", text).groups()
    a = lca.alpha_T(LAW, 50)
    assert _agrees(a50, a, 1) and _agrees(e50.replace("−", "-"), lca.excess_risk_scaled(LAW, 50, a).value, 1)
