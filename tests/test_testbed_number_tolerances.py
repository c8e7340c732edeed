"""Every number the testbed claims (1-9) report states how far it may move between two runs.

The claims train for hours, so their decision code is run here on synthetic per-seed results: the
training (``_ensembles``, ``stage1``, ``run_stage2``, ``run_fusion``), the figures and the result
files are replaced by fakes, and each check and summary the claim builds is read for a numeric
leaf without a tolerance (``tolerance_of``)."""
from __future__ import annotations

import math
from dataclasses import fields

import numpy as np
import pytest

import mmicl.proofs.claims.testbed as tb
import mmicl.proofs.claims.testbed_multimodal as tbm
from mmicl.proofs.claims.number_tolerances import sampling_atol
from mmicl.compare import number_keys
from mmicl.proofs.claim import Check, RunConfig, Summary, tolerance_of

EVALS = 5


def uncovered(numbers: dict, atol, rtol) -> set[str]:
    return {k for k in number_keys(numbers) if tolerance_of(atol, rtol, k) is None}


def _check_fields(obj):
    """Checks stored beside a claim (``asdict(check)`` in a result file's extras), found anywhere in ``obj``."""
    names = {f.name for f in fields(Check)}
    if isinstance(obj, dict):
        if names <= set(obj):
            yield obj
        else:
            for v in obj.values():
                yield from _check_fields(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _check_fields(v)


class _History:
    def __init__(self, steps):
        self.steps = steps

    def to_json(self):
        return {"steps": self.steps}


class _Run:
    def __init__(self, steps):
        self.history, self.model, self.eval_sets = _History(steps), None, None


class FakeResults:
    """An ``ArmResults`` stand-in: every (metric, arm) curve is drawn once, (evaluations, seeds),
    as accuracies on 256 sequences (or all 1 when ``saturated``)."""

    def __init__(self, arms, seeds, rng, saturated=False):
        self.arms, self.seeds, self._rng, self._saturated = arms, list(seeds), rng, saturated
        self.run = _Run([100 * i for i in range(EVALS)])
        self._curves = {}

    @property
    def steps(self):
        return self.run.history.steps

    def curve(self, metric, arm):
        if (metric, arm) not in self._curves:
            shape = (EVALS, len(self.seeds))
            self._curves[metric, arm] = np.ones(shape) if self._saturated else \
                np.round(self._rng.uniform(0.05, 0.95, shape) * 256) / 256
        return self._curves[metric, arm]

    def final(self, metric, arm):
        return self.curve(metric, arm)[-1]

    def table(self, *_, **__):
        return {}


class FakeStage1:
    def __init__(self, seeds, rng):
        self.E = len(seeds)
        self.final = {"acc_icl": rng.uniform(0.6, 1.0, self.E).tolist(),
                      "induction": rng.uniform(0, 1, (self.E, 2, 1)).tolist(),
                      "prev_token": rng.uniform(0, 1, (self.E, 2, 1)).tolist()}


@pytest.fixture
def fake_training(monkeypatch):
    """Replace training, figures and result files of both testbed modules; returns the extras the
    multimodal claims write beside their checks (``_record``'s keyword arguments)."""
    state = {"rng": np.random.default_rng(0), "saturated": False, "has_control": None, "records": []}

    def ensembles(config, jobs, seeds=None):
        sz = tb.sizes(config)
        seeds = seeds or [config.seed * 100 + s for s in range(sz.seeds)]
        rng, n = state["rng"], len(seeds)
        has = state["has_control"] if state["has_control"] is not None else [True] * n
        ab = {"icl": rng.uniform(0.5, 1, n).tolist(), "icl_without_induction_heads": rng.uniform(0, 0.6, n).tolist(),
              "has_control": has, "icl_without_control_heads": [float(rng.uniform(0.4, 1)) if h else None for h in has],
              "control_layer_matched": [bool(i % 2) for i in range(n)],
              "induction_heads": rng.integers(0, 2, (n, 2, 4)).tolist()}
        return {name: (FakeResults(arms, seeds, rng, state["saturated"]),
                       {"config": {"seeds": seeds}, "key": name, "provenance": {"seconds": 1.0},
                        "result": {"analysis": ab}})
                for name, (_, arms, _) in jobs.items()}

    def stage2(s1, arms, *_, **__):
        return FakeResults(arms, range(s1.E), state["rng"], state["saturated"])

    def fusion(model, m1, arms, seeds, *_, **__):
        return FakeResults(arms, seeds, state["rng"], state["saturated"])

    monkeypatch.setattr(tb, "_ensembles", ensembles)
    monkeypatch.setattr(tbm, "stage1", lambda config, sz, model=None: FakeStage1(tbm._seeds(config, sz), state["rng"]))
    monkeypatch.setattr(tbm, "run_stage2", stage2)
    monkeypatch.setattr(tbm, "run_fusion", fusion)
    monkeypatch.setattr(tbm, "ablation_drop", lambda *_, **__: np.zeros((1, 2, 1)))
    monkeypatch.setattr(tbm, "_record", lambda *a, **kw: state["records"].append(kw))
    for module in (tb, tbm):
        monkeypatch.setattr(module, "plot_curves", lambda *a, **k: "curves.png")
        monkeypatch.setattr(module, "plot_against", lambda *a, **k: "against.png")
        monkeypatch.setattr(module, "write_json", lambda *a, **k: None)
    return state


CLAIMS = {1: tb.claim1, 2: tb.claim2, 3: tb.claim3, 8: tb.claim8,
          4: tbm.claim4, 5: tbm.claim5, 6: tbm.claim6, 7: tbm.claim7, 9: tbm.claim9}
SAMPLED = {"difference", "interval", "seeds", "a", "b", "status", "ICL(APE) - ICL(RoPE)", "induction",
           "with_control_ablated", "with_induction_ablated", "area_under_icl"}
"""Keys of per-seed (sampled) numbers: their tolerance is not 0 on results that vary over seeds."""


def _assert_covered(checks, summary, records, varied: bool):
    for c in checks:
        assert not uncovered(c.numbers, c.atol, c.rtol), (c.name, uncovered(c.numbers, c.atol, c.rtol))
        if any(v > 0 for v in (c.atol.values() if isinstance(c.atol, dict) else [c.atol])):
            assert c.numbers_tolerance, c.name
        for k in SAMPLED & set(c.numbers):
            a, _ = tolerance_of(c.atol, c.rtol, k)
            assert math.isfinite(a) and (a > 0 or not varied), (c.name, k, a)
    for c in (c for kw in records for c in _check_fields(kw)):
        assert not uncovered(c["numbers"], c["atol"], c["rtol"]), (c["name"], uncovered(c["numbers"], c["atol"], c["rtol"]))
    assert isinstance(summary, Summary) and summary.why
    assert not uncovered(dict(summary), summary.atol, summary.rtol), uncovered(dict(summary), summary.atol, summary.rtol)


@pytest.mark.parametrize("claim", sorted(CLAIMS))
def test_every_number_of_a_testbed_claim_states_a_tolerance(claim, fake_training, tmp_path):
    hyps, checks, summary, figs = CLAIMS[claim](RunConfig(quick=True, out=tmp_path, seed=1))
    assert checks
    _assert_covered(checks, summary, fake_training["records"], varied=True)


@pytest.mark.parametrize("claim", [1, 3, 4, 8])
def test_seeds_all_at_accuracy_one_still_may_move_by_about_one_sequence(claim, fake_training, tmp_path):
    """No spread over seeds (every seed at 1): an accuracy's tolerance is the binomial floor, not 0."""
    fake_training["saturated"] = True
    _, checks, summary, _ = CLAIMS[claim](RunConfig(quick=True, out=tmp_path, seed=1))
    _assert_covered(checks, summary, fake_training["records"], varied=False)
    accuracy_checks = [c for c in checks if ("seeds" in c.numbers or "a" in c.numbers or "status" in c.numbers)
                       and "pattern" not in c.name]  # claim 3's attention strengths are not accuracies: no floor
    assert accuracy_checks
    for c in accuracy_checks:
        key = next(k for k in ("seeds", "a", "status") if k in c.numbers)
        assert c.atol[key] > 0, (c.name, key)


def test_claim8_with_too_few_controls_states_its_count_exact(fake_training, tmp_path):
    fake_training["has_control"] = [True] + [False] * 7
    _, checks, summary, _ = tb.claim8(RunConfig(quick=True, out=tmp_path, seed=1))
    (spec,) = [c for c in checks if c.name.startswith("the collapse is specific")]
    assert spec.numbers == {"members_with_control": 1} and spec.atol == {"members_with_control": 0.0}
    _assert_covered(checks, summary, [], varied=True)


def test_the_per_seed_spread_and_the_interval_tolerances():
    v = np.array([0.2, 0.4, 0.6])
    assert tb.seed_sd(v) == pytest.approx(0.2)
    assert tb.mean_se(v) == pytest.approx(0.2 / math.sqrt(3))
    # an accuracy on 100 sequences: at least the binomial sd at the mean, p kept off 0 and 1
    assert tb.seed_sd([0.5, 0.5], n_eval=100) == pytest.approx(0.05)
    assert tb.seed_sd([1.0, 1.0, 1.0], n_eval=100) == pytest.approx(math.sqrt(0.01 * 0.99 / 100))
    assert tb.seed_sd([1.0]) == 0.0
    # an interval's ends also move with its se's own error: se·√(1 + q²/(2·df))
    from scipy import stats

    q = stats.t.ppf(0.975, 2)
    assert tb.t_atol(v) == pytest.approx(sampling_atol(0.2 / math.sqrt(3) * math.sqrt(1 + q * q / 4)))
    assert tb.interval_atol(0.1, math.nan) == pytest.approx(sampling_atol(0.1))
    a, b = np.array([0.1, 0.3, 0.5, 0.7]), np.array([0.2, 0.2, 0.4])
    va, vb = tb.mean_se(a) ** 2, tb.mean_se(b) ** 2
    df = (va + vb) ** 2 / (va ** 2 / 3 + vb ** 2 / 2)
    assert tb.welch_atol(a, b) == pytest.approx(tb.interval_atol(math.sqrt(va + vb), df))
    assert tb.rank_atol(5) == pytest.approx(sampling_atol(0.5))


def test_a_check_s_tolerances_do_not_change_its_decision_or_numbers():
    """``n_eval`` reaches only the tolerances: the same values give the same verdict and numbers."""
    a, b = np.array([0.9, 0.8, 0.85]), np.array([0.3, 0.4, 0.35])
    for make in (lambda **k: tb.compare("c", a, b, "x", **k), lambda **k: tb.above("c", a, 0.5, "x", **k),
                 lambda **k: tb.below("c", b, 0.5, "x", **k)):
        plain, floored = make(), make(n_eval=256)
        assert (plain.passed, plain.numbers) == (floored.passed, floored.numbers)
        assert all(floored.atol[k] >= plain.atol[k] for k in plain.atol)


def test_welch_atol_survives_variances_whose_squares_underflow():
    """A Hypothesis draw found seeds with spreads near 1e-100: the Welch–Satterthwaite degrees of
    freedom, (va + vb)²/(va²/(na−1) + vb²/(nb−1)), then divided 0 by 0 in float64.  In shares of
    va + vb the same formula is finite."""
    from mmicl.proofs.claims.testbed import welch_atol

    a, b = np.array([8.08884728e-100, 0.0]), np.array([0.0, 0.0])
    atol = welch_atol(a, b)
    assert math.isfinite(atol) and atol > 0
