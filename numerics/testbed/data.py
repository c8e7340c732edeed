"""The Gaussian-mixture sequence generator and its evaluation sets, batched over an ensemble.

Every tensor carries a leading ensemble axis E: member e has its own class means ``means[e]``
(K_max × D, rows beyond its K unused), label vectors ``label_vectors[e]`` (L × D) and class law
(Zipf over its K classes).  Per-member tables are drawn once from the member's seed, so member e of
an ensemble has exactly the classes it would have alone; the per-step sequences are drawn from one
shared ``torch.Generator`` on the device, with no Python loop over sequences.

A batch of sequences is ``Sequences``: ``tokens`` (E, b, 2N+1, D) laid out [x1, y1, …, xN, yN, xq],
``target`` (E, b) the query's label, ``context_labels`` (E, b, N) and ``context_classes`` /
``query_class`` (class ids; −1 for brand-new classes).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .config import MemberSpec, check_compatible

_MAX_REJECTION_ROUNDS = 10_000


@dataclass
class Sequences:
    tokens: torch.Tensor          # (E, b, T, D)
    target: torch.Tensor          # (E, b) long, in [0, L)
    context_labels: torch.Tensor  # (E, b, N) long
    context_classes: torch.Tensor  # (E, b, N) long, −1 for new classes
    query_class: torch.Tensor     # (E, b) long, −1 for new classes

    def member(self, e: int) -> "Sequences":
        return Sequences(*(t[e:e + 1] for t in (self.tokens, self.target, self.context_labels,
                                                   self.context_classes, self.query_class)))


class Mixture:
    """The classes of every member of an ensemble, and the samplers of training and evaluation
    sequences.  ``Mixture(members, device)``; all members share L, D, N, B."""

    def __init__(self, members: list[MemberSpec], device: str | torch.device = "cpu",
                 dtype: torch.dtype = torch.float32):
        check_compatible(members)
        self.members = members
        self.device = torch.device(device)
        self.dtype = dtype
        d0 = members[0].data
        self.L, self.D, self.N, self.B = d0.L, d0.D, d0.N, d0.B
        self.E = len(members)
        self.K = torch.tensor([m.data.K for m in members], device=self.device)
        self.K_max = int(self.K.max())
        self.p_bursty = torch.tensor([m.data.p_bursty for m in members], device=self.device, dtype=dtype)
        eps = torch.tensor([m.data.eps for m in members], device=self.device, dtype=dtype)
        self._noise_scale = (eps / torch.sqrt(1 + eps ** 2)).view(-1, 1, 1, 1)
        self._mean_scale = (1 / torch.sqrt(1 + eps ** 2)).view(-1, 1, 1, 1)
        means, labels, cdf = [], [], []
        for m in members:
            g = torch.Generator().manual_seed(_table_seed(m.seed))
            mu = torch.randn(self.K_max, self.D, generator=g) / math.sqrt(self.D)
            mu[m.data.K:] = 0.0
            means.append(mu)
            labels.append(torch.randn(self.L, self.D, generator=g) / math.sqrt(self.D))
            k = torch.arange(1, self.K_max + 1, dtype=torch.float64)
            w = torch.where(k <= m.data.K, k ** (-m.data.zipf), torch.zeros_like(k))
            cdf.append(torch.cumsum(w / w.sum(), 0))
        self.means = torch.stack(means).to(self.device, dtype)            # (E, K_max, D)
        self.label_vectors = torch.stack(labels).to(self.device, dtype)   # (E, L, D)
        self.class_cdf = torch.stack(cdf).to(self.device)                 # (E, K_max) float64
        self.class_cdf[:, -1] = 1.0

    # ---- pieces -------------------------------------------------------------------------
    def draw_classes(self, shape: tuple[int, ...], g: torch.Generator) -> torch.Tensor:
        """Class ids (E, *shape) from each member's Zipf law, by inverting its CDF."""
        n = math.prod(shape)
        u = torch.rand(self.E, n, generator=g, device=self.device, dtype=torch.float64)
        k = torch.searchsorted(self.class_cdf, u, right=True)
        k = torch.minimum(k, (self.K - 1).view(-1, 1))
        return k.view(self.E, *shape)

    def label_of(self, classes: torch.Tensor) -> torch.Tensor:
        return classes % self.L

    def items(self, class_means: torch.Tensor, g: torch.Generator) -> torch.Tensor:
        """x = (μ + ε η)/√(1+ε²), η ~ N(0, I/D); ``class_means`` is (E, b, n, D)."""
        eta = torch.randn(class_means.shape, generator=g, device=self.device, dtype=self.dtype) / math.sqrt(self.D)
        return self._mean_scale * class_means + self._noise_scale * eta

    def gather_means(self, classes: torch.Tensor) -> torch.Tensor:
        """μ of (E, b, n) class ids → (E, b, n, D)."""
        E, b, n = classes.shape
        idx = classes.reshape(E, b * n, 1).expand(E, b * n, self.D)
        return torch.gather(self.means, 1, idx).view(E, b, n, self.D)

    def gather_labels(self, labels: torch.Tensor) -> torch.Tensor:
        E, b, n = labels.shape
        idx = labels.reshape(E, b * n, 1).expand(E, b * n, self.D)
        return torch.gather(self.label_vectors, 1, idx).view(E, b, n, self.D)

    def bursty_layout(self, b: int, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """Slot of each context position (E, b, N) in [0, N/B), each slot B times in random order,
        and the query's slot (E, b)."""
        C = self.N // self.B
        base = torch.arange(C, device=self.device).repeat_interleave(self.B)  # (N,)
        order = torch.argsort(torch.rand(self.E, b, self.N, generator=g, device=self.device), dim=-1)
        slots = base[order]
        query_slot = torch.randint(0, C, (self.E, b), generator=g, device=self.device)
        return slots, query_slot

    def assemble(self, ctx_x, ctx_label, query_x, target, ctx_classes, query_class) -> Sequences:
        """Interleave [x1, y1, …, xN, yN, xq]."""
        E, b, N, D = ctx_x.shape
        pairs = torch.stack([ctx_x, self.gather_labels(ctx_label)], dim=3).view(E, b, 2 * N, D)
        tokens = torch.cat([pairs, query_x.unsqueeze(2)], dim=2)
        return Sequences(tokens, target, ctx_label, ctx_classes, query_class)

    # ---- the four kinds of sequences ----------------------------------------------------
    def train_batch(self, b: int, g: torch.Generator) -> Sequences:
        """Training sequences: bursty with probability p_bursty (per member), else i.i.d. classes."""
        C = self.N // self.B
        slots, query_slot = self.bursty_layout(b, g)
        bursty_classes = self.draw_classes((b, C), g)
        bursty_ctx = torch.gather(bursty_classes, 2, slots)
        bursty_query = torch.gather(bursty_classes, 2, query_slot.unsqueeze(-1)).squeeze(-1)
        iid = self.draw_classes((b, self.N + 1), g)
        is_bursty = torch.rand(self.E, b, generator=g, device=self.device, dtype=self.dtype) < self.p_bursty.view(-1, 1)
        ctx = torch.where(is_bursty.unsqueeze(-1), bursty_ctx, iid[..., :-1])
        query = torch.where(is_bursty, bursty_query, iid[..., -1])
        return self._known_class_sequences(ctx, query, g, shift=0)

    def icl_batch(self, b: int, g: torch.Generator) -> Sequences:
        """ICL set: bursty sequences of brand-new classes (fresh means per sequence), each new class
        given a distinct random label; the answer is only in the context."""
        C = self.N // self.B
        slots, query_slot = self.bursty_layout(b, g)
        fresh = torch.randn(self.E, b, C, self.D, generator=g, device=self.device, dtype=self.dtype) / math.sqrt(self.D)
        class_labels = torch.argsort(torch.rand(self.E, b, self.L, generator=g, device=self.device), dim=-1)[..., :C]
        ctx_means = torch.gather(fresh, 2, slots.unsqueeze(-1).expand(-1, -1, -1, self.D))
        q_means = torch.gather(fresh, 2, query_slot.view(self.E, b, 1, 1).expand(-1, -1, 1, self.D))
        ctx_label = torch.gather(class_labels, 2, slots)
        target = torch.gather(class_labels, 2, query_slot.unsqueeze(-1)).squeeze(-1)
        none = torch.full_like(slots, -1)
        return self.assemble(self.items(ctx_means, g), ctx_label, self.items(q_means, g).squeeze(2),
                             target, none, none[..., 0])

    def flip_batch(self, b: int, g: torch.Generator) -> Sequences:
        """ICL-flip set: bursty sequences of known classes whose labels are remapped ℓ → ℓ+1 mod L,
        in the context and in the target; weights alone answer ℓ, the context says ℓ+1."""
        C = self.N // self.B
        slots, query_slot = self.bursty_layout(b, g)
        classes = self.draw_classes((b, C), g)
        ctx = torch.gather(classes, 2, slots)
        query = torch.gather(classes, 2, query_slot.unsqueeze(-1)).squeeze(-1)
        return self._known_class_sequences(ctx, query, g, shift=1)

    def iwl_batch(self, b: int, g: torch.Generator) -> Sequences:
        """IWL set: known query class; the context's N classes are i.i.d. from the class law
        conditioned on label ≠ the query's label (enforced by redrawing the offenders), so neither
        the query class nor its label is in the context."""
        query = self.draw_classes((b,), g)
        ctx = self.draw_classes((b, self.N), g)
        q_label = self.label_of(query).unsqueeze(-1)
        for _ in range(_MAX_REJECTION_ROUNDS):
            bad = self.label_of(ctx) == q_label
            if not bool(bad.any()):
                break
            ctx = torch.where(bad, self.draw_classes((b, self.N), g), ctx)
        else:
            raise RuntimeError("IWL set: could not draw context classes avoiding the query label; the class "
                               "law puts almost all its mass on one label (lower zipf or raise K)")
        return self._known_class_sequences(ctx, query, g, shift=0)

    def _known_class_sequences(self, ctx, query, g, shift: int) -> Sequences:
        ctx_x = self.items(self.gather_means(ctx), g)
        q_x = self.items(self.gather_means(query.unsqueeze(-1)), g).squeeze(2)
        ctx_label = (self.label_of(ctx) + shift) % self.L
        target = (self.label_of(query) + shift) % self.L
        return self.assemble(ctx_x, ctx_label, q_x, target, ctx, query)


def _table_seed(seed: int) -> int:
    """Seed of a member's class table, kept apart from its weight seed."""
    return (int(seed) * 1_000_003 + 17) % (2 ** 63 - 1)
