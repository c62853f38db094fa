"""UniCRS: a frozen DialoGPT steered by knowledge-enhanced prompts.

A RoBERTa encoder reads the dialogue; a prompt encoder (`KGPrompt`) fuses
its token states with R-GCN entity embeddings into per-layer prompt
keys/values for DialoGPT. One prompt encoder is trained for recommendation
(the last hidden state scores all entities), one for conversation.

Checkpoint layout: `unicrs_rec_<dataset>/model.pt` and
`unicrs_conv_<dataset>/model.pt`, each a `KGPrompt` state dict (without
the graph's edge tensors). DialoGPT-small and RoBERTa-base are the
published base models, extended by the special tokens below.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import torch
from torch import nn
from torch.nn import functional as F

from crs.neural.barcor import speaker_texts
from crs.neural.decoding import DecodingRules, greedy
from crs.neural.kg import KnowledgeGraph
from crs.neural.layers import RGCNConv
from crs.neural.networks import GPT2LMHeadModel, RobertaModel, gpt2_forward, prompt_cache
from crs.neural.reference import fill_placeholders
from crs.neural.system import NeuralCRS, Turn
from crs.neural.text import Encoder, pad_length
from crs.neural.variants import RuntimeOptions, Variant
from crs.neural.weights import CheckpointMismatch, load_lenient, read_state_dict

# The token standing for a masked movie in the training dialogues.
MOVIE_TOKEN = {"redial": "<movie>", "opendialkg": "<mask>"}
# CRS Arena fills this token of a generated reply with the recommended items.
ARENA_FILL_TOKEN = "<pad>"
SYSTEM_PROMPT = "System:"


def gpt2_special_tokens(dataset: str) -> dict:
    return {"pad_token": "<pad>", "additional_special_tokens": [MOVIE_TOKEN[dataset]]}


def roberta_special_tokens(dataset: str) -> dict:
    return {"additional_special_tokens": [MOVIE_TOKEN[dataset]]}


def _mlp(width: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(width, width // 2), nn.ReLU(), nn.Linear(width // 2, width))


class KGPrompt(nn.Module):
    """Parameter names of the original `KGPrompt` (built, as in CRS Arena, without prefix prompts)."""

    # Prefix prompts trained alongside are not part of the module CRS Arena built, so they
    # were never used there. (The graph's edges a checkpoint carries: `checkpoint_edges`.)
    ignored_keys = (r"^(rec|conv)_prefix_(embeds$|proj\.)",)

    def __init__(self, hidden_size: int, token_hidden_size: int, n_head: int, n_layer: int, n_block: int,
                 n_entity: int, num_relations: int, num_bases: int):
        super().__init__()
        self.hidden_size = hidden_size
        self.n_head = n_head
        self.head_dim = hidden_size // n_head
        self.n_layer = n_layer
        self.n_block = n_block
        entity_hidden_size = hidden_size // 2
        self.kg_encoder = RGCNConv(entity_hidden_size, entity_hidden_size, num_relations=num_relations, num_bases=num_bases)
        self.node_embeds = nn.Parameter(torch.empty(n_entity, entity_hidden_size))
        bound = math.sqrt(6.0 / (n_entity + entity_hidden_size))
        nn.init.uniform_(self.node_embeds, -bound, bound)
        self.entity_proj1 = _mlp(entity_hidden_size)
        self.entity_proj2 = nn.Linear(entity_hidden_size, hidden_size)
        self.token_proj1 = _mlp(token_hidden_size)
        self.token_proj2 = nn.Linear(token_hidden_size, hidden_size)
        self.cross_attn = nn.Linear(hidden_size, hidden_size, bias=False)
        self.prompt_proj1 = _mlp(hidden_size)
        self.prompt_proj2 = nn.Linear(hidden_size, n_layer * n_block * hidden_size)
        self.graph_edges: Optional[tuple[torch.Tensor, torch.Tensor]] = None  # set at load

    def entity_embeddings(self, edge_index: torch.Tensor, edge_type: torch.Tensor) -> torch.Tensor:
        nodes = self.node_embeds
        embeds = self.kg_encoder(nodes, edge_index, edge_type) + nodes
        embeds = self.entity_proj1(embeds) + embeds
        return self.entity_proj2(embeds)

    def forward(self, entity_embeds: torch.Tensor, token_embeds: torch.Tensor, output_entity: bool) -> torch.Tensor:
        """Prompt keys/values (layers, 2, batch, heads, length, head_dim) from the mentioned
        entities' embeddings and the text encoder's token states."""
        batch = token_embeds.size(0)
        tokens = self.token_proj2(self.token_proj1(token_embeds) + token_embeds)
        weights = self.cross_attn(tokens) @ entity_embeds.permute(0, 2, 1) / self.hidden_size
        if output_entity:  # one prompt position per entity (recommendation)
            prompt = F.softmax(weights, dim=1).permute(0, 2, 1) @ tokens + entity_embeds
        else:  # one prompt position per token (conversation)
            prompt = F.softmax(weights, dim=2) @ entity_embeds + tokens
        prompt = self.prompt_proj2(self.prompt_proj1(prompt) + prompt)
        length = prompt.size(1)
        prompt = prompt.reshape(batch, length, self.n_layer, self.n_block, self.n_head, self.head_dim)
        return prompt.permute(2, 3, 0, 4, 1, 5)


def checkpoint_edges(state: dict, kg: KnowledgeGraph, source: str) -> tuple[torch.Tensor, torch.Tensor]:
    """The graph edges a prompt encoder runs on; removes them from `state`.

    CRS Arena's module held the edges as parameters built from the KG files, so
    `load_state_dict(strict=False)` replaced them with a checkpoint's own when it
    carried them, and failed when their sizes differed: the same here.
    """
    built = dict(zip(("edge_index", "edge_type"), kg.edges))
    found = {key: state.pop(key) for key in built if key in state}
    shapes = [(key, tuple(found[key].shape), tuple(built[key].shape))
              for key in found if tuple(found[key].shape) != tuple(built[key].shape)]
    if shapes:
        raise CheckpointMismatch(source, shapes=shapes)
    return tuple(found.get(key, built[key]).long() for key in ("edge_index", "edge_type"))


@dataclass
class _Inputs:
    context_ids: list[int]  # DialoGPT ids of the dialogue (truncated, no padding)
    entity_ids: torch.Tensor
    prompt_ids: list[int]  # RoBERTa ids of the prompt text, padded as the original padded them
    token_embeds: torch.Tensor  # RoBERTa states of the padded prompt text
    state: dict = field(default_factory=dict)


class UniCRS(NeuralCRS):
    family = "unicrs"
    accumulate_penalty = True

    def __init__(self, variant: Variant, kg: KnowledgeGraph, encoder: Encoder, prompt_encoder: Encoder,
                 gpt2: GPT2LMHeadModel, roberta: RobertaModel, rec_prompt: KGPrompt, conv_prompt: KGPrompt,
                 linker, items, options: Optional[RuntimeOptions] = None):
        super().__init__(variant.name, variant.dataset, kg, linker, items,
                         entity_max_length=variant.entity_max_length, options=options)
        self.variant = variant
        self.encoder = encoder
        self.prompt_encoder = prompt_encoder
        self.gpt2 = gpt2.eval()
        self.roberta = roberta.eval()
        self.rec_prompt = rec_prompt.eval()
        self.conv_prompt = conv_prompt.eval()
        self.eos_id = encoder.token_id(encoder.eos_token)
        self.bot_prompt = encoder.ids(SYSTEM_PROMPT)
        self.option_ids = [encoder.first_id(letter) for letter in self.options]
        with torch.inference_mode():  # constant at inference: computed once
            self.rec_entities = rec_prompt.entity_embeddings(*(rec_prompt.graph_edges or kg.edges))
            self.conv_entities = conv_prompt.entity_embeddings(*(conv_prompt.graph_edges or kg.edges))

    @classmethod
    def build_prompt(cls, variant: Variant, kg: KnowledgeGraph, gpt2: GPT2LMHeadModel, roberta: RobertaModel) -> KGPrompt:
        config = gpt2.config
        return KGPrompt(config.n_embd, roberta.config.hidden_size, config.n_head, config.n_layer, 2,
                        n_entity=kg.num_entities + 1, num_relations=kg.num_relations, num_bases=variant.num_bases)

    @classmethod
    def load(cls, variant: Variant, rec_dir: Path, conv_dir: Path, kg: KnowledgeGraph, encoder: Encoder,
             prompt_encoder: Encoder, gpt2: GPT2LMHeadModel, roberta: RobertaModel, linker, items,
             options: Optional[RuntimeOptions] = None) -> "UniCRS":
        prompts, reports = [], []
        for folder in (rec_dir, conv_dir):
            prompt = cls.build_prompt(variant, kg, gpt2, roberta)
            source = str(folder / "model.pt")
            state = read_state_dict(folder / "model.pt")
            prompt.graph_edges = checkpoint_edges(state, kg, source)
            # CRS Arena loaded these with load_state_dict(strict=False): nothing but a shape is fatal.
            reports.append(load_lenient(prompt, state, source))
            prompts.append(prompt)
        system = cls(variant, kg, encoder, prompt_encoder, gpt2, roberta, *prompts, linker, items, options)
        system.load_reports = [*getattr(gpt2, "load_reports", []), *getattr(roberta, "load_reports", []), *reports]
        return system

    def prepare(self, turns: list[Turn], entities: list[int]) -> _Inputs:
        texts = speaker_texts(turns)
        eos = self.encoder.eos_token
        context_ids = self.encoder.encode(eos.join(texts) + eos, self.variant.context_max_length)
        limit = self.variant.context_max_length
        prompt_ids = self.prompt_encoder.encode(self.prompt_encoder.sep_token.join(texts), limit)
        # The prompt encoder's padded positions feed the prompt too, so padding is kept here.
        padded = pad_length(len(prompt_ids), limit)
        mask = [1] * len(prompt_ids) + [0] * (padded - len(prompt_ids))
        prompt_ids = prompt_ids + [self.prompt_encoder.pad_token_id] * (padded - len(prompt_ids))
        token_embeds = self.roberta(input_ids=torch.tensor([prompt_ids]),
                                    attention_mask=torch.tensor([mask])).last_hidden_state
        entity_ids = torch.tensor([entities or [self.kg.pad_id]])
        return _Inputs(context_ids, entity_ids, prompt_ids, token_embeds)

    def _prefill(self, inputs: _Inputs) -> torch.Tensor:
        """Conversation prompt + dialogue + "System:" through DialoGPT; logits of the first reply token."""
        if "logits" not in inputs.state:
            prompt = self.conv_prompt(self.conv_entities[inputs.entity_ids], inputs.token_embeds, output_entity=False)
            ids, offset = self.generation_layout(inputs)
            cache = prompt_cache(prompt)
            hidden = gpt2_forward(self.gpt2, ids, offset, cache)
            inputs.state.update(cache=cache, ids=ids, next_position=offset + len(ids))
            inputs.state["logits"] = self.gpt2.lm_head(hidden)[0]
        return inputs.state["logits"]

    def generation_layout(self, inputs: _Inputs) -> tuple[list[int], int]:
        """The ids DialoGPT reads before its reply (dialogue + "System:") and how many padding
        positions precede them: the original left-padded to a fixed length and let positions
        count the padding."""
        ids = inputs.context_ids + self.bot_prompt
        limit = self.variant.context_max_length + len(self.bot_prompt)
        return ids, pad_length(len(ids), limit) - len(ids)

    def option_scores(self, inputs: _Inputs) -> torch.Tensor:
        rules = DecodingRules(eos_token_id=self.eos_id, min_new_tokens=1)
        ids = inputs.context_ids + self.bot_prompt
        return rules.apply(self._prefill(inputs).float(), ids, 0, len(ids) + 1)[self.option_ids]

    def generate(self, inputs: _Inputs) -> str:
        first = self._prefill(inputs)
        state = inputs.state

        def step(token: int) -> torch.Tensor:
            position = state["next_position"]
            state["next_position"] += 1
            return self.gpt2.lm_head(gpt2_forward(self.gpt2, [token], position, state["cache"]))[0]

        rules = DecodingRules(eos_token_id=self.eos_id, no_repeat_ngram_size=3)
        new, _ = greedy(first, step, state["ids"], rules, self.runtime.response_limit(self.variant.resp_max_length))
        text = self.encoder.decode(self.bot_prompt + new, skip_special_tokens=False)
        text = text[text.rfind(SYSTEM_PROMPT) + len(SYSTEM_PROMPT) + 1 :].replace(self.encoder.eos_token, "")
        return self._fill_items(inputs, text).strip()

    def _fill_items(self, inputs: _Inputs, text: str) -> str:
        """Put recommended item names where the reply has a movie placeholder."""
        if self.runtime.reference:  # only "<pad>", by the graph's names of the 50 best
            if ARENA_FILL_TOKEN not in text:
                return text
            return fill_placeholders(text, [self.kg.id2entity.get(e, str(e)) for e in self.rank(inputs, 50)])
        tokens = [t for t in dict.fromkeys((ARENA_FILL_TOKEN, MOVIE_TOKEN[self.dataset])) if t in text]
        if not tokens:
            return text
        ranked = iter(self.rank(inputs, 50))
        for token in tokens:
            while token in text:
                entity = next(ranked, None)
                name = self._items(entity).title if entity is not None else ""
                text = text.replace(token, name, 1)
        return text

    def rank(self, inputs: _Inputs, k: int) -> list[int]:
        prompt = self.rec_prompt(self.rec_entities[inputs.entity_ids], inputs.token_embeds, output_entity=True)
        ids = inputs.context_ids
        hidden = gpt2_forward(self.gpt2, ids, 0, prompt_cache(prompt))
        scores = (hidden[0] @ self.rec_entities.T)[self.kg.item_tensor]
        top = torch.topk(scores, k=min(k, scores.numel())).indices
        return self.kg.item_tensor[top].tolist()
