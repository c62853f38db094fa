"""Random-weight checkpoints in the exact published layout (a test fixture).

For tests (tiny sizes) and latency benchmarks (the real sizes), where the
published checkpoints cannot be downloaded. Writes, under a models folder,
the twelve checkpoint folders and the three base models (tokenizers trained
locally with `tokenizers` on the dialogue texts, configs, weights), in the
formats the originals use: `model.pt` state dicts, Hugging Face folders with
`config.json` + weights (tied embedding copies included, as older library
versions saved them), old-style GPT-2 and RoBERTa base checkpoints.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

import torch

from crs.checkpoints import base_dir
from crs.neural.kbrd import KBRDRecommender
from crs.neural.kg import KnowledgeGraph, default_kg_dir
from crs.neural.networks import (
    BartForConditionalGeneration,
    BartForSequenceClassification,
    GPT2Config,
    GPT2LMHeadModel,
    KBRDGenerator,
    RobertaConfig,
    RobertaModel,
    bart_config,
)
from crs.neural.variants import BART_BASE, DIALOGPT_SMALL, ROBERTA_BASE, VARIANTS

BART_SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
GPT2_SPECIALS = ["<|endoftext|>"]


@dataclass(frozen=True)
class Sizes:
    bart_vocab: int
    gpt2_vocab: int
    bart_width: int
    bart_layers: int
    bart_heads: int
    bart_ffn: int
    kbrd_width: int = 300
    kbrd_layers: int = 2
    kbrd_heads: int = 2
    gpt2_width: int = 768
    gpt2_layers: int = 12
    gpt2_heads: int = 12
    roberta_width: int = 768
    roberta_layers: int = 12
    roberta_heads: int = 12
    roberta_ffn: int = 3072

    @classmethod
    def real(cls) -> "Sizes":
        """bart-base, DialoGPT-small, roberta-base and KBRD's published sizes."""
        return cls(bart_vocab=50265, gpt2_vocab=50257, bart_width=768, bart_layers=6, bart_heads=12, bart_ffn=3072)

    @classmethod
    def tiny(cls) -> "Sizes":
        return cls(
            bart_vocab=1000, gpt2_vocab=1000, bart_width=32, bart_layers=2, bart_heads=4, bart_ffn=64,
            kbrd_width=24, kbrd_layers=1, kbrd_heads=2, gpt2_width=32, gpt2_layers=2, gpt2_heads=4,
            roberta_width=32, roberta_layers=2, roberta_heads=4, roberta_ffn=64,
        )


def corpus(limit: Optional[int] = None) -> list[str]:
    """Dialogue texts and plots from the catalogs, to train tokenizers on."""
    texts: list[str] = []
    for dataset in ("redial", "opendialkg"):
        folder = default_kg_dir(dataset)
        path = folder.parent / f"{dataset}_eval" / "test_data_processed.jsonl"
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    row = json.loads(line)
                    texts.extend(row.get("context") or [])
                    texts.append(row.get("resp") or "")
        info = folder / "id2info.json"
        if info.exists():
            for item in json.loads(info.read_text(encoding="utf-8")).values():
                texts.append(" ".join(str(item.get(k) or "") for k in ("name", "plot")))
    texts = [t for t in texts if t]
    return texts[:limit] if limit else texts


