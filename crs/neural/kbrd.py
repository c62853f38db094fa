"""KBRD: an R-GCN over the knowledge graph recommends; a small BART
generates, its logits shifted by a projection of the user representation.

Checkpoint layout: `kbrd_rec_<dataset>/model.pt` (the recommender's state
dict) and `kbrd_conv_<dataset>/` (a Hugging Face folder: config.json plus
weights, `KBRDforConv` parameter names).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import torch
from torch import nn

from crs.neural.decoding import DecodingRules, GenerationDefaults, bart_reply_rules, greedy
from crs.neural.kg import KnowledgeGraph
from crs.neural.layers import EntityAttention, RGCNConv
from crs.neural.networks import BART_OPTIONAL_KEYS, BartSteps, KBRDGenerator, bart_config, encode_bart
from crs.neural.system import NeuralCRS, Turn
from crs.neural.text import Encoder, pad_length
from crs.neural.variants import RuntimeOptions, Variant
from crs.neural.weights import load_lenient, load_strict, read_json, read_state_dict


class KBRDRecommender(nn.Module):
    """Parameter names of the original `KBRDforRec`."""

    def __init__(self, hidden_size: int, num_relations: int, num_bases: int, num_entities: int):
        super().__init__()
        self.kg_encoder = RGCNConv(hidden_size, hidden_size, num_relations=num_relations, num_bases=num_bases)
        self.node_embeds = nn.Parameter(torch.empty(num_entities, hidden_size))
        bound = math.sqrt(6.0 / (num_entities + hidden_size))
        nn.init.uniform_(self.node_embeds, -bound, bound)
        self.special_token_embeddings = nn.Parameter(torch.zeros(1, hidden_size), requires_grad=False)
        self.attn = EntityAttention(hidden_size)

    def node_embeddings(self, edge_index: torch.Tensor, edge_type: torch.Tensor) -> torch.Tensor:
        """Entity embeddings after the R-GCN, plus the padding entity's (zeros) at the end."""
        nodes = self.kg_encoder(self.node_embeds, edge_index, edge_type)
        return torch.cat([nodes, self.special_token_embeddings], dim=0)

    def user_embedding(self, nodes: torch.Tensor, entity_ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.attn(nodes[entity_ids], mask)


@dataclass
class _Inputs:
    context_ids: list[int]
    padded_ids: list[int]  # as the original's encoder saw them (for its n-gram rule)
    entity_ids: list[int]  # the user's entities as the recommender reads them (padding entity when none)
    user: torch.Tensor
    encoder_states: torch.Tensor


class KBRD(NeuralCRS):
    family = "kbrd"
    accumulate_penalty = True

    def __init__(self, variant: Variant, kg: KnowledgeGraph, encoder: Encoder, recommender: KBRDRecommender,
                 generator: KBRDGenerator, defaults: GenerationDefaults, linker, items,
                 options: Optional[RuntimeOptions] = None):
        super().__init__(variant.name, variant.dataset, kg, linker, items,
                         entity_max_length=variant.entity_max_length, options=options)
        self.variant = variant
        self.encoder = encoder
        self.recommender = recommender.eval()
        self.generator = generator.eval()
        self.defaults = defaults
        with torch.inference_mode():
            self.nodes = recommender.node_embeddings(*kg.edges)  # constant at inference: computed once
        self.option_ids = [encoder.first_id(letter) for letter in self.options]

    @classmethod
    def load(cls, variant: Variant, rec_dir: Path, conv_dir: Path, kg: KnowledgeGraph, encoder: Encoder,
             linker, items, options: Optional[RuntimeOptions] = None) -> "KBRD":
        recommender = KBRDRecommender(variant.hidden_size, kg.num_relations, variant.num_bases, kg.num_entities)
        # As CRS Arena loaded them: the recommender with torch's strict load_state_dict, the
        # generator with from_pretrained (missing and unexpected keys reported, not fatal).
        reports = [load_strict(recommender, read_state_dict(rec_dir / "model.pt"), str(rec_dir / "model.pt"))]
        config = read_json(conv_dir / "config.json")
        generator = KBRDGenerator(bart_config(config), user_hidden_size=variant.entity_hidden_size)
        reports.append(load_lenient(generator, read_state_dict(conv_dir), str(conv_dir),
                                    optional_keys=BART_OPTIONAL_KEYS))
        generation = conv_dir / "generation_config.json"
        defaults = GenerationDefaults.from_configs(config, read_json(generation) if generation.is_file() else {})
        system = cls(variant, kg, encoder, recommender, generator, defaults, linker, items, options)
        system.load_reports = reports
        return system

    def prepare(self, turns: list[Turn], entities: list[int]) -> _Inputs:
        context = self.encoder.sep_token.join(turn.text for turn in turns)
        ids = self.encoder.encode(context, self.variant.context_max_length)
        padded = ids + [self.encoder.pad_token_id] * (pad_length(len(ids), self.variant.context_max_length) - len(ids))
        entity_list = list(entities) or [self.kg.pad_id]
        entity_ids = torch.tensor([entity_list])
        user = self.recommender.user_embedding(self.nodes, entity_ids, entity_ids.ne(self.kg.pad_id))
        return _Inputs(ids, padded, entity_list, user, encode_bart(self.generator, ids))

    def _stepper(self, inputs: _Inputs) -> BartSteps:
        return BartSteps(self.generator, inputs.encoder_states, inputs.user)

    def _start(self) -> int:
        return self.generator.config.decoder_start_token_id

    def option_scores(self, inputs: _Inputs) -> torch.Tensor:
        # Two new tokens with the config's rules; the letter scores are those of the second.
        rules = DecodingRules(
            eos_token_id=self.generator.config.eos_token_id,
            no_repeat_ngram_size=self.defaults.no_repeat_ngram_size,
            min_new_tokens=max(2, self.defaults.min_length - 1),
            forced_bos_token_id=self.defaults.forced_bos_token_id,
            forced_eos_token_id=self.defaults.forced_eos_token_id,
        )
        step = self._stepper(inputs)
        _, scores = greedy(step(self._start()), step, [self._start()], rules, 2, keep_scores=2)
        return scores[-1][self.option_ids]

    def generate(self, inputs: _Inputs) -> str:
        rules = bart_reply_rules(self.generator.config.eos_token_id, self.defaults, inputs.padded_ids)
        step = self._stepper(inputs)
        limit = self.runtime.response_limit(self.variant.resp_max_length - 1)
        new, _ = greedy(step(self._start()), step, [self._start()], rules, limit)
        return self.encoder.decode(new, skip_special_tokens=True)

    def rank(self, inputs: _Inputs, k: int) -> list[int]:
        scores = (inputs.user @ self.nodes.T)[0, self.kg.item_tensor]
        top = torch.topk(scores, k=min(k, scores.numel())).indices
        return self.kg.item_tensor[top].tolist()
