"""``mmicl verify`` with three quick stand-in claims (``fake.a``, ``fake.b``, ``fake.c``), for the
tests of the results folder (tests/shell/test_results_folder.py): each sleeps ``FAKE_SLEEP`` seconds,
writes an evidence file recording the run's seed and a figure of about ``FAKE_FIGURE_KIB`` KiB
(random pixels, which PNG cannot compress), through the package's own writers.
``FAKE_SPACE_PER_CLAIM`` (bytes) replaces the free space ``verify`` asks for before it starts.

    python tests/support/folder_run.py verify --claim 'fake.*' --out OUT --seed 1
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

from mmicl.numerics.atomic import save_figure, write_json
from mmicl.cli import main
from mmicl.proofs.claim import Check, Claim, Hypothesis
from mmicl.proofs.registry import REGISTRY, register


def _evaluate(name: str):
    def evaluate(config):
        time.sleep(float(os.environ.get("FAKE_SLEEP", "0.2")))
        write_json(config.out / "fake" / f"{name}.json", {"claim": name, "seed": config.seed})
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        side = max(8, int((float(os.environ.get("FAKE_FIGURE_KIB", "20")) * 1024 / 3) ** 0.5))
        pixels = np.random.default_rng(config.seed).random((side, side, 3))
        fig = plt.figure(figsize=(side / 100, side / 100), dpi=100)
        fig.figimage(pixels)
        path = save_figure(fig, config.figures / f"fake_{name}.png", dpi=100)
        plt.close(fig)
        check = Check(f"{name} stand-in", "stand-in", True, {"seed": config.seed})
        return [Hypothesis("none", True)], [check], {"seed": config.seed}, [path]
    return evaluate


for name in "abc":
    if f"fake.{name}" not in REGISTRY:
        register(Claim(f"fake.{name}", f"stand-in {name}", "a stand-in claim for the results-folder tests",
                       _evaluate(name)))

if __name__ == "__main__":
    if "FAKE_SPACE_PER_CLAIM" in os.environ:  # let a run start on a disk smaller than the preflight asks
        import mmicl.cli as cli

        cli.SPACE_PER_CLAIM = int(os.environ["FAKE_SPACE_PER_CLAIM"])
    sys.exit(main())
