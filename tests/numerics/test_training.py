"""The training loop: it learns, is reproducible, detects divergence, resumes exactly."""
import math

import pytest
import torch

from mmicl.numerics.laws.language import parse_law
from mmicl.numerics.lca import alpha_T, bayes_risk, excess_risk
from mmicl.numerics.models import LinearSelfAttention, ReducedLCA
from mmicl.numerics.training import estimate_risk, train

torch.set_num_threads(1)
LAW = parse_law("s=uniform(0.5,4)")


@pytest.mark.train
def test_training_lowers_the_loss_and_moves_alpha_towards_alpha_T():
    model = ReducedLCA(3, "one", 0.05)
    res = train(model, LAW, n=None, steps=150, batch=512, lr=0.01, seed=0)
    a_T = alpha_T(LAW, 3)
    assert not res.diverged
    assert abs(float(model.alpha.detach()) - a_T) < abs(0.05 - a_T) / 4
    assert res.history["loss"][-1] < res.history["loss"][0]


@pytest.mark.train
def test_same_seed_same_run():
    runs = [train(ReducedLCA(3, "two", 0.1, -0.05), LAW, n=50, steps=30, batch=64, seed=7).final for _ in range(2)]
    assert runs[0] == runs[1]


def test_divergence_is_detected_and_reported_with_finite_parameters():
    """α = 2 is outside the stable region |1 − α(1+s)| < 1 for every s ≥ 0.5, and plain SGD with a
    large step runs away: the run must stop, say so, and keep finite parameters."""
    model = ReducedLCA(10, "one", 2.0)
    res = train(model, LAW, n=None, steps=200, batch=64, lr=10.0, optimizer="sgd", seed=0)
    assert res.diverged and res.divergence_step is not None and "diverged" in res.message
    assert math.isfinite(float(model.alpha.detach()))


@pytest.mark.train
def test_resume_from_checkpoint_gives_the_same_parameters_as_one_run(tmp_path):
    ckpt = tmp_path / "run.pt"
    one = ReducedLCA(4, "two", 0.1, -0.05)
    train(one, LAW, n=30, steps=40, batch=32, seed=3)
    part = ReducedLCA(4, "two", 0.1, -0.05)
    train(part, LAW, n=30, steps=20, batch=32, seed=3, checkpoint=ckpt, checkpoint_every=10)
    resumed = ReducedLCA(4, "two", 0.1, -0.05)
    res = train(resumed, LAW, n=30, steps=40, batch=32, seed=3, checkpoint=ckpt, checkpoint_every=10)
    assert res.steps_done == 40
    assert resumed.params() == one.params()


@pytest.mark.train
def test_fixed_full_batch_training_set():
    model = LinearSelfAttention(LAW.d)
    res = train(model, LAW, n=20, steps=50, batch=10_000, lr=0.01, data="fixed", train_size=2000, seed=1)
    assert not res.diverged and res.history["loss"][-1] < res.history["loss"][0]


def test_risk_minus_excess_is_the_bayes_risk():
    """50 000 prompts at n = ∞; the identity risk − excess = E[ζ²/(1+s)] holds within
    4·(se(risk) + se(excess)) (the se of a difference is at most the sum of the se's)."""
    model = ReducedLCA(5, "one", alpha_T(LAW, 5))
    est = estimate_risk(model, LAW, n=None, samples=50_000, seed=0)
    assert abs(est.risk - est.excess - bayes_risk(LAW)) <= 4 * (est.risk_se + est.excess_se)
    assert abs(est.excess - excess_risk(LAW, 5, float(model.alpha.detach()))) <= 4 * est.excess_se


@pytest.mark.parametrize("kw", [dict(lr=float("nan")), dict(batch=0), dict(data="fixed")])
def test_bad_arguments_are_refused(kw):
    args = dict(n=10, steps=1)
    args.update(kw)
    with pytest.raises(ValueError):
        train(ReducedLCA(2), LAW, **args)


