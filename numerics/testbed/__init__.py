"""The synthetic in-context classification testbed (docs/testbed.md, unimodal part).

- ``config``: the data, model and training settings, validated at the boundary;
- ``data``: the Gaussian-mixture sequence generator and the ICL / ICL-flip / IWL evaluation sets;
- ``model``: a batched ensemble of small decoders (pre-RMSNorm, gated SiLU MLP, APE / RoPE / ALiBi);
- ``metrics``: accuracies, in-context-label rate, previous-token and induction head strength, ablation;
- ``train``: one training loop for an ensemble of models, with metric curves;
- ``stats``: intervals over seeds.
"""

__all__ = []
