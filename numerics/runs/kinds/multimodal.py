"""What the multimodal kinds (``stage1``, ``stage2``, ``fusion``) share: their settings' checks,
the analyses a stage-2 or fusion run may name, and what such a run keeps of its trained arms."""
from __future__ import annotations

import inspect

from .ensemble import curves_and_finals
from mmicl.numerics.validate import check_seed

__all__ = ["STAGE1_SETTINGS", "STAGE2_SETTINGS", "FUSION_SETTINGS", "device_setting", "seed_list",
           "check_settings", "head_score_spread", "multimodal_analyses", "analysis_setting", "arms_result"]

STAGE1_SETTINGS = frozenset({"model", "data", "train", "seeds", "data_seed", "device"})
STAGE2_SETTINGS = frozenset({"stage1", "arms", "train", "trainable", "device", "data_seed", "analysis", "eval_on"})
FUSION_SETTINGS = frozenset({"model", "m1", "arms", "seeds", "train", "device", "data_seed", "analysis"})


def device_setting(config: dict, default: str = "cpu") -> str:
    device = config.get("device", default)
    if device not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}")
    return device


def seed_list(seeds) -> list[int]:

    if not isinstance(seeds, (list, tuple)) or not seeds:
        raise ValueError(f"seeds must be a non-empty list of seeds, got {seeds!r}")
    out = [check_seed(s) for s in seeds]
    if len(set(out)) != len(out):
        raise ValueError(f"seeds must differ, got {out}")
    return out


def check_settings(kind: str, config: dict, allowed: frozenset, needed: set) -> dict:
    if not isinstance(config, dict):
        raise ValueError(f"the settings of a {kind} run are a dict, got {config!r}")
    config = {k: v for k, v in config.items() if k != "mmicl"}     # a normalised configuration again
    unknown = set(config) - allowed
    if unknown:
        raise ValueError(f"{kind} runs have no setting {sorted(unknown)}; they have {sorted(allowed)}")
    missing = needed - set(config)
    if missing:
        raise ValueError(f"a {kind} run needs {sorted(missing)} as well (it has {sorted(config)})")
    return config


def head_score_spread(r) -> dict:
    """The analysis ``head_score_spread`` of a stage-2 or fusion run: each head's induction and
    previous-token score on the ICL set with the per-sequence sd behind it, on the trained models
    (``multimodal_metrics.head_score_spread``; testbed claim 9, version 3)."""
    from mmicl.numerics.testbed.multimodal_metrics import head_score_spread as spread

    return spread(r.run.model, r.run.eval_sets)


SEQUENCE_DIGITS = 5
"""Decimals kept of each per-sequence head score (``head_score_sequences``): a paired difference of
two such values is off by at most 10⁻⁵, three orders below the claims' 0.05 margins."""


def head_score_sequences(r) -> dict:
    """The analysis ``head_score_sequences`` of a stage-2 or fusion run: every head's induction and
    previous-token value on each sequence of the ICL set (``multimodal_metrics.head_scores_per_sequence``),
    (E, n, layers, H) as nested lists rounded to ``SEQUENCE_DIGITS`` decimals, and ``n``.  Two runs on
    the same evaluation sequences (claim 9's frozen and unfrozen arms, version 4) can then be compared
    sequence by sequence."""
    from mmicl.numerics.testbed.multimodal_metrics import head_scores_per_sequence

    per = head_scores_per_sequence(r.run.model, r.run.eval_sets)
    return {"n": int(per["induction"].shape[1]), "digits": SEQUENCE_DIGITS,
            **{f"{k}_per_sequence": v.double().numpy().round(SEQUENCE_DIGITS).tolist() for k, v in per.items()}}


def multimodal_analyses() -> dict:
    """The analyses a ``stage2`` or ``fusion`` run may name: ``MULTIMODAL_ANALYSES`` and, added here,
    ``head_score_spread`` and ``head_score_sequences``."""
    from mmicl.numerics.testbed.multimodal_experiments import MULTIMODAL_ANALYSES

    return {**MULTIMODAL_ANALYSES, "head_score_spread": head_score_spread, "head_score_sequences": head_score_sequences}


def analysis_setting(analysis):
    MULTIMODAL_ANALYSES = multimodal_analyses()

    if analysis is None:
        return None
    if not isinstance(analysis, dict) or analysis.get("name") not in MULTIMODAL_ANALYSES:
        raise ValueError(f'analysis must be {{"name": one of {sorted(MULTIMODAL_ANALYSES)}, **parameters}} or '
                         f"absent, got {analysis!r}")
    allowed = set(inspect.signature(MULTIMODAL_ANALYSES[analysis["name"]]).parameters) - {"r"}
    given = set(analysis) - {"name"}
    if given != allowed:
        raise ValueError(f"analysis {analysis['name']!r} takes the parameters {sorted(allowed)}, got {sorted(given)}")
    from mmicl.numerics.testbed.multimodal_data import SETS

    if "set_name" in analysis and analysis["set_name"] not in SETS:
        raise ValueError(f"analysis set_name must be one of {list(SETS)}, got {analysis['set_name']!r}")
    return dict(analysis)


def arms_result(r, config: dict) -> dict:
    """What a stage-2 or fusion run keeps: the final value of every scalar metric per arm and member
    (``summary``), every curve (``history``, without its time) and the analysis."""
    from mmicl.numerics.testbed.experiments import DERIVED

    MULTIMODAL_ANALYSES = multimodal_analyses()
    h = r.run.history
    scalars = [m for m in h.metrics if h.final(m).dim() == 1] + [m for m, (base, _) in DERIVED.items()
                                                               if base in h.metrics]
    out = curves_and_finals(r, scalars)
    analysis = config.get("analysis")
    if analysis is not None:
        out["analysis"] = MULTIMODAL_ANALYSES[analysis["name"]](r, **{k: v for k, v in analysis.items()
                                                                       if k != "name"})
    return out
