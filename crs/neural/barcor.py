"""BARCOR: a BART sequence classifier over the KG entities recommends, a
BART encoder-decoder generates. Both read the dialogue as "User: ..." /
"System: ..." turns joined by the separator token.

Checkpoint layout: `barcor_rec_<dataset>/` and `barcor_conv_<dataset>/`,
both Hugging Face folders (config.json plus weights).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import torch

from crs.neural.decoding import DecodingRules, GenerationDefaults, bart_reply_rules, greedy
from crs.neural.kg import KnowledgeGraph
from crs.neural.reference import barcor_reply
from crs.neural.networks import (
    BART_OPTIONAL_KEYS,
    BartForConditionalGeneration,
    BartForSequenceClassification,
    BartSteps,
    bart_config,
    encode_bart,
)
from crs.neural.system import NeuralCRS, Turn
from crs.neural.text import Encoder, pad_length
from crs.neural.variants import RuntimeOptions, Variant
from crs.neural.weights import load_lenient, read_json, read_state_dict

SPEAKERS = {True: "User: ", False: "System: "}


def speaker_texts(turns: list[Turn]) -> list[str]:
    return [SPEAKERS[turn.is_user] + turn.text for turn in turns if turn.text]


@dataclass
class _Inputs:
    context_ids: list[int]
    padded_ids: list[int]
    cache: dict = field(default_factory=dict)


class BARCOR(NeuralCRS):
    family = "barcor"
    accumulate_penalty = False  # BARCOR sets the chosen letter's penalty instead of adding it

    def __init__(self, variant: Variant, kg: KnowledgeGraph, encoder: Encoder,
                 recommender: BartForSequenceClassification, generator: BartForConditionalGeneration,
                 defaults: GenerationDefaults, linker, items, options: Optional[RuntimeOptions] = None):
        # BARCOR reads no entities; the linker is still used for nothing but keeps one interface.
        super().__init__(variant.name, variant.dataset, kg, linker, items, options=options)
        self.variant = variant
        self.encoder = encoder
        self.recommender = recommender.eval()
        self.generator = generator.eval()
        self.defaults = defaults
        self.option_ids = [encoder.first_id(f" {letter}") for letter in self.options]

    @classmethod
    def load(cls, variant: Variant, rec_dir: Path, conv_dir: Path, kg: KnowledgeGraph, encoder: Encoder,
             linker, items, options: Optional[RuntimeOptions] = None) -> "BARCOR":
        # The original sizes the classifier by the KG, whatever the config's labels say.
        rec_config = bart_config(read_json(rec_dir / "config.json"), num_labels=kg.num_entities)
        recommender = BartForSequenceClassification(rec_config)
        # Both were loaded with from_pretrained in CRS Arena: missing and unexpected keys are reported.
        reports = [load_lenient(recommender, read_state_dict(rec_dir), str(rec_dir))]
        conv_config = read_json(conv_dir / "config.json")
        generator = BartForConditionalGeneration(bart_config(conv_config))
        reports.append(load_lenient(generator, read_state_dict(conv_dir), str(conv_dir),
                                    optional_keys=BART_OPTIONAL_KEYS))
        generation = conv_dir / "generation_config.json"
        defaults = GenerationDefaults.from_configs(conv_config, read_json(generation) if generation.is_file() else {})
        system = cls(variant, kg, encoder, recommender, generator, defaults, linker, items, options)
        system.load_reports = reports
        return system

    def _entities(self, turns: list[Turn]) -> list[int]:
        return []  # BARCOR's models read text only

    def prepare(self, turns: list[Turn], entities: list[int]) -> _Inputs:
        context = self.encoder.sep_token.join(speaker_texts(turns))
        ids = self.encoder.encode(context, self.variant.context_max_length)
        padded = ids + [self.encoder.pad_token_id] * (pad_length(len(ids), self.variant.context_max_length) - len(ids))
        return _Inputs(ids, padded)

    def _encoder_states(self, inputs: _Inputs) -> torch.Tensor:
        if "states" not in inputs.cache:
            inputs.cache["states"] = encode_bart(self.generator, inputs.context_ids)
        return inputs.cache["states"]

    def _run(self, inputs: _Inputs, rules: DecodingRules, max_new: int, keep: int = 0):
        step = BartSteps(self.generator, self._encoder_states(inputs))
        start = self.generator.config.decoder_start_token_id
        return greedy(step(start), step, [start], rules, max_new, keep_scores=keep)

    def option_scores(self, inputs: _Inputs) -> torch.Tensor:
        # Five new tokens under the config's rules; the letters are scored at the fourth.
        rules = DecodingRules(
            eos_token_id=self.generator.config.eos_token_id,
            no_repeat_ngram_size=self.defaults.no_repeat_ngram_size,
            min_new_tokens=max(5, self.defaults.min_length - 1),
            forced_bos_token_id=self.defaults.forced_bos_token_id,
            forced_eos_token_id=self.defaults.forced_eos_token_id,
        )
        _, scores = self._run(inputs, rules, 5, keep=5)
        return scores[-2][self.option_ids]

    def generate(self, inputs: _Inputs) -> str:
        rules = bart_reply_rules(self.generator.config.eos_token_id, self.defaults, inputs.padded_ids)
        new, _ = self._run(inputs, rules, self.runtime.response_limit(self.variant.resp_max_length - 1))
        text = self.encoder.decode(new, skip_special_tokens=True)
        return barcor_reply(text) if self.runtime.reference else _strip_speaker(text)

    def rank(self, inputs: _Inputs, k: int) -> list[int]:
        # The library's classifier reads the decoder state at the last end token: here the last token.
        logits = self.recommender(input_ids=torch.tensor([inputs.context_ids])).logits[0]
        scores = logits[self.kg.item_tensor]
        top = torch.topk(scores, k=min(k, scores.numel())).indices
        return self.kg.item_tensor[top].tolist()


def _strip_speaker(text: str) -> str:
    """Drop the "System:" prefix the generator was trained to start with (and only that)."""
    text = text.strip()
    for prefix in ("System:", "System;", "System"):
        if text.startswith(prefix):
            return text[len(prefix):].lstrip(" :;").strip()
    return text
