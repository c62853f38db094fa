"""RoBERTa encoder (UniCRS's text encoder for the prompt).

Names match the `roberta.*` part of Hugging Face RoBERTa checkpoints; the
masked-LM head and pooler in those files are not used here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import torch
from torch import nn

from crs.neural.layers import activation, attention, merge_heads, split_heads


@dataclass(frozen=True)
class RobertaConfig:
    vocab_size: int
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    intermediate_size: int
    max_position_embeddings: int = 514
    type_vocab_size: int = 1
    layer_norm_eps: float = 1e-5
    pad_token_id: int = 1
    hidden_act: str = "gelu"
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "RobertaConfig":
        return cls(
            vocab_size=int(data["vocab_size"]),
            hidden_size=int(data["hidden_size"]),
            num_hidden_layers=int(data["num_hidden_layers"]),
            num_attention_heads=int(data["num_attention_heads"]),
            intermediate_size=int(data["intermediate_size"]),
            max_position_embeddings=int(data.get("max_position_embeddings", 514)),
            type_vocab_size=int(data.get("type_vocab_size", 1)),
            layer_norm_eps=float(data.get("layer_norm_eps", 1e-5)),
            pad_token_id=int(data.get("pad_token_id", 1)),
            hidden_act=str(data.get("hidden_act", "gelu")),
            raw=dict(data),
        )


class RobertaEmbeddings(nn.Module):
    def __init__(self, config: RobertaConfig):
        super().__init__()
        self.padding_idx = config.pad_token_id
        self.word_embeddings = nn.Embedding(config.vocab_size, config.hidden_size, padding_idx=config.pad_token_id)
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, config.hidden_size)
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        # Positions count real tokens from padding_idx + 1; padding sits at padding_idx.
        real = input_ids.ne(self.padding_idx).long()
        positions = torch.cumsum(real, dim=1) * real + self.padding_idx
        x = (
            self.word_embeddings(input_ids)
            + self.token_type_embeddings(torch.zeros_like(input_ids))
            + self.position_embeddings(positions)
        )
        return self.LayerNorm(x)


class RobertaSelfAttention(nn.Module):
    def __init__(self, config: RobertaConfig):
        super().__init__()
        self.num_heads = config.num_attention_heads
        self.query = nn.Linear(config.hidden_size, config.hidden_size)
        self.key = nn.Linear(config.hidden_size, config.hidden_size)
        self.value = nn.Linear(config.hidden_size, config.hidden_size)


class RobertaSelfOutput(nn.Module):
    def __init__(self, config: RobertaConfig, inner: int):
        super().__init__()
        self.dense = nn.Linear(inner, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)


class RobertaAttention(nn.Module):
    def __init__(self, config: RobertaConfig):
        super().__init__()
        self.self = RobertaSelfAttention(config)
        self.output = RobertaSelfOutput(config, config.hidden_size)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        heads = self.self.num_heads
        query, key, value = (split_heads(proj(x), heads) for proj in (self.self.query, self.self.key, self.self.value))
        out = merge_heads(attention(query, key, value, mask=mask))
        return self.output.LayerNorm(x + self.output.dense(out))


class RobertaIntermediate(nn.Module):
    def __init__(self, config: RobertaConfig):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.intermediate_size)


class RobertaLayer(nn.Module):
    def __init__(self, config: RobertaConfig):
        super().__init__()
        self.attention = RobertaAttention(config)
        self.intermediate = RobertaIntermediate(config)
        self.output = RobertaSelfOutput(config, config.intermediate_size)
        self.act = activation(config.hidden_act)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = self.attention(x, mask)
        return self.output.LayerNorm(x + self.output.dense(self.act(self.intermediate.dense(x))))


class RobertaEncoderStack(nn.Module):
    def __init__(self, config: RobertaConfig):
        super().__init__()
        self.layer = nn.ModuleList(RobertaLayer(config) for _ in range(config.num_hidden_layers))


class RobertaEncoder(nn.Module):
    """`last_hidden_state` of RoBERTa for a batch with an attention mask."""

    tied_aliases: dict[str, str] = {}
    optional_keys: tuple[str, ...] = ()
    ignored_keys = (
        r"^lm_head\.",
        r"^pooler\.",
        r"^embeddings\.(position_ids|token_type_ids)$",
    )

    def __init__(self, config: RobertaConfig):
        super().__init__()
        self.config = config
        self.embeddings = RobertaEmbeddings(config)
        self.encoder = RobertaEncoderStack(config)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        mask = attention_mask.bool()[:, None, None, :]
        x = self.embeddings(input_ids)
        for layer in self.encoder.layer:
            x = layer(x, mask)
        return x
