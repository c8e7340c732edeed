"""Learning checks of the testbed (slow: about 2–3 minutes on one CPU thread).

The "done when" of issue 5 at the quick size (N=4, B=2, L=16, D=16, width 32, 3000 steps,
batch 128, lr 2e-3): a bursty high-K model does ICL and no IWL; a non-bursty low-K model the
reverse; induction strength rises with ICL.  Two seeds per setting, each evaluated on 256
sequences per set: an accuracy's binomial standard error is ≤ √(0.25/256) ≈ 0.031, and the
thresholds below sit ≥ 4 such errors from the values a model doing the other thing would give
(chance 1/L = 0.0625, copy baseline B/N = 0.5).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch
from scipy.stats import spearmanr

from mmicl.numerics.testbed.experiments import Arm, run_arms
from mmicl.proofs.claims.testbed.sizes import QUICK


@pytest.mark.train
@pytest.mark.slow
def test_bursty_high_K_learns_in_context_and_iid_low_K_learns_in_weights():
    torch.set_num_threads(1)
    arms = [Arm("icl", replace(QUICK.data, K=16384, p_bursty=1.0)), Arm("iwl", replace(QUICK.data, K=64, p_bursty=0.0))]
    r = run_arms(QUICK.model, arms, [0, 1], QUICK.train, data_seed=0)
    chance, copy = 1 / QUICK.data.L, QUICK.data.B / QUICK.data.N
    assert (r.final("acc_icl", "icl") > copy + 4 * 0.031).all()
    assert (r.final("acc_iwl", "icl") < chance + 4 * 0.031).all()
    assert (r.final("acc_iwl", "iwl") > 0.9).all()
    assert (r.final("acc_icl", "iwl") < chance + 4 * 0.031).all()
    rho = [spearmanr(r.curve("induction_max", "icl")[:, s], r.curve("acc_icl", "icl")[:, s])[0] for s in range(2)]
    assert np.all(np.asarray(rho) > 0.5), rho


@pytest.mark.cuda
def test_the_ensemble_gives_the_same_logits_on_cuda_and_cpu():
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    from mmicl.numerics.testbed.config import MemberSpec, ModelConfig
    from mmicl.numerics.testbed.data import Mixture
    from mmicl.numerics.testbed.model import EnsembleDecoder

    cfg = ModelConfig(layers=2, heads=2, width=16, mlp_ratio=1, pos="rope")
    mix = Mixture([MemberSpec(QUICK.data, s) for s in range(3)])
    seqs = mix.train_batch(32, torch.Generator().manual_seed(0))
    cpu = EnsembleDecoder(cfg, QUICK.data.D, QUICK.data.L, [0, 1, 2])
    gpu = EnsembleDecoder(cfg, QUICK.data.D, QUICK.data.L, [0, 1, 2], device="cuda")
    torch.testing.assert_close(gpu(seqs.tokens.cuda()).logits.cpu(), cpu(seqs.tokens).logits, rtol=1e-3, atol=1e-4)
    g = torch.Generator(device="cuda").manual_seed(0)
    Mixture([MemberSpec(QUICK.data, 0)], "cuda").iwl_batch(64, g)   # the samplers run on the device
