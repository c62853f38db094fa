"""Building a system from its checkpoint folders, base models and KG.

Callers go through `crs.neural.specs`, which checks the files first and
passes `shared`, a process-wide cache, so that tokenizers, graphs and base
models are loaded once however many systems and sessions use them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import torch
from torch import nn

from arena.runtime.imports import heavy_imports
from crs.neural.kg import KnowledgeGraph
from crs.neural.networks import (
    GPT2_IGNORED_KEYS,
    ROBERTA_IGNORED_KEYS,
    GPT2Config,
    GPT2LMHeadModel,
    RobertaConfig,
    RobertaModel,
)
from crs.neural.system import catalog_items, catalog_linker
from crs.neural.text import Encoder, load_tokenizer
from crs.neural.variants import RuntimeOptions, Variant
from crs.neural.weights import load_lenient, read_json, read_state_dict, strip_prefix

NEW_TOKEN_SEED = 42


def load_kg(directory: Path) -> KnowledgeGraph:
    kg = KnowledgeGraph.load(directory)
    kg.edges  # build the edge tensors now, under the loader's lock
    return kg


def resize_embedding(embedding: nn.Embedding, size: int, std: float) -> nn.Embedding:
    """The table grown to `size` rows for tokens added to the tokenizer.

    As in the original setup, new rows are drawn from N(0, std) (the base
    model's initializer range); a fixed seed makes them the same in every run.
    """
    old = embedding.weight.data
    if size == old.size(0):
        return embedding
    if size < old.size(0):
        weight = old[:size].clone()
    else:
        generator = torch.Generator().manual_seed(NEW_TOKEN_SEED)
        extra = torch.randn(size - old.size(0), old.size(1), generator=generator) * std
        weight = torch.cat([old, extra.to(old.dtype)], dim=0)
    resized = nn.Embedding(size, old.size(1), padding_idx=embedding.padding_idx)
    resized.weight = nn.Parameter(weight, requires_grad=False)
    return resized


def load_gpt2(path: Path, vocab_size: int) -> GPT2LMHeadModel:
    config = GPT2Config.from_dict(read_json(path / "config.json"))
    model = GPT2LMHeadModel(config)
    state = read_state_dict(path)
    if not any(key.startswith("transformer.") for key in state):  # saved without the LM head wrapper
        state = {(k if k.startswith("lm_head.") else f"transformer.{k}"): v for k, v in state.items()}
    # from_pretrained in CRS Arena: missing and unexpected keys are reported, not fatal.
    report = load_lenient(model, state, str(path), ignored_keys=GPT2_IGNORED_KEYS)
    model.transformer.wte = resize_embedding(model.transformer.wte, vocab_size, config.initializer_range)
    model.lm_head.weight = model.transformer.wte.weight  # the head stays tied to the grown table
    model.config.vocab_size = vocab_size
    model.load_reports = [report]
    return model.eval().requires_grad_(False)


def load_roberta(path: Path, vocab_size: int) -> RobertaModel:
    config = RobertaConfig.from_dict(read_json(path / "config.json"))
    model = RobertaModel(config, add_pooling_layer=False)
    report = load_lenient(model, strip_prefix(read_state_dict(path), "roberta."), str(path),
                          ignored_keys=ROBERTA_IGNORED_KEYS)
    model.embeddings.word_embeddings = resize_embedding(model.embeddings.word_embeddings, vocab_size,
                                                        config.initializer_range)
    model.config.vocab_size = vocab_size
    model.load_reports = [report]
    return model.eval().requires_grad_(False)


def build(variant: Variant, models_dir: Path, base: dict[str, Path], kg: KnowledgeGraph, catalog: Any,
          options: RuntimeOptions, shared: Callable[[tuple, Callable[[], Any]], Any]):
    if options.reference:  # the original's rule over every graph name
        from crs.neural.reference import reference_linker

        linker = reference_linker(kg)
    else:
        linker = catalog_linker(catalog, kg)
    items = catalog_items(catalog, kg, variant.dataset)
    rec_dir, conv_dir = (Path(models_dir) / folder for folder in variant.folders)
    quantize = options.quantizes(variant.family)

    def tokenizer(repo_id: str, special: dict | None = None) -> Encoder:
        key = ("tokenizer", str(base[repo_id]), repr(sorted((special or {}).items())))
        return shared(key, lambda: Encoder(load_tokenizer(base[repo_id], special)))

    if variant.family == "kbrd":
        with heavy_imports():
            from crs.neural.kbrd import KBRD

        system = KBRD.load(variant, rec_dir, conv_dir, kg, tokenizer(variant.tokenizer), linker, items, options)
    elif variant.family == "barcor":
        with heavy_imports():
            from crs.neural.barcor import BARCOR

        system = BARCOR.load(variant, rec_dir, conv_dir, kg, tokenizer(variant.tokenizer), linker, items, options)
    elif variant.family == "unicrs":
        with heavy_imports():
            from crs.neural.unicrs import UniCRS, gpt2_special_tokens, roberta_special_tokens

        encoder = tokenizer(variant.model, gpt2_special_tokens(variant.dataset))
        prompt_encoder = tokenizer(variant.text_encoder, roberta_special_tokens(variant.dataset))
        model_dir, text_dir = base[variant.model], base[variant.text_encoder]
        gpt2 = shared(("gpt2", str(model_dir), len(encoder), quantize),
                      lambda: _maybe_quantize(load_gpt2(model_dir, len(encoder)), quantize))
        roberta = shared(("roberta", str(text_dir), len(prompt_encoder), quantize),
                         lambda: _maybe_quantize(load_roberta(text_dir, len(prompt_encoder)), quantize))
        system = UniCRS.load(variant, rec_dir, conv_dir, kg, encoder, prompt_encoder, gpt2, roberta, linker, items,
                             options)
    else:
        raise ValueError(f"unknown family {variant.family!r}")
    if quantize:  # the shared base models were quantized when built
        for attribute in ("generator", "recommender", "rec_prompt", "conv_prompt"):
            module = getattr(system, attribute, None)
            if isinstance(module, nn.Module) and not (variant.family == "kbrd" and attribute == "recommender"):
                _maybe_quantize(module, True)
    if catalog is not None and not options.reference:  # the original passed its replies on unchanged
        from crs.reply_check import enforce_shown_titles

        system.reply_check = lambda text: enforce_shown_titles(text, [], catalog)
    if options.device not in (None, "cpu"):
        system.to_device(options.device)
    return system


def _maybe_quantize(model: nn.Module, quantize: bool) -> nn.Module:
    if not quantize:
        return model
    with heavy_imports():
        from crs.neural.quantize import quantize_model

    return quantize_model(model)