def write_tokenizer(folder: Path, kind: str, vocab_size: int, texts: list[str]) -> int:
    """A byte-level BPE tokenizer of exactly `vocab_size` entries (padded with unreachable
    entries when the corpus yields fewer merges). Returns the end-of-text id."""
    from tokenizers import ByteLevelBPETokenizer

    specials = BART_SPECIALS if kind in ("bart", "roberta") else GPT2_SPECIALS
    trainer = ByteLevelBPETokenizer()
    trainer.train_from_iterator(texts, vocab_size=vocab_size, min_frequency=1, special_tokens=specials,
                                show_progress=False)
    folder.mkdir(parents=True, exist_ok=True)
    trainer.save_model(str(folder))
    vocab = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
    for index in range(len(vocab), vocab_size):
        vocab[f"\u0120<unused{index}>"] = index  # never produced: no merge leads to it
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    if kind == "gpt2":
        config = {"tokenizer_class": "GPT2Tokenizer", "bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>",
                  "unk_token": "<|endoftext|>", "model_max_length": 1024, "add_prefix_space": False}
    else:
        config = {"tokenizer_class": "BartTokenizer" if kind == "bart" else "RobertaTokenizer",
                  "bos_token": "<s>", "eos_token": "</s>", "sep_token": "</s>", "cls_token": "<s>",
                  "unk_token": "<unk>", "pad_token": "<pad>", "mask_token": "<mask>", "model_max_length": 1024}
    (folder / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return vocab[specials[0] if kind == "gpt2" else "</s>"]


def _write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")


def _bart_config(sizes: Sizes, kbrd: bool, **extra) -> dict:
    width, layers, heads, ffn = (
        (sizes.kbrd_width, sizes.kbrd_layers, sizes.kbrd_heads, sizes.kbrd_width) if kbrd
        else (sizes.bart_width, sizes.bart_layers, sizes.bart_heads, sizes.bart_ffn)
    )
    return {
        "model_type": "bart", "vocab_size": sizes.bart_vocab, "d_model": width,
        "encoder_layers": layers, "decoder_layers": layers,
        "encoder_attention_heads": heads, "decoder_attention_heads": heads,
        "encoder_ffn_dim": ffn, "decoder_ffn_dim": ffn, "max_position_embeddings": 1024,
        "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2, "decoder_start_token_id": 2,
        "scale_embedding": False, "activation_function": "gelu", "no_repeat_ngram_size": 3,
        "forced_bos_token_id": None if kbrd else 0, "forced_eos_token_id": None if kbrd else 2, **extra,
    }


def _randomize(module: torch.nn.Module, seed: int) -> None:
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, param in module.named_parameters():
            if param.dim() >= 2:
                param.copy_(torch.randn(param.shape, generator=generator) * 0.05)
            elif name.endswith("weight"):
                param.fill_(1.0)
            else:
                param.copy_(torch.randn(param.shape, generator=generator) * 0.02)


def write_base_models(models_dir: Path, sizes: Sizes, texts: Optional[list[str]] = None) -> None:
    texts = texts if texts is not None else corpus()
    write_tokenizer(base_dir(models_dir, BART_BASE), "bart", sizes.bart_vocab, texts)
    gpt_dir = base_dir(models_dir, DIALOGPT_SMALL)
    eos = write_tokenizer(gpt_dir, "gpt2", sizes.gpt2_vocab, texts)
    gpt_config = {"model_type": "gpt2", "vocab_size": sizes.gpt2_vocab, "n_embd": sizes.gpt2_width,
                  "n_layer": sizes.gpt2_layers, "n_head": sizes.gpt2_heads, "n_positions": 1024, "n_ctx": 1024,
                  "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5, "bos_token_id": eos,
                  "eos_token_id": eos, "initializer_range": 0.02}
    _write_json(gpt_dir / "config.json", gpt_config)
    gpt2 = GPT2LMHeadModel(GPT2Config.from_dict(gpt_config))
    _randomize(gpt2, 1)
    state = dict(gpt2.state_dict())  # the tied head included, as older library versions saved it
    for layer in range(sizes.gpt2_layers):  # old checkpoints carry the causal-mask buffers
        state[f"transformer.h.{layer}.attn.bias"] = torch.ones(1, 1, 8, 8).tril()
        state[f"transformer.h.{layer}.attn.masked_bias"] = torch.tensor(-1e4)
    torch.save(state, gpt_dir / "pytorch_model.bin")
    rob_dir = base_dir(models_dir, ROBERTA_BASE)
    write_tokenizer(rob_dir, "roberta", sizes.bart_vocab, texts)
    rob_config = {"model_type": "roberta", "vocab_size": sizes.bart_vocab, "hidden_size": sizes.roberta_width,
                  "num_hidden_layers": sizes.roberta_layers, "num_attention_heads": sizes.roberta_heads,
                  "intermediate_size": sizes.roberta_ffn, "max_position_embeddings": 514, "type_vocab_size": 1,
                  "layer_norm_eps": 1e-5, "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2,
                  "hidden_act": "gelu", "initializer_range": 0.02}
    _write_json(rob_dir / "config.json", rob_config)
    roberta = RobertaModel(RobertaConfig.from_dict(rob_config), add_pooling_layer=False)
    _randomize(roberta, 2)
    state = {f"roberta.{k}": v for k, v in roberta.state_dict().items()}
    width = sizes.roberta_width
    state.update({"lm_head.dense.weight": torch.zeros(width, width), "lm_head.dense.bias": torch.zeros(width),
                  "lm_head.layer_norm.weight": torch.ones(width), "lm_head.layer_norm.bias": torch.zeros(width),
                  "lm_head.bias": torch.zeros(sizes.bart_vocab)})
    torch.save(state, rob_dir / "pytorch_model.bin")


def write_checkpoints(models_dir: Path, sizes: Sizes, names: Iterable[str] = tuple(VARIANTS),
                      kg_root: Optional[Path] = None, safetensors: bool = False) -> None:
    """Checkpoint folders of `names` (random weights) for the KGs under `kg_root`."""
    models_dir = Path(models_dir)
    for offset, name in enumerate(names):
        variant = VARIANTS[name]
        kg = KnowledgeGraph.load(Path(kg_root) / variant.dataset if kg_root else default_kg_dir(variant.dataset))
        rec_dir, conv_dir = (models_dir / folder for folder in variant.folders)
        rec_dir.mkdir(parents=True, exist_ok=True)
        conv_dir.mkdir(parents=True, exist_ok=True)
        seed = 100 + 10 * offset
        if variant.family == "kbrd":
            recommender = KBRDRecommender(variant.hidden_size, kg.num_relations, variant.num_bases, kg.num_entities)
            _randomize(recommender, seed)
            torch.save(recommender.state_dict(), rec_dir / "model.pt")
            config = _bart_config(sizes, kbrd=True, architectures=["KBRDforConv"])
            generator = KBRDGenerator(bart_config(config), user_hidden_size=variant.entity_hidden_size)
            _randomize(generator, seed + 1)
            _save_hf(conv_dir, config, generator.state_dict(), safetensors)
        elif variant.family == "barcor":
            config = _bart_config(sizes, kbrd=False, architectures=["BartForSequenceClassification"],
                                  id2label={str(i): f"LABEL_{i}" for i in range(2)})
            classifier = BartForSequenceClassification(bart_config(config, num_labels=kg.num_entities))
            _randomize(classifier, seed)
            _save_hf(rec_dir, config, classifier.state_dict(), safetensors)
            config = _bart_config(sizes, kbrd=False, architectures=["BartForConditionalGeneration"])
            generator = BartForConditionalGeneration(bart_config(config))
            _randomize(generator, seed + 1)
            _save_hf(conv_dir, config, generator.state_dict(), safetensors)
        else:
            from crs.neural.unicrs import KGPrompt

            for index, folder in enumerate((rec_dir, conv_dir)):
                prompt = KGPrompt(sizes.gpt2_width, sizes.roberta_width, sizes.gpt2_heads, sizes.gpt2_layers, 2,
                                  n_entity=kg.num_entities + 1, num_relations=kg.num_relations,
                                  num_bases=variant.num_bases)
                _randomize(prompt, seed + index)
                torch.save(_with_training_extras(prompt.state_dict(), kg, sizes.gpt2_width, index == 0, seed + index),
                           folder / "model.pt")


def _with_training_extras(state: dict, kg: KnowledgeGraph, width: int, rec: bool, seed: int) -> dict:
    """A prompt encoder's state as training saved it: with the prefix prompts trained alongside
    (10 positions for recommendation, 20 for conversation) and the graph's edge tensors,
    none of which the module CRS Arena built has a place for."""
    generator = torch.Generator().manual_seed(seed)
    kind, length = ("rec", 10) if rec else ("conv", 20)
    extras = {
        f"{kind}_prefix_embeds": torch.randn(length, width, generator=generator),
        f"{kind}_prefix_proj.0.weight": torch.randn(width // 2, width, generator=generator) * 0.05,
        f"{kind}_prefix_proj.0.bias": torch.zeros(width // 2),
        f"{kind}_prefix_proj.2.weight": torch.randn(width, width // 2, generator=generator) * 0.05,
        f"{kind}_prefix_proj.2.bias": torch.zeros(width),
    }
    edge_index, edge_type = kg.edges
    return {**state, **extras, "edge_index": edge_index.clone(), "edge_type": edge_type.clone()}


def _save_hf(folder: Path, config: dict, state: dict, safetensors: bool) -> None:
    _write_json(folder / "config.json", config)
    if safetensors:
        from safetensors.torch import save_file

        # safetensors refuses shared storage; the tied copies become separate tensors.
        save_file({k: v.contiguous().clone() for k, v in state.items()}, str(folder / "model.safetensors"))
    else:
        torch.save(state, folder / "pytorch_model.bin")


def fabricate(models_dir: Path, sizes: Sizes, names: Iterable[str] = tuple(VARIANTS),
              texts: Optional[list[str]] = None, kg_root: Optional[Path] = None) -> Path:
    """Base models plus checkpoint folders: a models folder the loaders accept."""
    write_base_models(models_dir, sizes, texts)
    write_checkpoints(models_dir, sizes, names, kg_root)
    return Path(models_dir)