@pytest.mark.train
def test_checkpoints_are_written_atomically(tmp_path, monkeypatch):
    """A save that fails half-way (here: torch.save raises after writing some bytes) leaves the
    previous checkpoint whole and no temporary file behind (numerics.atomic.replacing)."""
    ckpt = tmp_path / "run.pt"
    train(ReducedLCA(3, "one", 0.1), LAW, n=None, steps=10, batch=16, seed=0, checkpoint=ckpt, checkpoint_every=5)
    before = ckpt.read_bytes()

    def broken_save(obj, f):
        f.write(b"half a checkpoint")
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", broken_save)
    with pytest.raises(OSError, match="disk full"):
        train(ReducedLCA(3, "one", 0.1), LAW, n=None, steps=20, batch=16, seed=0, checkpoint=ckpt, checkpoint_every=5)
    assert ckpt.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["run.pt"]


def test_risk_estimate_is_two_estimates_on_the_same_prompts():
    est = estimate_risk(ReducedLCA(2, "one", 0.2), LAW, n=10, samples=3000, seed=1)
    assert est.risk_estimate.samples == est.excess_estimate.samples == est.samples == 3000
    assert est.to_json() == {"risk": est.risk, "risk_se": est.risk_se, "excess": est.excess,
                             "excess_se": est.excess_se, "samples": 3000, "n": 10}


@pytest.mark.train
@pytest.mark.parametrize("damage", ["other seed", "other law", "other model", "other depth", "variant depth", "other lr",
                                    "other schedule", "old version", "garbage", "pickle"])
def test_a_checkpoint_of_another_run_or_unreadable_is_refused_in_one_line(tmp_path, damage):
    """Resuming reads with weights_only=True and checks the run the file records: another seed, law
    or model, a file without that record (an earlier version), garbage, or a pickle of arbitrary
    objects is an InputError of one line, and nothing in the file is executed."""
    import pickle

    from mmicl.numerics.laws.language import parse_law
    from mmicl.numerics.validate import InputError

    ckpt = tmp_path / "run.pt"
    train(ReducedLCA(3, "one", 0.1), LAW, n=None, steps=4, batch=8, seed=0, checkpoint=ckpt, checkpoint_every=2)
    model, law, seed, more = ReducedLCA(3, "one", 0.1), LAW, 0, {}
    if damage == "other depth":  # the same parameters (one α): only the recorded T tells the runs apart
        model = ReducedLCA(5, "one", 0.1)
    elif damage == "variant depth":
        from mmicl.numerics.variant_models import VariantLCA

        v = "readout=evolved-keys-and-query"
        ckpt.unlink()
        train(VariantLCA(v, 3, [0.1]), LAW, n=None, steps=4, batch=8, seed=0, checkpoint=ckpt, checkpoint_every=2)
        model = VariantLCA(v, 5, [0.1])
    elif damage == "other lr":
        more = {"lr": 0.5}
    elif damage == "other schedule":
        more = {"schedule": "cosine"}
    elif damage == "other seed":
        seed = 1
    elif damage == "other law":
        law = parse_law("s=uniform(1,2); d1=2; d2=1")
    elif damage == "other model":
        model = ReducedLCA(3, "two", 0.1, -0.1)
    elif damage == "old version":
        state = torch.load(ckpt, weights_only=True)
        del state["run"]
        torch.save(state, ckpt)
    elif damage == "garbage":
        ckpt.write_bytes(b"\x00not a checkpoint")
    else:
        class Boom:
            def __reduce__(self):
                return (exec, ("import os; os.environ['MMICL_PWNED'] = '1'",))
        ckpt.write_bytes(pickle.dumps({"run": Boom()}))
    with pytest.raises(InputError) as e:
        train(model, law, n=None, steps=8, batch=8, seed=seed, checkpoint=ckpt, checkpoint_every=2, **more)
    assert "\n" not in str(e.value) and str(ckpt) in str(e.value)
    if damage in ("other depth", "variant depth"):
        assert "model T 3 (this run: 5)" in str(e.value)
    assert "MMICL_PWNED" not in __import__("os").environ
