"""The multimodal model: a decoder, a projector of M2 into the decoder's token space, and an
optional M2 encoder, all batched over an ensemble (leading axis E on every weight).

- ``EnsembleMLP``: E multilayer perceptrons, GELU between layers;
- ``MultimodalSystem``: assembles the token sequence of a ``PairSequences`` batch and runs the
  decoder on it.  An M2 item x₂ enters as ``projector(x₂)`` (or ``projector(encoder.features(x₂))``),
  a D1-dimensional token that then goes through the decoder's own input projection (with the
  position code) exactly like an M1 item; labels are the label vectors.  Layout ``m1_first``:
  [M1_1, M2_1, y_1, …, M1_N, M2_N, y_N, M1_q, M2_q]; ``m2_first`` swaps the items of each pair and of
  the query.  The readout is the last token.  Layouts ``readout_last`` / ``readout_last_m2_first``
  (version 3) append a readout token R after the two query items, [M1_1, M2_1, y_1, …, M1_q, M2_q, R]
  (items swapped in the second): R is a **learned token-space vector** per member (D1-dimensional,
  initialised N(0, I/D1) from the member's seed), entering the decoder's input projection and
  position code like every other token (position 3N+2 of 3N+3).  It is learned rather than a fixed
  zero so that a frozen stage-1 decoder, which never saw a readout token, can still be given a
  useful one in stage 2 (R trains with the projector under every ``trainable`` choice), and the
  staged and fusion arms of claim 6 differ in training, not in what the layout lets them learn.
  The ``*_query_reversed`` layouts (version 4) put the query's items in the other order than every
  context triple's, [M1_i, M2_i, y_i] … [M2_q, M1_q, R] (and its M2-first twin): the modality next
  to the label in the context is then not the one next to R.

Which weights train is the caller's choice (``numerics.testbed.multimodal_train``): stage 2 trains
the projector (and, by default, the decoder's final norm and readout); early fusion trains all.
"""
from __future__ import annotations

import math

import torch
from torch import nn

from .config import QUERY_REVERSED_LAYOUTS, READOUT_LAYOUTS, Layout, ModelConfig
from .model import EnsembleDecoder, Forward, bmm
from .multimodal_data import PairSequences

__all__ = ["EnsembleMLP", "feature_standardisation", "decoder_from_states", "token_positions", "item_order", "query_order",
           "adjacent_modality", "sequence_length", "MultimodalSystem"]



class EnsembleMLP(nn.Module):
    """E MLPs of layer sizes ``sizes`` (e.g. [D2, 64, 32, K2]): x → W_k(GELU(…)) + b_k, GELU after
    every layer but the last; member e's weights drawn N(0, 1/fan_in) from ``seeds[e]`` and ``salt``
    (one salt per kind of module, so that two modules of the same members never share random numbers)."""

    def __init__(self, sizes: list[int], seeds: list[int], device="cpu", dtype=torch.float32, salt: int = 0):
        super().__init__()
        self.sizes = list(sizes)
        ws, bs = [], []
        for i, o in zip(sizes[:-1], sizes[1:]):
            per = []
            for s in seeds:
                g = torch.Generator().manual_seed((int(s) * 1_000_003 + 7919 * len(ws) + 104_729 * salt) % (2**63 - 1))
                per.append(torch.randn(i, o, generator=g) / math.sqrt(i))
            ws.append(nn.Parameter(torch.stack(per).to(device, dtype)))
            bs.append(nn.Parameter(torch.zeros(len(seeds), o, device=device, dtype=dtype)))
        self.w, self.b = nn.ParameterList(ws), nn.ParameterList(bs)
        # feature standardisation (``standardise_features``): None until set, features() raw
        self.register_buffer("feature_shift", None)
        self.register_buffer("feature_scale", None)

    def forward(self, x: torch.Tensor, layers: int | None = None) -> torch.Tensor:
        """x (E, …, sizes[0]) → (E, …, sizes[layers]); all layers by default."""
        n = len(self.w) if layers is None else layers
        for k in range(n):
            bias = self.b[k].view(self.b[k].shape[0], *(1,) * (x.dim() - 2), -1)
            x = bmm(x, self.w[k]) + bias
            if k < len(self.w) - 1:
                x = torch.nn.functional.gelu(x)
        return x

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """The activations before the last layer (an encoder's features); standardised as
        ``standardise_features`` set them, once it has (the logits, ``forward``, never are)."""
        f = self.forward(x, len(self.w) - 1)
        if self.feature_shift is None:
            return f
        view = (f.shape[0], *(1,) * (f.dim() - 2), -1)
        return (f - self.feature_shift.view(view)) * self.feature_scale.view(*view[:-1], 1)

    @torch.no_grad()
    def standardise_features(self, reference: torch.Tensor) -> None:
        """Fix, per member, the affine map that ``features`` applies from now on: on the reference
        batch ``reference`` (E, b, sizes[0]) the standardised features have mean 0 per coordinate
        and mean squared norm 1 (``feature_standardisation``).  Version 3 of claim 7: every dose's
        encoder then feeds the projector features of one scale, so that the dose changes what
        the features carry, not their size."""
        self.feature_shift, self.feature_scale = None, None
        self.feature_shift, self.feature_scale = feature_standardisation(self.features(reference))


