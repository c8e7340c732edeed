"""Two-modality sequences of the multimodal protocol, batched over an ensemble, on the device.

A multimodal sequence holds N context triples (an M1 item, an M2 item, the label vector) and a
query of two items (M1_q, M2_q); the model predicts the query's label.  M1 and M2 are each a
Gaussian mixture (``Mixture`` of ``data.py``); labels are M1's label vectors (D1-dimensional).

**Pairing (bursty sequences).**  N/B context *pairs*: each pair is one M2 class k2 and one M1
class of the same label (k2 mod L), the M1 partner drawn afresh per sequence uniformly from the K1/L
M1 classes with that label; every pair appears B times with fresh item noise, in random order; the
query is one of the pairs (both items fresh draws of its two classes).  A non-bursty sequence draws
the M1 and M2 classes of every position independently from their class laws; the label is M2's, so
M1 carries no information there.

An M2 item is M2's mixture item followed by its ``distractor_dims`` class-free coordinates
(``SecondModality``; none by default), so ``m2`` holds ``item_dim`` coordinates per item.

Every set returns ``PairSequences``: ``target`` is the label to predict, and ``follow_m1`` /
``follow_m2`` the label that the query's M1 item / M2 item points to through the context (−1 when
it points to no context pair).  The evaluation sets:

- ``icl``: bursty, N/B brand-new M1 and M2 classes (fresh means per sequence) with distinct random
  labels.  **Confounded**: the query's M1 class is in the context, so M1 alone answers it;
- ``icl_m2only`` (M2-necessary): as ``icl``, but the query's M1 item is from a fresh class that is
  in no context pair: only M2 can find the answer;
- ``icl_m1only`` (M1-necessary): the query's M2 item is from a fresh class: only M1 can;
- ``icl_m2known`` (M2-necessary, known M2 classes): N/B distinct *known* M2 classes, each given a
  random label for this sequence only (distinct labels, unrelated to k mod L), paired with fresh M1
  classes; the query's M1 item is from a fresh class: the answer is in the context and only M2 can
  find it, through classes the model (and an M2 encoder) has seen in training;
- ``conflict``: the query's M1 item is from pair a, its M2 item from pair c ≠ a (another label):
  ``follow_m1`` and ``follow_m2`` say which modality a prediction followed (``target`` is −1);
- ``flip``: bursty, known classes, labels ℓ → ℓ+1 mod L in the context and the target;
- ``iwl``: known query classes; the context pairs are drawn with labels ≠ the query's label (enforced
  by redrawing), so neither the query's classes nor its label are in the context;
- ``iwl_balanced`` (version 3, not in ``SETS``; drawn on request): as ``iwl`` with the query's label
  uniform over the L labels (``iwl_balanced_batch``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import torch

from .config import DataConfig, MemberSpec, MultimodalMember, TestbedConfigError
from .data import MAX_REJECTION_ROUNDS, Mixture

__all__ = ["SETS", "PairSequences", "MultimodalMixture"]


SETS = ("icl", "icl_m2only", "icl_m1only", "conflict", "flip", "iwl", "icl_m2known")


@dataclass
class PairSequences:
    m1: torch.Tensor         # (E, b, N+1, D1) M1 items, the query's last
    m2: torch.Tensor         # (E, b, N+1, item_dim) M2 items, the query's last
    labels: torch.Tensor     # (E, b, N) long: the context labels
    target: torch.Tensor     # (E, b) long: the answer (−1 on the conflict set)
    follow_m1: torch.Tensor  # (E, b) long: the label M1_q points to (−1: none)
    follow_m2: torch.Tensor  # (E, b) long: the label M2_q points to (−1: none)


def _m2_as_data(member: MultimodalMember) -> DataConfig:
    """M2's mixture written as a unimodal ``DataConfig`` (shares L, N, B with M1)."""
    d, m2 = member.data.m1, member.data.m2
    return replace(d, K=m2.K, D=m2.D, eps=m2.eps, zipf=m2.zipf)


