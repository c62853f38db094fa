"""GPT-2 (DialoGPT) with per-layer prompt keys/values, as UniCRS uses it.

UniCRS prepends prompt keys/values to every self-attention layer; the
prompt is visible to all positions. Names match Hugging Face's
`GPT2LMHeadModel` checkpoints (`transformer.h.0.attn.c_attn`, ...), the
language-model head is tied to `transformer.wte`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

import torch
from torch import nn

from crs.neural.layers import Conv1D, activation, attention, merge_heads, split_heads


@dataclass(frozen=True)
class GPT2Config:
    vocab_size: int
    n_embd: int
    n_layer: int
    n_head: int
    n_positions: int = 1024
    layer_norm_epsilon: float = 1e-5
    activation_function: str = "gelu_new"
    eos_token_id: int = 50256
    n_inner: Optional[int] = None
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "GPT2Config":
        if not data.get("scale_attn_weights", True) or data.get("scale_attn_by_inverse_layer_idx"):
            raise ValueError("only GPT-2 configurations with standard attention scaling are supported")
        return cls(
            vocab_size=int(data["vocab_size"]),
            n_embd=int(data["n_embd"]),
            n_layer=int(data["n_layer"]),
            n_head=int(data["n_head"]),
            n_positions=int(data.get("n_positions", 1024)),
            layer_norm_epsilon=float(data.get("layer_norm_epsilon", 1e-5)),
            activation_function=str(data.get("activation_function", "gelu_new")),
            eos_token_id=int(data.get("eos_token_id", 50256)),
            n_inner=data.get("n_inner"),
            raw=dict(data),
        )


class GPT2Attention(nn.Module):
    def __init__(self, config: GPT2Config):
        super().__init__()
        self.num_heads = config.n_head
        self.width = config.n_embd
        self.c_attn = Conv1D(3 * config.n_embd, config.n_embd)
        self.c_proj = Conv1D(config.n_embd, config.n_embd)

    def forward(self, x: torch.Tensor, past: Optional[tuple[torch.Tensor, torch.Tensor]]):
        query, key, value = self.c_attn(x).split(self.width, dim=2)
        query, key, value = (split_heads(t, self.num_heads) for t in (query, key, value))
        if past is not None:
            key = torch.cat([past[0], key], dim=2)
            value = torch.cat([past[1], value], dim=2)
        out = attention(query, key, value, causal_offset=key.size(2) - x.size(1))
        return self.c_proj(merge_heads(out)), (key, value)


class GPT2MLP(nn.Module):
    def __init__(self, config: GPT2Config):
        super().__init__()
        inner = config.n_inner or 4 * config.n_embd
        self.c_fc = Conv1D(inner, config.n_embd)
        self.c_proj = Conv1D(config.n_embd, inner)
        self.act = activation(config.activation_function)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.c_proj(self.act(self.c_fc(x)))


class GPT2Block(nn.Module):
    def __init__(self, config: GPT2Config):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd, eps=config.layer_norm_epsilon)
        self.attn = GPT2Attention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd, eps=config.layer_norm_epsilon)
        self.mlp = GPT2MLP(config)

    def forward(self, x, past):
        attended, present = self.attn(self.ln_1(x), past)
        x = x + attended
        return x + self.mlp(self.ln_2(x)), present


class GPT2Model(nn.Module):
    def __init__(self, config: GPT2Config):
        super().__init__()
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.wpe = nn.Embedding(config.n_positions, config.n_embd)
        self.h = nn.ModuleList(GPT2Block(config) for _ in range(config.n_layer))
        self.ln_f = nn.LayerNorm(config.n_embd, eps=config.layer_norm_epsilon)


class PromptGPT2(nn.Module):
    """GPT-2 LM whose attention cache can start from prompt keys/values."""

    tied_aliases = {"lm_head.weight": "transformer.wte.weight"}
    optional_keys: tuple[str, ...] = ()
    # Old checkpoints store the causal-mask buffers; they carry no weights.
    ignored_keys = (r"(^|\.)attn\.(bias|masked_bias)$",)

    def __init__(self, config: GPT2Config):
        super().__init__()
        self.config = config
        self.transformer = GPT2Model(config)
        self.head: Optional[nn.Module] = None  # a quantized copy of the tied head, when quantized

    @staticmethod
    def prompt_cache(prompt: Optional[torch.Tensor], num_layers: int) -> list:
        """Per-layer (key, value) from a (layers, 2, batch, heads, length, head_dim) prompt."""
        if prompt is None:
            return [None] * num_layers
        return [(prompt[i, 0], prompt[i, 1]) for i in range(num_layers)]

    def forward(self, input_ids: torch.Tensor, position_ids: torch.Tensor, cache: list) -> torch.Tensor:
        """Hidden states of the new tokens; `cache` (per-layer keys/values) is extended in place."""
        body = self.transformer
        x = body.wte(input_ids) + body.wpe(position_ids)
        for index, block in enumerate(body.h):
            x, cache[index] = block(x, cache[index])
        return body.ln_f(x)

    def lm_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        if self.head is not None:
            return self.head(hidden)
        return hidden @ self.transformer.wte.weight.T