def feature_standardisation(f: torch.Tensor, eps: float = 1e-12) -> tuple[torch.Tensor, torch.Tensor]:
    """Per member, the shift (E, F) and scale (E,) that standardise features ``f`` (E, b, F) of a
    reference batch: (f − shift)·scale has mean 0 per coordinate and mean squared norm 1 over the
    batch, i.e. a per-coordinate RMS of 1/√F, averaged over the coordinates (the mean squared norm
    of a raw M2 item, (μ + εη)/√(1+ε²) with μ, η ~ N(0, I/D2), is 1 too).  One scale per member, not
    one per coordinate: a per-coordinate scale would blow nearly dead coordinates up to the size of
    informative ones, changing what the features carry, where one scale keeps their geometry.  A
    member whose features do not vary on the batch keeps scale 1."""
    if f.dim() != 3:
        raise ValueError(f"features must be (E, b, F), got shape {tuple(f.shape)}")
    shift = f.mean(1)
    total = (f - shift.unsqueeze(1)).pow(2).sum(-1).mean(1)        # (E,) mean squared norm after centring
    scale = torch.where(total > eps, total.clamp_min(eps).rsqrt(), torch.ones_like(total))
    return shift, scale


def decoder_from_states(config: ModelConfig, d_token: int, n_labels: int, states: list[dict[str, torch.Tensor]],
                        seeds: list[int], device="cpu") -> EnsembleDecoder:
    """An ensemble decoder whose member e has the weights ``states[e]`` (from a checkpoint), or fresh
    weights drawn from ``seeds[e]`` where ``states[e]`` is None."""
    dec = EnsembleDecoder(config, d_token, n_labels, seeds, device)
    with torch.no_grad():
        for e, st in enumerate(states):
            if st is None:
                continue
            for k, p in dec.weights.items():
                if st[k].shape != p[e].shape:
                    raise ValueError(f"stored weight {k} has shape {tuple(st[k].shape)}, the decoder {tuple(p[e].shape)}")
                p[e].copy_(st[k])
    return dec


def token_positions(layout: Layout, N: int) -> dict[str, torch.Tensor]:
    """Indices in the 3N+2 sequence of the context M1 items, M2 items and labels (N each) and of the
    query's M1 and M2 items; in the ``readout_last*`` layouts (3N+3 tokens) also ``readout`` (3N+2),
    the readout token R."""
    i = torch.arange(N) * 3
    first, second = item_order(layout)
    q_first, q_second = query_order(layout)
    out = {first: i, second: i + 1, "label": i + 2,
           f"{q_first}_q": torch.tensor(3 * N), f"{q_second}_q": torch.tensor(3 * N + 1)}
    if layout in READOUT_LAYOUTS:
        out["readout"] = torch.tensor(3 * N + 2)
    return out


def item_order(layout: Layout) -> tuple[str, str]:
    """The modalities of the first and second item of every triple (the second is next to the label)."""
    return ("m2", "m1") if layout in ("m2_first", "readout_last_m2_first", "readout_last_m2_first_query_reversed") \
        else ("m1", "m2")


def query_order(layout: Layout) -> tuple[str, str]:
    """The modalities of the query's first and second item: the context's order, reversed in the
    ``*_query_reversed`` layouts."""
    first, second = item_order(layout)
    return (second, first) if layout in QUERY_REVERSED_LAYOUTS else (first, second)


def adjacent_modality(layout: Layout) -> str:
    """The modality whose context item is next to the label token: ``m2`` or ``m1``."""
    return item_order(layout)[1]


def sequence_length(layout: Layout, N: int) -> int:
    """Tokens per multimodal sequence: 3N+2, or 3N+3 with the readout token."""
    return 3 * N + 2 + (layout in READOUT_LAYOUTS)