class MultimodalMixture:
    """The M1 and M2 classes of every member, and the samplers of the multimodal sequences.

    ``m1_tables``: the M1 class means (E, K1_max, D1) and label vectors (E, L, D1) a stage-1 model
    was trained with (from its checkpoint); ``None`` draws them from the members' seeds (early
    fusion).  M2's tables are drawn from the member seeds, apart from M1's."""

    def __init__(self, members: list[MultimodalMember], device: str | torch.device = "cpu",
                 m1_tables: tuple[torch.Tensor, torch.Tensor] | None = None):
        if not members:
            raise TestbedConfigError("a multimodal ensemble needs at least one member")
        for name in ("D", "L", "N", "B"):
            if len({getattr(m.data.m1, name) for m in members}) > 1:
                raise TestbedConfigError(f"ensemble members must share M1 {name}; run them as separate ensembles")
        if len({(m.data.m2.D, m.data.m2.distractor_dims) for m in members}) > 1:
            raise TestbedConfigError("ensemble members must share M2's D and distractor_dims; run them as separate "
                                     "ensembles")
        if len({m.data.layout for m in members}) > 1:
            raise TestbedConfigError("ensemble members must share the layout; run them as separate ensembles")
        self.members = members
        self.device = torch.device(device)
        self.m1 = Mixture([MemberSpec(m.data.m1, m.seed) for m in members], device)
        self.m2 = Mixture([MemberSpec(_m2_as_data(m), m.seed + 500_009) for m in members], device)
        if m1_tables is not None:
            means, labels = m1_tables
            if means.shape != self.m1.means.shape or labels.shape != self.m1.label_vectors.shape:
                raise TestbedConfigError(
                    f"the stored M1 tables have shapes {tuple(means.shape)}, {tuple(labels.shape)}; these members "
                    f"need {tuple(self.m1.means.shape)}, {tuple(self.m1.label_vectors.shape)}: the stage-1 "
                    "checkpoint was trained with other M1 settings")
            self.m1.means = means.to(self.device, self.m1.dtype)
            self.m1.label_vectors = labels.to(self.device, self.m1.dtype)
        self.m2_item_dim = members[0].data.m2.item_dim
        self._distractor_scale = torch.tensor([float(m.data.m2.distractor_scale) for m in members],
                                              device=self.device, dtype=self.m1.dtype).view(-1, 1, 1, 1)
        self.E, self.L, self.N, self.B = len(members), self.m1.L, self.m1.N, self.m1.B
        self.C = self.N // self.B
        self.layout = members[0].data.layout
        self.p_bursty = torch.tensor([m.data.p_bursty for m in members], device=self.device)
        self._k1_per_label = (self.m1.K // self.L).view(-1, 1, 1)

    @property
    def label_vectors(self) -> torch.Tensor:
        return self.m1.label_vectors

    # ---- pieces ---------------------------------------------------------------------------
    def m1_partner(self, labels: torch.Tensor, g: torch.Generator) -> torch.Tensor:
        """An M1 class of each label (E, b, n), uniform over the K1/L classes with that label."""
        u = torch.rand(labels.shape, generator=g, device=self.device, dtype=torch.float64)
        j = torch.minimum((u * self._k1_per_label).long(), self._k1_per_label - 1)
        return labels + self.L * j

    def _fresh(self, b: int, n: int, D: int, g: torch.Generator) -> torch.Tensor:
        """Means of brand-new classes, N(0, I/D): (E, b, n, D)."""
        return torch.randn(self.E, b, n, D, generator=g, device=self.device, dtype=self.m1.dtype) / math.sqrt(D)

    def _per_slot(self, x: torch.Tensor, slots: torch.Tensor) -> torch.Tensor:
        """Per-slot values (E, b, C[, D]) placed at the context positions given by ``slots`` (E, b, N)."""
        if x.dim() == 3:
            return torch.gather(x, 2, slots)
        return torch.gather(x, 2, slots.unsqueeze(-1).expand(-1, -1, -1, x.shape[-1]))

    def _at(self, x: torch.Tensor, slot: torch.Tensor) -> torch.Tensor:
        """The value of one slot (E, b) of per-slot values (E, b, C[, D])."""
        return self._per_slot(x, slot.unsqueeze(-1)).squeeze(2)

    def m2_items(self, class_means: torch.Tensor, g: torch.Generator) -> torch.Tensor:
        """M2 items of ``class_means`` (E, b, n, D2): the mixture's items, then the distractor
        coordinates σ·ξ, ξ ~ N(0, I/d) (none drawn when there are none, so the random stream is
        the one without distractors)."""
        x = self.m2.items(class_means, g)
        d = self.m2_item_dim - self.m2.D
        if d == 0:
            return x
        xi = torch.randn(*x.shape[:-1], d, generator=g, device=self.device, dtype=x.dtype) / math.sqrt(d)
        return torch.cat([x, self._distractor_scale * xi], -1)

    def _known(self, m1_ids, m2_ids, g, shift: int = 0) -> PairSequences:
        """Sequences of known classes: ids (E, b, N+1), the query's last; the labels are M2's."""
        labels = (self.m2.label_of(m2_ids) + shift) % self.L
        m1 = self.m1.items(self.m1.gather_means(m1_ids), g)
        m2 = self.m2_items(self.m2.gather_means(m2_ids), g)
        target = labels[..., -1]
        return PairSequences(m1, m2, labels[..., :-1], target, target, target)

    def _bursty_ids(self, b: int, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """M1 and M2 class ids (E, b, N+1) of bursty sequences of known label-consistent pairs, the
        query (one of the pairs) last."""
        slots, q = self.m1.bursty_layout(b, g)
        k2 = self.m2.draw_classes((b, self.C), g)
        k1 = self.m1_partner(self.m2.label_of(k2), g)
        m1_ids = torch.cat([self._per_slot(k1, slots), self._at(k1, q).unsqueeze(-1)], -1)
        m2_ids = torch.cat([self._per_slot(k2, slots), self._at(k2, q).unsqueeze(-1)], -1)
        return m1_ids, m2_ids

    # ---- training -------------------------------------------------------------------------
    def train_batch(self, b: int, g: torch.Generator) -> PairSequences:
        """Bursty (label-consistent pairs) with probability p_bursty per member, else independent
        M1 and M2 classes at every position with M2's label."""
        bursty_m1, bursty_m2 = self._bursty_ids(b, g)
        iid_m1 = self.m1.draw_classes((b, self.N + 1), g)
        iid_m2 = self.m2.draw_classes((b, self.N + 1), g)
        is_bursty = (torch.rand(self.E, b, generator=g, device=self.device) < self.p_bursty.view(-1, 1)).unsqueeze(-1)
        return self._known(torch.where(is_bursty, bursty_m1, iid_m1), torch.where(is_bursty, bursty_m2, iid_m2), g)

    # ---- evaluation sets ------------------------------------------------------------------
    def new_class_batch(self, b: int, g: torch.Generator, query: str = "both") -> PairSequences:
        """Bursty sequences of brand-new classes with distinct random labels.  ``query``: ``both``
        (the ICL set), ``m2only`` (M1_q from a fresh class), ``m1only`` (M2_q from a fresh class) or
        ``conflict`` (M1_q from pair a, M2_q from another pair c)."""
        if query not in ("both", "m2only", "m1only", "conflict"):
            raise ValueError(f"query must be both, m2only, m1only or conflict, got {query!r}")
        slots, a = self.m1.bursty_layout(b, g)
        mu1, mu2 = self._fresh(b, self.C, self.m1.D, g), self._fresh(b, self.C, self.m2.D, g)
        slot_labels = torch.argsort(torch.rand(self.E, b, self.L, generator=g, device=self.device), dim=-1)[..., :self.C]
        c = a
        if query == "conflict":
            c = (a + 1 + torch.randint(0, self.C - 1, a.shape, generator=g, device=self.device)) % self.C
        q1 = self._fresh(b, 1, self.m1.D, g).squeeze(2) if query == "m2only" else self._at(mu1, a)
        q2 = self._fresh(b, 1, self.m2.D, g).squeeze(2) if query == "m1only" else self._at(mu2, c)
        m1 = self.m1.items(torch.cat([self._per_slot(mu1, slots), q1.unsqueeze(2)], 2), g)
        m2 = self.m2_items(torch.cat([self._per_slot(mu2, slots), q2.unsqueeze(2)], 2), g)
        labels = self._per_slot(slot_labels, slots)
        none = torch.full_like(a, -1)
        f1 = none if query == "m2only" else self._at(slot_labels, a)
        f2 = none if query == "m1only" else self._at(slot_labels, c)
        target = none if query == "conflict" else (f2 if query == "m2only" else f1)
        return PairSequences(m1, m2, labels, target, f1, f2)

    def known_m2_batch(self, b: int, g: torch.Generator) -> PairSequences:
        """The ``icl_m2known`` set: distinct known M2 classes with per-sequence random labels, fresh
        M1 partners, and a query whose M1 item is from a fresh class."""
        slots, a = self.m1.bursty_layout(b, g)
        order = torch.rand(self.E, b, self.m2.K_max, generator=g, device=self.device)
        order = order.masked_fill(torch.arange(self.m2.K_max, device=self.device) >= self.m2.K.view(-1, 1, 1), 2.0)
        k2 = torch.argsort(order, dim=-1)[..., :self.C]                      # distinct known classes
        slot_labels = torch.argsort(torch.rand(self.E, b, self.L, generator=g, device=self.device), dim=-1)[..., :self.C]
        mu1 = self._fresh(b, self.C, self.m1.D, g)
        mu2 = self.m2.gather_means(k2)
        q1 = self._fresh(b, 1, self.m1.D, g).squeeze(2)
        m1 = self.m1.items(torch.cat([self._per_slot(mu1, slots), q1.unsqueeze(2)], 2), g)
        m2 = self.m2_items(torch.cat([self._per_slot(mu2, slots), self._at(mu2, a).unsqueeze(2)], 2), g)
        target = self._at(slot_labels, a)
        return PairSequences(m1, m2, self._per_slot(slot_labels, slots), target, torch.full_like(a, -1), target)

    def flip_batch(self, b: int, g: torch.Generator) -> PairSequences:
        """Bursty pairs of known classes with labels ℓ → ℓ+1 mod L in the context and the target."""
        return self._known(*self._bursty_ids(b, g), g, shift=1)

    def iwl_batch(self, b: int, g: torch.Generator) -> PairSequences:
        """Known query classes (an M2 class and an M1 partner of its label); N independent context
        pairs whose labels all differ from the query's (redrawn until they do)."""
        q2 = self.m2.draw_classes((b, 1), g)
        ctx2 = self.m2.draw_classes((b, self.N), g)
        q_label = self.m2.label_of(q2)
        for _ in range(MAX_REJECTION_ROUNDS):
            bad = self.m2.label_of(ctx2) == q_label
            if not bool(bad.any()):
                break
            ctx2 = torch.where(bad, self.m2.draw_classes((b, self.N), g), ctx2)
        else:
            raise RuntimeError("IWL set: could not draw M2 context classes avoiding the query's label; the M2 "
                               "class law puts almost all its mass on one label (lower its zipf or raise its K)")
        m2_ids = torch.cat([ctx2, q2], -1)
        m1_ids = self.m1_partner(self.m2.label_of(m2_ids), g)
        return self._known(m1_ids, m2_ids, g)

    def iwl_balanced_batch(self, b: int, g: torch.Generator) -> PairSequences:
        """The label-balanced IWL set (version 3): the query's label uniform over the L labels, its
        M2 class from M2's class law restricted to that label, its M1 item a partner of that label;
        N independent context pairs whose labels all differ from the query's (as ``iwl_batch``).  The
        best query-blind rule's accuracy is ``blind_best_accuracy(self.m2.blind_posterior(labels))``:
        the labels are M2's, and the M1 partners carry no information beyond their label."""
        q_label = torch.randint(0, self.L, (self.E, b), generator=g, device=self.device)
        q2 = self.m2.draw_classes_of_labels(q_label, g).unsqueeze(-1)
        ctx2 = self.m2.context_avoiding(q_label, self.N, g, "label-balanced IWL set (M2)")
        m2_ids = torch.cat([ctx2, q2], -1)
        m1_ids = self.m1_partner(self.m2.label_of(m2_ids), g)
        return self._known(m1_ids, m2_ids, g)

    def batch(self, name: str, b: int, g: torch.Generator) -> PairSequences:
        """One of the evaluation sets ``SETS`` (or ``iwl_balanced``) by name."""
        if name == "iwl_balanced":
            return self.iwl_balanced_batch(b, g)
        if name == "icl":
            return self.new_class_batch(b, g, "both")
        if name in ("icl_m2only", "icl_m1only"):
            return self.new_class_batch(b, g, name.split("_")[1])
        if name == "icl_m2known":
            return self.known_m2_batch(b, g)
        if name == "conflict":
            return self.new_class_batch(b, g, "conflict")
        if name == "flip":
            return self.flip_batch(b, g)
        if name == "iwl":
            return self.iwl_batch(b, g)
        raise ValueError(f"no evaluation set {name!r}; the sets are {SETS}")

    def single_items(self, b: int, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """Single noisy M2 items of known classes, uniform over each member's K2 classes: items
        (E, b, item_dim) and their classes (E, b) (the M2 encoder's task)."""
        u = torch.rand(self.E, b, generator=g, device=self.device, dtype=torch.float64)
        k = torch.minimum((u * self.m2.K.view(-1, 1)).long(), (self.m2.K - 1).view(-1, 1))
        x = self.m2_items(self.m2.gather_means(k.unsqueeze(-1)), g).squeeze(2)
        return x, k
