"""BART encoder-decoder (post-layer-norm, learned positions offset by 2).

Written for single-sequence inference: inputs are never padded, the decoder
keeps a key/value cache, and the cross-attention keys/values are computed
once per encoder output. Module and parameter names match Hugging Face's
`BartModel` checkpoints (`model.shared`, `model.encoder.layers.0.self_attn.q_proj`, ...).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

import torch
from torch import nn

from crs.neural.layers import activation, attention, merge_heads, split_heads

POSITION_OFFSET = 2  # BART's learned position table starts at index 2


@dataclass(frozen=True)
class BartConfig:
    vocab_size: int
    d_model: int
    encoder_layers: int
    decoder_layers: int
    encoder_attention_heads: int
    decoder_attention_heads: int
    encoder_ffn_dim: int
    decoder_ffn_dim: int
    max_position_embeddings: int = 1024
    pad_token_id: int = 1
    bos_token_id: int = 0
    eos_token_id: int = 2
    decoder_start_token_id: int = 2
    scale_embedding: bool = False
    activation_function: str = "gelu"
    num_labels: int = 2
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "BartConfig":
        d_model = data.get("d_model", data.get("hidden_size"))
        num_labels = data.get("num_labels")
        if num_labels is None and isinstance(data.get("id2label"), dict):
            num_labels = len(data["id2label"])
        return cls(
            vocab_size=int(data["vocab_size"]),
            d_model=int(d_model),
            encoder_layers=int(data["encoder_layers"]),
            decoder_layers=int(data["decoder_layers"]),
            encoder_attention_heads=int(data["encoder_attention_heads"]),
            decoder_attention_heads=int(data["decoder_attention_heads"]),
            encoder_ffn_dim=int(data["encoder_ffn_dim"]),
            decoder_ffn_dim=int(data["decoder_ffn_dim"]),
            max_position_embeddings=int(data.get("max_position_embeddings", 1024)),
            pad_token_id=int(data.get("pad_token_id", 1)),
            bos_token_id=int(data.get("bos_token_id", 0)),
            eos_token_id=int(data.get("eos_token_id", 2)),
            decoder_start_token_id=int(data.get("decoder_start_token_id", 2)),
            scale_embedding=bool(data.get("scale_embedding", False)),
            activation_function=str(data.get("activation_function", "gelu")),
            num_labels=int(num_labels or 2),
            raw=dict(data),
        )


class BartAttention(nn.Module):
    def __init__(self, width: int, num_heads: int):
        super().__init__()
        self.num_heads = num_heads
        self.k_proj = nn.Linear(width, width)
        self.v_proj = nn.Linear(width, width)
        self.q_proj = nn.Linear(width, width)
        self.out_proj = nn.Linear(width, width)

    def keys_values(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return split_heads(self.k_proj(x), self.num_heads), split_heads(self.v_proj(x), self.num_heads)

    def forward(self, x, keys, values, *, causal_offset=None, mask=None):
        # BART's head_dim**-0.5 query scaling is the one SDPA applies.
        query = split_heads(self.q_proj(x), self.num_heads)
        out = attention(query, keys, values, mask=mask, causal_offset=causal_offset)
        return self.out_proj(merge_heads(out))


class BartEncoderLayer(nn.Module):
    def __init__(self, config: BartConfig):
        super().__init__()
        width = config.d_model
        self.self_attn = BartAttention(width, config.encoder_attention_heads)
        self.self_attn_layer_norm = nn.LayerNorm(width)
        self.fc1 = nn.Linear(width, config.encoder_ffn_dim)
        self.fc2 = nn.Linear(config.encoder_ffn_dim, width)
        self.final_layer_norm = nn.LayerNorm(width)
        self.act = activation(config.activation_function)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        keys, values = self.self_attn.keys_values(x)
        x = self.self_attn_layer_norm(x + self.self_attn(x, keys, values))
        return self.final_layer_norm(x + self.fc2(self.act(self.fc1(x))))


class BartDecoderLayer(nn.Module):
    def __init__(self, config: BartConfig):
        super().__init__()
        width = config.d_model
        self.self_attn = BartAttention(width, config.decoder_attention_heads)
        self.self_attn_layer_norm = nn.LayerNorm(width)
        self.encoder_attn = BartAttention(width, config.decoder_attention_heads)
        self.encoder_attn_layer_norm = nn.LayerNorm(width)
        self.fc1 = nn.Linear(width, config.decoder_ffn_dim)
        self.fc2 = nn.Linear(config.decoder_ffn_dim, width)
        self.final_layer_norm = nn.LayerNorm(width)
        self.act = activation(config.activation_function)

    def forward(self, x, cache: "DecoderCache", index: int) -> torch.Tensor:
        keys, values = self.self_attn.keys_values(x)
        past = cache.self_kv[index]
        if past is not None:
            keys = torch.cat([past[0], keys], dim=2)
            values = torch.cat([past[1], values], dim=2)
        cache.self_kv[index] = (keys, values)
        offset = keys.size(2) - x.size(1)
        x = self.self_attn_layer_norm(x + self.self_attn(x, keys, values, causal_offset=offset))
        cross_keys, cross_values = cache.cross_kv[index]
        x = self.encoder_attn_layer_norm(x + self.encoder_attn(x, cross_keys, cross_values))
        return self.final_layer_norm(x + self.fc2(self.act(self.fc1(x))))


class DecoderCache:
    """Per-sequence decoder state: cross-attention keys/values and the self-attention cache."""

    def __init__(self, cross_kv: list[tuple[torch.Tensor, torch.Tensor]]):
        self.cross_kv = cross_kv
        self.self_kv: list[Optional[tuple[torch.Tensor, torch.Tensor]]] = [None] * len(cross_kv)
        self.length = 0


class BartEncoder(nn.Module):
    def __init__(self, config: BartConfig):
        super().__init__()
        self.embed_scale = math.sqrt(config.d_model) if config.scale_embedding else 1.0
        self.embed_positions = nn.Embedding(config.max_position_embeddings + POSITION_OFFSET, config.d_model)
        self.layers = nn.ModuleList(BartEncoderLayer(config) for _ in range(config.encoder_layers))
        self.layernorm_embedding = nn.LayerNorm(config.d_model)

    def forward(self, input_ids: torch.Tensor, embed_tokens: nn.Embedding) -> torch.Tensor:
        positions = torch.arange(input_ids.size(1)) + POSITION_OFFSET
        x = embed_tokens(input_ids) * self.embed_scale + self.embed_positions(positions)
        x = self.layernorm_embedding(x)
        for layer in self.layers:
            x = layer(x)
        return x


class BartDecoder(nn.Module):
    def __init__(self, config: BartConfig):
        super().__init__()
        self.embed_scale = math.sqrt(config.d_model) if config.scale_embedding else 1.0
        self.embed_positions = nn.Embedding(config.max_position_embeddings + POSITION_OFFSET, config.d_model)
        self.layers = nn.ModuleList(BartDecoderLayer(config) for _ in range(config.decoder_layers))
        self.layernorm_embedding = nn.LayerNorm(config.d_model)

    def start(self, encoder_states: torch.Tensor) -> DecoderCache:
        return DecoderCache([layer.encoder_attn.keys_values(encoder_states) for layer in self.layers])

    def forward(self, input_ids: torch.Tensor, embed_tokens: nn.Embedding, cache: DecoderCache) -> torch.Tensor:
        positions = torch.arange(cache.length, cache.length + input_ids.size(1)) + POSITION_OFFSET
        x = embed_tokens(input_ids) * self.embed_scale + self.embed_positions(positions)
        x = self.layernorm_embedding(x)
        for index, layer in enumerate(self.layers):
            x = layer(x, cache, index)
        cache.length += input_ids.size(1)
        return x


class BartModel(nn.Module):
    def __init__(self, config: BartConfig):
        super().__init__()
        self.config = config
        self.shared = nn.Embedding(config.vocab_size, config.d_model, padding_idx=config.pad_token_id)
        self.encoder = BartEncoder(config)
        self.decoder = BartDecoder(config)

    def encode(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.encoder(input_ids, self.shared)

    def start_decoder(self, encoder_states: torch.Tensor) -> DecoderCache:
        return self.decoder.start(encoder_states)

    def decode(self, input_ids: torch.Tensor, cache: DecoderCache) -> torch.Tensor:
        return self.decoder(input_ids, self.shared, cache)


# Tied copies of the shared embedding that Hugging Face checkpoints may or may not contain.
BART_TIED_ALIASES = {
    "model.encoder.embed_tokens.weight": "model.shared.weight",
    "model.decoder.embed_tokens.weight": "model.shared.weight",
}


class BartForGeneration(nn.Module):
    """BART with a tied language-model head; `user_hidden_size` adds KBRD's user bias.

    Without it this is `BartForConditionalGeneration` (BARCOR's generator);
    with it, KBRD's conversation model, whose logits are shifted by a
    projection of the user representation (`rec_proj`).
    """

    tied_aliases = {**BART_TIED_ALIASES, "lm_head.weight": "model.shared.weight"}
    optional_keys = ("final_logits_bias",)  # Hugging Face tolerates its absence (zeros)

    def __init__(self, config: BartConfig, user_hidden_size: Optional[int] = None):
        super().__init__()
        self.config = config
        self.model = BartModel(config)
        self.register_buffer("final_logits_bias", torch.zeros(1, config.vocab_size))
        self.rec_proj = nn.Linear(user_hidden_size, config.vocab_size) if user_hidden_size else None
        self.head: Optional[nn.Module] = None  # a quantized copy of the tied head, when quantized

    def logits(self, hidden: torch.Tensor, user_embeds: Optional[torch.Tensor] = None) -> torch.Tensor:
        projected = self.head(hidden) if self.head is not None else hidden @ self.model.shared.weight.T
        out = projected + self.final_logits_bias
        if self.rec_proj is not None:
            if user_embeds is None:
                raise ValueError("KBRD's generator needs the user representation")
            out = out + self.rec_proj(user_embeds).unsqueeze(1)
        return out


class BartClassificationHead(nn.Module):
    def __init__(self, width: int, num_labels: int):
        super().__init__()
        self.dense = nn.Linear(width, width)
        self.out_proj = nn.Linear(width, num_labels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out_proj(torch.tanh(self.dense(x)))


class BartForSequenceClassification(nn.Module):
    """BARCOR's recommender: classifies the dialogue into one of the KG entities.

    The sentence representation is the decoder state at the last token; the
    decoder reads the input shifted right by one (decoder start token first).
    """

    tied_aliases = dict(BART_TIED_ALIASES)
    optional_keys: tuple[str, ...] = ()

    def __init__(self, config: BartConfig):
        super().__init__()
        self.config = config
        self.model = BartModel(config)
        self.classification_head = BartClassificationHead(config.d_model, config.num_labels)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        encoder_states = self.model.encode(input_ids)
        decoder_ids = torch.cat(
            [torch.full_like(input_ids[:, :1], self.config.decoder_start_token_id), input_ids[:, :-1]], dim=1
        )
        hidden = self.model.decode(decoder_ids, self.model.start_decoder(encoder_states))
        return self.classification_head(hidden[:, -1])
