"""Pilot of testbed claim 7 (encoder quality), on the pilot seeds 9000-9003, which no
verdict uses.  It chooses the four encoder doses of the pre-registered design
(proofs/claims/testbed/design.py, DESIGNS["claim7"].pilot_rule):

    the four pretraining step counts that put the pilot median encoder accuracy nearest 0.2, 0.4,
    0.6 and 0.8 (nearest per target; a tie goes to the fewer steps; if two targets pick the same
    count, no choice is made and a finer grid must be piloted).

The first targets were 0.4, 0.6, 0.8 and 0.95; the encoder's accuracy tops out near 0.83 at this M2,
so they were replaced before any verdict run (docs/records/testbed-superseded-pilot-rules.md).  The
committed file, written when both were in the code, records both choices ("encoder_steps": the
current targets', "as_designed": the first targets'); a run now writes the current targets' only.

Step counts tried: pilots.ENCODER_STEP_GRID (0 ... 2560).  The encoder is trained
exactly as stage 2 of the claim trains it (multimodal_experiments): an MLP 16 -> 64 -> 32
-> 64 on single noisy items of the claim's M2 (K2 = 64 classes, D2 = 16, eps2 = 1.0), Adam at
stage 2's batch 128 and lr 2e-3, accuracy on 1024 held-out items (EVAL_SIZE); one member per
(step count, seed), seeded as a stage-2 grid seeds them.  The encoder's accuracy is that of its
logits, which the feature standardisation does not touch.  Only the encoder trains
(no decoder): the rule reads encoder accuracy alone.

Run:  python studies/pilot_claim7.py      (one torch thread, about a minute; writes
      studies/results/pilot_claim7.json, which pilots.PILOTED["claim7"] must match)
"""
from pathlib import Path

import torch

from mmicl.proofs.claims.testbed.pilots import main

if __name__ == "__main__":
    torch.set_num_threads(1)
    main(["--pilot", "claim7", "--out", str(Path(__file__).resolve().parent / "results" / "pilot_claim7.json")])