class MultimodalSystem(nn.Module):
    """Decoder + projector (+ encoder) of an ensemble; ``label_vectors`` (E, L, D1) are the labels'
    tokens (M1's, fixed)."""

    def __init__(self, decoder: EnsembleDecoder, projector: EnsembleMLP, label_vectors: torch.Tensor,
                 layout: Layout, encoder: EnsembleMLP | None = None, seeds: list[int] | None = None):
        super().__init__()
        self.decoder, self.projector, self.encoder = decoder, projector, encoder
        self.layout = layout
        self.register_buffer("label_vectors", label_vectors.detach().clone())
        self.E = decoder.E
        self.readout_token: nn.Parameter | None = None
        if layout in READOUT_LAYOUTS:
            # R ~ N(0, I/D1) per member, from its seed (member index when no seeds are given), apart
            # from every other table (its own salt)
            D = label_vectors.shape[-1]
            per = []
            for e, s in enumerate(seeds if seeds is not None else range(self.E)):
                g = torch.Generator().manual_seed((int(s) * 1_000_003 + 314_159) % (2 ** 63 - 1))
                per.append(torch.randn(D, generator=g) / math.sqrt(D))
            self.readout_token = nn.Parameter(torch.stack(per).to(label_vectors.device, label_vectors.dtype))

    def tokens(self, seqs: PairSequences) -> torch.Tensor:
        """(E, b, 3N+2, D1) token sequence of a batch, in this system's layout (3N+3 with R)."""
        x2 = seqs.m2 if self.encoder is None else self.encoder.features(seqs.m2)
        z2 = self.projector(x2)
        E, b, n1, D = seqs.m1.shape
        N = n1 - 1
        idx = seqs.labels.reshape(E, b * N, 1).expand(E, b * N, D)
        y = torch.gather(self.label_vectors, 1, idx).view(E, b, N, D)
        items = {"m1": seqs.m1, "m2": z2}
        first, second = (items[m] for m in item_order(self.layout))
        ctx = torch.stack([first[:, :, :N], second[:, :, :N], y], dim=3).reshape(E, b, 3 * N, D)
        parts = [ctx, *(items[m][:, :, N:] for m in query_order(self.layout))]
        if self.readout_token is not None:
            parts.append(self.readout_token.view(E, 1, 1, D).expand(E, b, 1, D).to(ctx.dtype))
        return torch.cat(parts, dim=2)

    def forward(self, seqs: PairSequences, ape_shift: torch.Tensor | None = None,
                head_mask: torch.Tensor | None = None, return_attention: bool = False,
                head_mean: torch.Tensor | None = None, return_head_outputs: bool = False) -> Forward:
        """The decoder on ``tokens(seqs)``; ``head_mask``, ``head_mean`` (mean-ablation) and
        ``return_head_outputs`` as in ``EnsembleDecoder.forward``.  With the readout token, APE
        shifts drawn for 3N+2 tokens (as the training loop draws them) are capped at
        ``ape_slots`` − (3N+3), so that the one extra token always has a slot."""
        tokens = self.tokens(seqs)
        c = self.decoder.config
        if self.readout_token is not None and ape_shift is not None and c.pos == "ape":
            ape_shift = ape_shift.clamp(max=c.ape_slots - tokens.shape[2])
        return self.decoder(tokens, ape_shift, head_mask=head_mask, return_attention=return_attention,
                            head_mean=head_mean, return_head_outputs=return_head_outputs)

    def trainable(self, what: str) -> list[nn.Parameter]:
        """The parameters a protocol trains, with every other parameter frozen (requires_grad off).

        ``projector``: the projector alone; ``projector+readout``: also the decoder's final norm and
        readout (what the authors of the protocol train in stage 2); ``all``: everything (early
        fusion).  A pretrained encoder is frozen except under ``all``.  The readout token R of the
        ``readout_last*`` layouts trains under every choice (it is part of the interface, like the
        projector)."""
        if what not in ("projector", "projector+readout", "all"):
            raise ValueError(f"trainable must be projector, projector+readout or all, got {what!r}")
        for p in self.parameters():
            p.requires_grad_(what == "all")
        chosen = list(self.projector.parameters())
        if self.readout_token is not None:
            chosen.append(self.readout_token)
        if what == "projector+readout":
            chosen += [self.decoder.weights["norm_out"], self.decoder.weights["w_out"]]
        for p in chosen:
            p.requires_grad_(True)
        return [p for p in self.parameters() if p.requires_grad]
