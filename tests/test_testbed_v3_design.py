"""Version 3 of the testbed claims is pre-registered in code and in docs/testbed.md: the two agree,
the verdict seeds are fresh, and the stated power is the sign test's."""
from __future__ import annotations

from pathlib import Path

from mmicl.numerics.testbed.decide_v3 import min_plus_to_decide
from mmicl.proofs.claims import testbed_v3 as v3

DOC = Path(__file__).resolve().parents[1] / "docs" / "testbed.md"


def test_the_docs_carry_the_design_the_code_states():
    text = DOC.read_text(encoding="utf-8")
    block = text.split("<!-- v3-design:start -->\n", 1)[1].split("\n<!-- v3-design:end -->", 1)[0]
    assert block == v3.design_markdown(), "regenerate it: python -m mmicl.proofs.claims.testbed_v3"


def test_verdict_seeds_are_fresh_and_apart_from_the_pilots():
    """Versions 1–2 used seeds 100·seed + s (s < 8) and pilots 200–203; version 3's families and
    pilots share no seed with them or with each other."""
    a, b, pilots = set(v3.FAMILIES["A"]), set(v3.FAMILIES["B"]), set(v3.PILOT_SEEDS)
    earlier = {100 * k + s for k in range(10) for s in range(8)} | set(range(200, 204))
    assert len(a) == len(b) == 8 and not (a & b) and not ((a | b) & pilots) and not ((a | b | pilots) & earlier)


def test_every_check_has_a_positive_margin_a_reason_and_a_known_kind():
    for d in v3.DESIGNS.values():
        assert d.checks and any(c.role == "decisive" for c in d.checks), d.claim
        for c in d.checks:
            assert c.kind in ("superiority", "non-inferiority", "inferiority") and c.role in ("decisive", "corroborating")
            assert c.margin >= 0 and c.margin_why


def test_the_families_can_decide_and_the_stated_power_is_the_tests():
    assert min_plus_to_decide(8, v3.ALPHA) == 7 and min_plus_to_decide(16, v3.ALPHA) == 12
    pw = v3.power_table()
    assert 0.75 < pw[16][0.8] < pw[16][0.9] and pw[8][0.9] < pw[16][0.9]


def test_claim3s_pilot_rule_chooses_what_it_states():
    ok, low = [0.95, 0.97, 0.92, 0.99], [0.95, 0.5, 0.96, 0.97]
    finals = {("ape", 64): [0.2] * 4, ("ape", 128): [0.91, 0.95, 0.2, 0.93], ("rope", 128): [0.3] * 4,
              ("ape", 512): ok, ("rope", 512): low, ("ape", 1024): ok, ("rope", 1024): ok}
    c = v3.choose_claim3(finals)
    assert c["K_thr"] == 128          # APE's median at 128 is 0.92 ≥ 0.9; at 64 it is 0.2
    assert c["K_both"] == 1024        # at 512 one RoPE seed is at 0.5
    assert v3.choose_claim3({})["K_both"] is None
