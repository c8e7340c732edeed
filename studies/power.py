"""The power of each decisive check of the committed testbed verdicts, at the effect sizes those
runs observed.

    python studies/power.py [--results studies/results/v3_quick] [--out studies/results/power_v3.json]
    python studies/power.py --results studies/results/v4_quick --out studies/results/power_v4.json

For each claim (the latest committed version of each) and each of its decisive checks, the 16
per-seed differences of the verdict run (both families, ``diff_A`` and ``diff_B``) give the
observed mean and the seed-to-seed sd.  Under the normal model of
``sign_tests.outcome_probabilities`` (a seed's true difference N(mean, sd²), its measurement adding
evaluation noise N(0, se²)), the exact law of the two-family rule's decision is
``sign_tests.combined_power``: P(holds), P(fails), P(undecided) had the runs been repeated on fresh
seeds of the same kind.  The version-3 result files do not record each seed's evaluation se, so two
readings are given: se = 0 (seed-to-seed variation only: the most a repeat could resolve) and se =
0.022, the design's bound for an accuracy difference on 1024 items (√(2·¼/1024); for checks on
areas or slopes a stand-in of that size).  Where a run records them (``se_A``, ``se_B``, version 4), a
third reading takes their mean, the evaluation noise the run itself had.
The sd is itself estimated from 16 seeds; the table is a reading of the observed effects, not a
guarantee.  Written atomically as JSON with ``--out``.
"""
from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

from mmicl.numerics.atomic import write_json
from mmicl.numerics.testbed.sign_tests import combined_power, outcome_probabilities
from mmicl.proofs.claims.testbed.common import oriented
from mmicl.proofs.claims.testbed.design import design_of_run

ROOT = Path(__file__).resolve().parents[1]
SE_READINGS = (0.0, math.sqrt(2 * 0.25 / 1024))
"""The evaluation se's the table reads the checks at (module docstring)."""


def _version(folder: Path) -> tuple[float, ...]:
    return tuple(float(x) for x in folder.name.split("_v", 1)[1].split("."))


def latest(results: Path) -> dict[str, Path]:
    """The verdicts.json of the latest committed version of each claim."""
    out: dict[str, Path] = {}
    for folder in sorted(results.iterdir()):
        if folder.is_dir() and "_v" in folder.name and (folder / "verdicts.json").is_file():
            claim = folder.name.split("_v", 1)[0]
            if claim not in out or _version(folder) > _version(out[claim].parent):
                out[claim] = folder / "verdicts.json"
    return dict(sorted(out.items(), key=lambda kv: int(kv[0].removeprefix("claim"))))


def rows(results: Path) -> list[dict]:
    table = []
    for claim, path in latest(results).items():
        doc = json.loads(path.read_text(encoding="utf-8"))
        entry = doc["claims"][0]
        version = path.parent.name.split("_v", 1)[1]
        planned = {c.name: c for c in design_of_run(claim, version, path.parent).checks}
        for check in entry["evidence"]["checks"]:
            nums = check.get("numbers", {})
            if check.get("role") != "decisive" or "diff_A" not in nums:
                continue
            if check["name"] not in planned:
                raise ValueError(f"{path}: check {check['name']!r} is not one of {claim}'s design checks")
            # oriented as the decision read them: the claimed side positive, against its margin
            d, m = oriented(planned[check["name"]], np.array(nums["diff_A"] + nums["diff_B"], float))
            if d.size < 2:   # a premise left too few seeds to estimate an effect and its spread
                table.append({"claim": claim, "version": path.parent.name.split("_v", 1)[1], "check": check["name"],
                              "verdict": entry["verdict"], "passed": check.get("passed"), "n_a": len(nums["diff_A"]),
                              "n_b": len(nums["diff_B"]), "mean": None, "sd": None, "margin": m, "readings": [],
                              "readings_null_reason": f"{d.size} seed(s) left by the premises: no effect to read"})
                continue
            mean, sd = float(d.mean()), float(d.std(ddof=1))
            row = {"claim": claim, "version": path.parent.name.split("_v", 1)[1], "check": check["name"],
                   "verdict": entry["verdict"], "passed": check.get("passed"), "n_a": len(nums["diff_A"]),
                   "n_b": len(nums["diff_B"]), "mean": mean, "sd": sd, "margin": m, "readings": []}
            observed = nums.get("se_A", []) + nums.get("se_B", [])
            for se in SE_READINGS + ((float(np.mean(observed)),) if observed else ()):
                pp, pm = outcome_probabilities(mean, sd, se, m)
                law = combined_power(max(row["n_a"], 1), max(row["n_b"], 1), pp, pm)
                row["readings"].append({"se": se, "p_plus": pp, "p_minus": pm, "holds": law[True],
                                        "fails": law[False], "undecided": law[None]})
            table.append(row)
    return table


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", type=Path, default=ROOT / "studies" / "results" / "v3_quick")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args(argv)
    table = rows(a.results)
    for r in table:
        if not r["readings"]:
            print(f"{r['claim']} v{r['version']:<4} {r['check'][:58]:58s} {r['readings_null_reason']}")
            continue
        cells = "  ".join(f"se={x['se']:.3f}: holds {x['holds']:.2f} fails {x['fails']:.2f}" for x in r["readings"])
        print(f"{r['claim']} v{r['version']:<4} {r['check'][:58]:58s} mean {r['mean']:+.3f} sd {r['sd']:.3f} "
              f"margin {r['margin']:+.3f} | {cells}")
    if a.out:
        write_json(a.out, {"schema_version": 1, "what": __doc__.splitlines()[0], "se_readings": list(SE_READINGS),
                           "rows": table})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
