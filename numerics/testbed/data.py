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

__all__ = ["MAX_REJECTION_ROUNDS", "Sequences", "Mixture", "blind_best_accuracy", "blind_best_prediction"]


MAX_REJECTION_ROUNDS = 10_000


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
        for _ in range(MAX_REJECTION_ROUNDS):
            bad = self.label_of(ctx) == q_label
            if not bool(bad.any()):
                break
            ctx = torch.where(bad, self.draw_classes((b, self.N), g), ctx)
        else:
            raise RuntimeError("IWL set: could not draw context classes avoiding the query label; the class "
                               "law puts almost all its mass on one label (lower zipf or raise K)")
        return self._known_class_sequences(ctx, query, g, shift=0)

    # ---- the label-balanced in-weights set (version 3) ----------------------------------
    def class_probs(self) -> torch.Tensor:
        """(E, K_max) float64: each member's class law P(k) ∝ (k+1)^(−α) over its K classes (0 beyond)."""
        k = torch.arange(1, self.K_max + 1, dtype=torch.float64, device=self.device)
        zipf = torch.tensor([m.data.zipf for m in self.members], dtype=torch.float64, device=self.device)
        w = torch.where(k <= self.K.view(-1, 1), k ** (-zipf.view(-1, 1)), torch.zeros((), dtype=torch.float64,
                                                                                      device=self.device))
        return w / w.sum(-1, keepdim=True)

    def label_mass(self) -> torch.Tensor:
        """(E, L) float64: w_ℓ = P(label ℓ) under each member's class law (class k has label k mod L)."""
        return self.class_probs().view(self.E, self.K_max // self.L, self.L).sum(1)

    def draw_classes_of_labels(self, labels: torch.Tensor, g: torch.Generator) -> torch.Tensor:
        """A class of each given label (E, *shape), drawn from the member's class law restricted to
        the classes with that label: class ℓ + L·j with probability ∝ P(ℓ + L·j)."""
        E, shape = labels.shape[0], labels.shape[1:]
        per = self.class_probs().view(E, self.K_max // self.L, self.L).transpose(1, 2)   # (E, L, K_max/L)
        cdf = torch.cumsum(per / per.sum(-1, keepdim=True), -1)
        cdf[..., -1] = 1.0
        flat = labels.reshape(E, -1)
        rows = torch.gather(cdf, 1, flat.unsqueeze(-1).expand(-1, -1, cdf.shape[-1]))  # (E, n, K_max/L)
        u = torch.rand(flat.shape, generator=g, device=self.device, dtype=torch.float64)
        j = torch.searchsorted(rows, u.unsqueeze(-1), right=True).squeeze(-1)
        j = torch.minimum(j, (self.K // self.L - 1).view(-1, 1))
        return (flat + self.L * j).view(E, *shape)

    def context_avoiding(self, q_label: torch.Tensor, n: int, g: torch.Generator, what: str = "IWL set") -> torch.Tensor:
        """(E, b, n) classes i.i.d. from the class law conditioned on label ≠ ``q_label`` (E, b), by
        redrawing the offenders (each position independently: an exact conditional draw)."""
        b = q_label.shape[1]
        ctx = self.draw_classes((b, n), g)
        q = q_label.unsqueeze(-1)
        for _ in range(MAX_REJECTION_ROUNDS):
            bad = self.label_of(ctx) == q
            if not bool(bad.any()):
                return ctx
            ctx = torch.where(bad, self.draw_classes((b, n), g), ctx)
        raise RuntimeError(f"{what}: could not draw context classes avoiding the query label; the class law puts "
                           "almost all its mass on one label (lower zipf or raise K)")

    def iwl_balanced_batch(self, b: int, g: torch.Generator) -> Sequences:
        """The label-balanced IWL set: the query's *label* uniform over the L labels, its class from
        the class law restricted to that label; the context as in ``iwl_batch`` (i.i.d. from the
        class law conditioned on label ≠ the query's, enforced).  A rule that ignores the query and
        the context scores 1/L here; ``blind_best_accuracy`` gives the best rule that ignores only
        the query."""
        q_label = torch.randint(0, self.L, (self.E, b), generator=g, device=self.device)
        query = self.draw_classes_of_labels(q_label, g)
        ctx = self.context_avoiding(q_label, self.N, g, "label-balanced IWL set")
        return self._known_class_sequences(ctx, query, g, shift=0)

    def blind_posterior(self, context_labels: torch.Tensor, balanced: bool = True) -> torch.Tensor:
        """(E, b, L) float64: P(query label = ℓ | the context) on an IWL set, exactly, from the law
        the set was drawn from.  The N context classes are i.i.d. from the class law conditioned on
        label ≠ ℓ, so P(context | ℓ) = Π_i P(c_i)·[ℓ(c_i) ≠ ℓ]/(1 − w_ℓ); with the prior 1/L
        (``balanced``) or w_ℓ (the ``iwl_batch`` set), P(ℓ | context) ∝ prior_ℓ·(1 − w_ℓ)^(−N) for
        the labels ℓ absent from the context and 0 for the others.  It depends on the context only
        through its set of labels."""
        w = self.label_mass()                                                # (E, L)
        N = context_labels.shape[-1]
        logp = -N * torch.log1p(-w.clamp(max=1 - 1e-12))
        if not balanced:
            logp = logp + torch.log(w.clamp(min=1e-300))
        logp = logp.unsqueeze(1).expand(-1, context_labels.shape[1], -1).clone()   # (E, b, L)
        present = torch.zeros_like(logp, dtype=torch.bool).scatter_(2, context_labels.to(self.device), True)
        return torch.softmax(logp.masked_fill(present, float("-inf")), -1)

    def _known_class_sequences(self, ctx, query, g, shift: int) -> Sequences:
        ctx_x = self.items(self.gather_means(ctx), g)
        q_x = self.items(self.gather_means(query.unsqueeze(-1)), g).squeeze(2)
        ctx_label = (self.label_of(ctx) + shift) % self.L
        target = (self.label_of(query) + shift) % self.L
        return self.assemble(ctx_x, ctx_label, q_x, target, ctx, query)


def blind_best_accuracy(posterior: torch.Tensor) -> torch.Tensor:
    """(E,) the expected accuracy, over the set's sequences, of the best rule that ignores the
    query (the Bayes rule: for each sequence the most probable label given everything but the
    query): the mean over sequences of max_ℓ ``posterior`` (E, b, L).  No query-blind rule, however
    it uses the context, has a higher expected accuracy on these sequences."""
    return posterior.max(-1).values.mean(-1)


def blind_best_prediction(posterior: torch.Tensor) -> torch.Tensor:
    """(E, b) the Bayes query-blind rule's label per sequence (ties to the lowest label)."""
    return posterior.argmax(-1)


def _table_seed(seed: int) -> int:
    """Seed of a member's class table, kept apart from its weight seed."""
    return (int(seed) * 1_000_003 + 17) % (2 ** 63 - 1)
