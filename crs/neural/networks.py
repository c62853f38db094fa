"""The base networks, as transformers' model classes, and how the systems step them.

BARCOR uses `BartForSequenceClassification` and `BartForConditionalGeneration`,
KBRD a `BartForConditionalGeneration` whose logits are shifted by a projection
of the user representation (`KBRDGenerator`), UniCRS `GPT2LMHeadModel`
(DialoGPT) with prompt keys/values in its cache and `RobertaModel`. Decoding is
token by token with the library's key/value caches; the rules that pick each
token are in `crs.neural.decoding` (see BENCHMARKS.md for why these classes
replaced hand-written ones).
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

import torch
from torch import nn
from transformers import (
    BartConfig,
    BartForConditionalGeneration,
    BartForSequenceClassification,
    DynamicCache,
    EncoderDecoderCache,
    GPT2Config,
    GPT2LMHeadModel,
    RobertaConfig,
    RobertaModel,
)
from transformers.modeling_outputs import BaseModelOutput

# What published checkpoints carry besides the parameters of these classes (no weights in them).
BART_OPTIONAL_KEYS = ("final_logits_bias",)  # the library tolerates its absence (zeros)
GPT2_IGNORED_KEYS = (r"(^|\.)attn\.(bias|masked_bias)$",)  # causal-mask buffers of old checkpoints
ROBERTA_IGNORED_KEYS = (r"^lm_head\.", r"^pooler\.", r"^embeddings\.(position_ids|token_type_ids)$")

_LABEL_KEYS = ("id2label", "label2id", "num_labels")


def _without_labels(data: Mapping[str, Any]) -> dict:
    return {k: v for k, v in data.items() if k not in _LABEL_KEYS}


def bart_config(data: Mapping[str, Any], num_labels: Optional[int] = None) -> BartConfig:
    """A BART configuration from a checkpoint's config.json (classifier size from `num_labels`)."""
    if num_labels is None:
        return BartConfig.from_dict(dict(data))
    return BartConfig.from_dict({**_without_labels(data), "num_labels": num_labels})


class KBRDGenerator(BartForConditionalGeneration):
    """KBRD's conversation model: BART whose next-token logits are shifted by
    `rec_proj(user representation)`. Parameter names are those of the original
    (`model.*`, `rec_proj.*`, `final_logits_bias`)."""

    def __init__(self, config: BartConfig, user_hidden_size: int):
        super().__init__(config)
        self.rec_proj = nn.Linear(user_hidden_size, config.vocab_size)


class BartSteps:
    """Token-by-token decoding of a BART generator from fixed encoder states."""

    def __init__(self, model: BartForConditionalGeneration, encoder_states: torch.Tensor,
                 user: Optional[torch.Tensor] = None):
        self.model = model
        self.encoder_outputs = BaseModelOutput(last_hidden_state=encoder_states)
        self.cache = EncoderDecoderCache(DynamicCache(), DynamicCache())
        self.user = user

    def __call__(self, token: int) -> torch.Tensor:
        """Feed one decoder token; the logits (vocabulary) for the next one."""
        out = self.model(encoder_outputs=self.encoder_outputs, decoder_input_ids=torch.tensor([[token]]),
                         past_key_values=self.cache, use_cache=True)
        logits = out.logits[0, -1]
        if self.user is not None:
            logits = logits + self.model.rec_proj(self.user)[0]
        return logits


def encode_bart(model: BartForConditionalGeneration, ids: list[int]) -> torch.Tensor:
    """The encoder's last hidden states for one unpadded sequence."""
    return model.get_encoder()(input_ids=torch.tensor([ids])).last_hidden_state


def prompt_cache(prompt: Optional[torch.Tensor]) -> DynamicCache:
    """A fresh cache holding per-layer prompt keys/values, from a
    (layers, 2, batch, heads, length, head_dim) tensor; the prompt is visible
    to every position that follows it."""
    cache = DynamicCache()
    if prompt is not None:
        for layer in range(prompt.size(0)):
            cache.update(prompt[layer, 0], prompt[layer, 1], layer)
    return cache


def gpt2_forward(model: GPT2LMHeadModel, ids: list[int], start: int, cache: DynamicCache) -> torch.Tensor:
    """Last hidden state of `ids` placed at positions start.. after what `cache` holds (extended in place)."""
    positions = torch.arange(start, start + len(ids)).unsqueeze(0)
    out = model.transformer(input_ids=torch.tensor([ids]), position_ids=positions, past_key_values=cache,
                            use_cache=True)
    return out.last_hidden_state[:, -1]


__all__ = [
    "BART_OPTIONAL_KEYS", "GPT2_IGNORED_KEYS", "ROBERTA_IGNORED_KEYS", "BartConfig", "BartForConditionalGeneration",
    "BartForSequenceClassification", "BartSteps", "GPT2Config", "GPT2LMHeadModel", "KBRDGenerator", "RobertaConfig",
    "RobertaModel", "bart_config", "encode_bart", "gpt2_forward", "prompt_cache",
]
