"""A batched ensemble of small decoder-only transformers.

Every weight has a leading ensemble axis E and every matmul is a batched matmul over it, so E
models train as one job; member e's weights are drawn from its own seed, so it starts exactly as it
would alone.  One block (pre-RMSNorm, causal attention, gated SiLU MLP)::

    h = h + Attn(RMSNorm(h)),     Attn: softmax(q kᵀ/√d_h + bias + causal mask) v, then W_o
    h = h + W_down(SiLU(W_gate x) ⊙ W_up x),   x = RMSNorm(h)

Input: ``W_in [x_t ; onehot(t + shift)]`` for ``ape`` (shift random per sequence), ``W_in x_t`` for
``rope`` and ``alibi``, so all variants have the same width.  Output: ``W_out RMSNorm(h_T)`` → L logits
at the last (query) token.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import torch
from torch import nn

from .config import ModelConfig

__all__ = ["Forward", "bmm", "alibi_slopes", "rope_tables", "EnsembleDecoder", "decoder_parameters",
           "width_matching_parameters"]



@dataclass
class Forward:
    logits: torch.Tensor                   # (E, b, L)
    attention: list[torch.Tensor] | None   # per layer (E, b, H, T, T), if asked
    head_outputs: list[torch.Tensor] | None = None  # per layer (E, b, H, T, head_dim), if asked


def bmm(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """(E, ..., i) @ (E, i, o) → (E, ..., o) as one batched matmul."""
    E = x.shape[0]
    return torch.bmm(x.reshape(E, -1, x.shape[-1]), w).view(*x.shape[:-1], w.shape[-1])


def _rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """x / √(mean x² + eps) · weight, weight (E, d)."""
    shape = (weight.shape[0],) + (1,) * (x.dim() - 2) + (weight.shape[1],)
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight.view(shape)


def alibi_slopes(heads: int) -> torch.Tensor:
    """Geometric slopes 2^(−8(h+1)/H) of ALiBi."""
    return torch.tensor([2.0 ** (-8.0 * (h + 1) / heads) for h in range(heads)])


def rope_tables(T: int, head_dim: int, base: float, device, dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """cos, sin (T, head_dim) of standard RoPE: pair (i, i + head_dim/2) rotated by t·base^(−2i/head_dim)."""
    inv = base ** (-torch.arange(0, head_dim // 2, device=device, dtype=torch.float64) * 2 / head_dim)
    angles = torch.arange(T, device=device, dtype=torch.float64)[:, None] * inv[None, :]
    angles = torch.cat([angles, angles], dim=-1)
    return angles.cos().to(dtype), angles.sin().to(dtype)


def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos + rotated * sin


class EnsembleDecoder(nn.Module):
    """E decoders with the same shape; ``seeds[e]`` draws member e's weights."""

    def __init__(self, config: ModelConfig, d_token: int, n_labels: int, seeds: list[int],
                 device: str | torch.device = "cpu", dtype: torch.dtype = torch.float32):
        super().__init__()
        self.config = config
        self.d_token = d_token
        self.n_labels = n_labels
        self.E = len(seeds)
        c = config
        d, h = c.width, c.mlp_ratio * c.width
        d_in = d_token + (c.ape_slots if c.pos == "ape" else 0)
        shapes: dict[str, tuple[tuple[int, ...], float]] = {"w_in": ((d_in, d), 1 / math.sqrt(d_in))}
        for layer in range(c.layers):
            shapes[f"l{layer}.w_qkv"] = ((d, 3 * d), 1 / math.sqrt(d))
            shapes[f"l{layer}.w_o"] = ((d, d), 1 / math.sqrt(d * 2 * c.layers))
            shapes[f"l{layer}.w_gate"] = ((d, h), 1 / math.sqrt(d))
            shapes[f"l{layer}.w_up"] = ((d, h), 1 / math.sqrt(d))
            shapes[f"l{layer}.w_down"] = ((h, d), 1 / math.sqrt(h * 2 * c.layers))
        shapes["w_out"] = ((d, n_labels), 1 / math.sqrt(d))
        per_member = []
        for s in seeds:
            g = torch.Generator().manual_seed(int(s))
            per_member.append({k: torch.randn(shape, generator=g) * std for k, (shape, std) in shapes.items()})
        self.weights = nn.ParameterDict({
            k.replace(".", "_"): nn.Parameter(torch.stack([m[k] for m in per_member]).to(device, dtype))
            for k in shapes})
        norms = [f"l{layer}_norm_attn" for layer in range(c.layers)] + \
                [f"l{layer}_norm_mlp" for layer in range(c.layers)] + ["norm_out"]
        for k in norms:
            self.weights[k] = nn.Parameter(torch.ones(self.E, d, device=device, dtype=dtype))
        self.register_buffer("slopes", alibi_slopes(c.heads).to(device, dtype), persistent=False)

    def w(self, name: str) -> torch.Tensor:
        return self.weights[name]

    def member_state(self, e: int) -> dict[str, torch.Tensor]:
        """Member e's weights (for comparing with a model trained alone)."""
        return {k: v[e].detach().clone() for k, v in self.weights.items()}

    def forward(self, tokens: torch.Tensor, ape_shift: torch.Tensor | None = None,
                head_mask: torch.Tensor | None = None, return_attention: bool = False,
                head_mean: torch.Tensor | None = None, return_head_outputs: bool = False,
                attention_patch: tuple[torch.Tensor, torch.Tensor] | None = None) -> Forward:
        """tokens (E, b, T, D); ``ape_shift`` (E, b) long offsets of the one-hot positions (0 if None);
        ``head_mask`` (E, layers, heads) multiplies each head's output (0 ablates it).

        Mean-ablation: with ``head_mean`` μ (E, layers, heads, T, head_dim) as well, head (l, h)'s
        output o_{l,h,t} = Σ_s A_{ts} v_s (before W_o) becomes m·o_{l,h,t} + (1 − m)·μ_{l,h,t}, m the
        mask entry: a masked head (m = 0) emits μ instead of 0 (μ is what ``metrics.head_means``
        computes, the mean of o over a reference batch).  Without ``head_mean`` (the default) a
        masked head emits m·o as before.  ``return_head_outputs`` returns o of every head, every
        position (the last layer then computes every row, as under ``return_attention``).

        Attention patching: with ``attention_patch`` = (mask, row), mask (E, layers, heads) boolean
        and row (E, b, T) a distribution over the T positions, the last (query) token's attention
        row of every head with a true mask entry is replaced by ``row`` before it weights the
        values: o_{l,h,T} = Σ_s row_s v_s.  Every other row, and every unmasked head, is untouched;
        the attention ``return_attention`` returns is the patched one."""
        c = self.config
        E, b, T, _ = tokens.shape
        if E != self.E:
            raise ValueError(f"tokens have {E} ensemble members, the model {self.E}")
        if head_mean is not None and tuple(head_mean.shape) != (E, c.layers, c.heads, T, c.head_dim):
            raise ValueError(f"head_mean has shape {tuple(head_mean.shape)}, expected "
                             f"{(E, c.layers, c.heads, T, c.head_dim)}")
        if attention_patch is not None:
            patch_mask, patch_row = attention_patch
            if tuple(patch_mask.shape) != (E, c.layers, c.heads) or tuple(patch_row.shape) != (E, b, T):
                raise ValueError(f"attention_patch needs a mask of shape {(E, c.layers, c.heads)} and a row of shape "
                                 f"{(E, b, T)}, got {tuple(patch_mask.shape)} and {tuple(patch_row.shape)}")
        if c.pos == "ape":
            if T > c.ape_slots:
                raise ValueError(f"sequence of {T} tokens but ape_slots={c.ape_slots}; raise ape_slots")
            pos = torch.arange(T, device=tokens.device).view(1, 1, T)
            if ape_shift is not None:
                pos = pos + ape_shift.unsqueeze(-1)
            onehot = torch.nn.functional.one_hot(pos.expand(E, b, T), c.ape_slots).to(tokens.dtype)
            tokens = torch.cat([tokens, onehot], dim=-1)
        x = bmm(tokens, self.w("w_in"))
        H, hd = c.heads, c.head_dim
        bias = torch.zeros(T, T, device=x.device, dtype=x.dtype)
        causal = torch.ones(T, T, device=x.device, dtype=torch.bool).tril()
        bias = bias.masked_fill(~causal, float("-inf"))
        if c.pos == "alibi":
            dist = (torch.arange(T, device=x.device).view(T, 1) - torch.arange(T, device=x.device).view(1, T)).to(x.dtype)
            bias = bias - self.slopes.view(H, 1, 1) * dist.clamp(min=0)   # (H, T, T)
        if c.pos == "rope":
            cos, sin = rope_tables(T, hd, c.rope_base, x.device, x.dtype)
        attentions, outputs = [], []
        every_row = return_attention or return_head_outputs
        for layer in range(c.layers):
            # only the query token feeds the readout: the last block computes its row alone
            # unless every attention row is asked for (same logits either way)
            rows = slice(T - 1, T) if (layer == c.layers - 1 and not every_row) else slice(0, T)
            a = _rms_norm(x, self.w(f"l{layer}_norm_attn"))
            q, k, v = bmm(a, self.w(f"l{layer}_w_qkv")).view(E, b, T, 3, H, hd).permute(3, 0, 1, 4, 2, 5)
            if c.pos == "rope":
                q, k = _rotate(q, cos, sin), _rotate(k, cos, sin)
            q, x = q[..., rows, :], x[:, :, rows]
            scores = q @ k.transpose(-1, -2) / math.sqrt(hd) + bias[..., rows, :]
            attn = torch.softmax(scores, dim=-1)                                  # (E, b, H, T, T)
            if attention_patch is not None:
                on = patch_mask[:, layer].to(torch.bool).view(E, 1, H, 1)
                last = torch.where(on, patch_row.to(attn.dtype).unsqueeze(2), attn[..., -1, :])
                attn = torch.cat([attn[..., :-1, :], last.unsqueeze(-2)], dim=-2)
            if return_attention:
                attentions.append(attn.detach())
            heads_out = attn @ v                                                  # (E, b, H, T, hd)
            if return_head_outputs:
                outputs.append(heads_out.detach())
            if head_mask is not None:
                m = head_mask[:, layer].view(E, 1, H, 1, 1).to(heads_out.dtype)
                heads_out = heads_out * m
                if head_mean is not None:
                    mu = head_mean[:, layer, :, rows].unsqueeze(1).to(heads_out.dtype)  # (E, 1, H, rows, hd)
                    heads_out = heads_out + (1 - m) * mu
            x = x + bmm(heads_out.transpose(2, 3).reshape(E, b, x.shape[2], c.width), self.w(f"l{layer}_w_o"))
            m = _rms_norm(x, self.w(f"l{layer}_norm_mlp"))
            gate = torch.nn.functional.silu(bmm(m, self.w(f"l{layer}_w_gate")))
            x = x + bmm(gate * bmm(m, self.w(f"l{layer}_w_up")), self.w(f"l{layer}_w_down"))
        last = _rms_norm(x[:, :, -1], self.w("norm_out"))
        return Forward(bmm(last, self.w("w_out")), attentions if return_attention else None,
                       outputs if return_head_outputs else None)


def decoder_parameters(model: ModelConfig, d_token: int, L: int) -> int:
    """Weights of one decoder of this shape (APE slots included)."""
    return sum(p[0].numel() for p in EnsembleDecoder(model, d_token, L, [0]).parameters())


def width_matching_parameters(model: ModelConfig, layers: int, d_token: int, L: int) -> int:
    """The width (a multiple of 2·heads) at which a ``layers``-layer decoder has the parameter count
    closest to ``model``'s."""
    target = decoder_parameters(model, d_token, L)
    step = 2 * model.heads
    widths = range(step, 2 * model.width + step, step)
    return min(widths, key=lambda w: abs(decoder_parameters(replace(model, layers=layers, width=w), d_token, L) - target))
