"""Greedy decoding with the logits rules the original systems generated with.

The originals call Hugging Face `generate` with greedy search; the rules that
change which token wins are re-implemented here with the same semantics:
no-repeat n-grams over the decoder sequence, over the encoder input, a
minimum number of new tokens (end-of-sequence suppressed), and forced first
and last tokens. Every run is bounded by `max_new_tokens`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import torch

NEG_INF = float("-inf")


def _ngram_table(ids: Sequence[int], n: int) -> dict[tuple[int, ...], set[int]]:
    table: dict[tuple[int, ...], set[int]] = {}
    for start in range(len(ids) - n + 1):
        gram = tuple(ids[start : start + n])
        table.setdefault(gram[:-1], set()).add(gram[-1])
    return table


@dataclass
class DecodingRules:
    eos_token_id: int
    no_repeat_ngram_size: int = 0
    encoder_no_repeat_ngram_size: int = 0
    encoder_input_ids: Optional[Sequence[int]] = None
    min_new_tokens: int = 0
    forced_bos_token_id: Optional[int] = None
    forced_eos_token_id: Optional[int] = None

    def __post_init__(self) -> None:
        self._encoder_table = None
        if self.encoder_no_repeat_ngram_size > 0 and self.encoder_input_ids is not None:
            self._encoder_table = _ngram_table(list(self.encoder_input_ids), self.encoder_no_repeat_ngram_size)

    def apply(self, logits: torch.Tensor, sequence: list[int], new_tokens: int, max_length: int) -> torch.Tensor:
        """Processed scores for the next token of `sequence` (1-D logits, modified copy).

        `sequence` is everything the model has seen so far (for encoder-decoder
        models: the decoder ids from the start token); `max_length` the length
        `sequence` may reach.
        """
        scores = logits.clone()
        length = len(sequence)
        n = self.no_repeat_ngram_size
        if n > 0 and length + 1 >= n:
            prefix = tuple(sequence[length - n + 1 :]) if n > 1 else ()
            banned = {
                sequence[i + n - 1]
                for i in range(length - n + 1)
                if tuple(sequence[i : i + n - 1]) == prefix
            }
            if banned:
                scores[list(banned)] = NEG_INF
        if self._encoder_table is not None:
            m = self.encoder_no_repeat_ngram_size
            if length >= m - 1:
                banned = self._encoder_table.get(tuple(sequence[length - m + 1 :]) if m > 1 else ())
                if banned:
                    scores[list(banned)] = NEG_INF
        if new_tokens < self.min_new_tokens:
            scores[self.eos_token_id] = NEG_INF
        if self.forced_bos_token_id is not None and length == 1:
            scores.fill_(NEG_INF)
            scores[self.forced_bos_token_id] = 0.0
        if self.forced_eos_token_id is not None and length == max_length - 1:
            scores.fill_(NEG_INF)
            scores[self.forced_eos_token_id] = 0.0
        return scores


def bart_reply_rules(eos_token_id: int, defaults: "GenerationDefaults", encoder_input_ids: Sequence[int]) -> DecodingRules:
    """The reply-generation rules KBRD and BARCOR share: no repeated 3-grams, none copied from the context."""
    return DecodingRules(
        eos_token_id=eos_token_id,
        no_repeat_ngram_size=3,
        encoder_no_repeat_ngram_size=3,
        encoder_input_ids=encoder_input_ids,
        forced_bos_token_id=defaults.forced_bos_token_id,
        forced_eos_token_id=defaults.forced_eos_token_id,
    )

def greedy(
    first_logits: torch.Tensor,
    step: Callable[[int], torch.Tensor],
    sequence: list[int],
    rules: DecodingRules,
    max_new_tokens: int,
    keep_scores: int = 0,
) -> tuple[list[int], list[torch.Tensor]]:
    """Greedy search. Returns the new tokens and the processed scores of the
    first `keep_scores` steps.

    `first_logits` are the logits for the first new token; `step(token)` feeds
    a chosen token and returns the logits for the next one. Stops at the
    end-of-sequence token (which is kept) or after `max_new_tokens`.
    """
    sequence = list(sequence)
    max_length = len(sequence) + max_new_tokens
    new: list[int] = []
    kept: list[torch.Tensor] = []
    logits = first_logits
    while len(new) < max_new_tokens:
        scores = rules.apply(logits.float(), sequence, len(new), max_length)
        if len(kept) < keep_scores:
            kept.append(scores)
        token = int(torch.argmax(scores))
        new.append(token)
        sequence.append(token)
        if token == rules.eos_token_id or len(new) >= max_new_tokens:
            break
        logits = step(token)
    return new, kept


@dataclass(frozen=True)
class GenerationDefaults:
    """The generation settings a checkpoint's config carries (used where the
    original relied on them rather than passing its own)."""

    no_repeat_ngram_size: int = 0
    forced_bos_token_id: Optional[int] = None
    forced_eos_token_id: Optional[int] = None
    min_length: int = 0

    @classmethod
    def from_configs(cls, *configs: dict) -> "GenerationDefaults":
        """Later configs override earlier ones (config.json, then generation_config.json)."""
        merged: dict = {}
        for config in configs:
            merged.update({k: v for k, v in (config or {}).items()})
        return cls(
            no_repeat_ngram_size=int(merged.get("no_repeat_ngram_size") or 0),
            forced_bos_token_id=merged.get("forced_bos_token_id"),
            forced_eos_token_id=merged.get("forced_eos_token_id"),
            min_length=int(merged.get("min_length") or 0),
        )
