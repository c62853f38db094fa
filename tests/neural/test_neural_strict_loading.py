"""Checkpoints must match the architectures key for key; what is missing is named."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

from arena.config import Settings
from arena.crs_interface import CRSUnavailable
from crs.neural import CheckpointMismatch, neural_specs
from crs.neural.bart import BartConfig, BartForGeneration
from crs.neural.weights import load_strict, read_state_dict


def copy_models(source: Path, target: Path, folders: list[str]) -> Path:
    shutil.copytree(source / "base", target / "base")
    for folder in folders:
        shutil.copytree(source / folder, target / folder)
    return target


def load(name: str, models_dir: Path, hf_cache: Path, options):
    settings = Settings.from_env(models_dir=models_dir)
    spec = next(s for s in neural_specs(settings, options=options, hf_cache_dir=hf_cache) if s.name == name)
    assert spec.check() is None
    return spec.load()


def test_renamed_key_in_kbrd_recommender_is_rejected_by_name(tiny_models, tmp_path, hf_cache, test_options):
    models = copy_models(tiny_models, tmp_path, ["kbrd_rec_redial", "kbrd_conv_redial"])
    path = models / "kbrd_rec_redial" / "model.pt"
    state = torch.load(path, weights_only=True)
    state["kg_encoder.basis"] = state.pop("kg_encoder.weight")  # an older graph library's name
    torch.save(state, path)
    with pytest.raises(CheckpointMismatch) as caught:
        load("kbrd_redial", models, hf_cache, test_options)
    message = str(caught.value)
    assert "missing keys: kg_encoder.weight" in message
    assert "unexpected keys: kg_encoder.basis" in message
    assert "kbrd_rec_redial" in message


def test_extra_and_misshapen_keys_in_generator_are_rejected(tiny_models, tmp_path, hf_cache, test_options):
    models = copy_models(tiny_models, tmp_path, ["barcor_rec_redial", "barcor_conv_redial"])
    path = models / "barcor_conv_redial" / "pytorch_model.bin"
    state = torch.load(path, weights_only=True)
    state["model.encoder.layers.0.extra.weight"] = torch.zeros(2)
    state["rec_proj.bias"] = torch.zeros(3)
    torch.save(state, path)
    with pytest.raises(CheckpointMismatch, match=r"unexpected keys: model\.encoder\.layers\.0\.extra\.weight, rec_proj\.bias"):
        load("barcor_redial", models, hf_cache, test_options)

    state.pop("model.encoder.layers.0.extra.weight")
    state.pop("rec_proj.bias")
    state["model.decoder.layers.1.fc1.weight"] = state["model.decoder.layers.1.fc1.weight"][:, :-1]
    torch.save(state, path)
    with pytest.raises(CheckpointMismatch, match=r"shape mismatch: model\.decoder\.layers\.1\.fc1\.weight"):
        load("barcor_redial", models, hf_cache, test_options)


def test_unicrs_prompt_encoder_needs_every_parameter(tiny_models, tmp_path, hf_cache, test_options):
    models = copy_models(tiny_models, tmp_path, ["unicrs_rec_opendialkg", "unicrs_conv_opendialkg"])
    path = models / "unicrs_conv_opendialkg" / "model.pt"
    state = torch.load(path, weights_only=True)
    state.pop("prompt_proj2.weight")
    # Prefix prompts trained alongside are not used by CRS Arena's module and are accepted.
    state["conv_prefix_embeds"] = torch.zeros(20, 32)
    state["conv_prefix_proj.0.weight"] = torch.zeros(16, 32)
    torch.save(state, path)
    with pytest.raises(CheckpointMismatch) as caught:
        load("unicrs_opendialkg", models, hf_cache, test_options)
    assert "missing keys: prompt_proj2.weight" in str(caught.value)
    assert "prefix" not in str(caught.value)


def test_tied_copies_may_be_present_or_absent():
    config = BartConfig.from_dict(dict(vocab_size=30, d_model=8, encoder_layers=1, decoder_layers=1,
                                       encoder_attention_heads=2, decoder_attention_heads=2,
                                       encoder_ffn_dim=8, decoder_ffn_dim=8, max_position_embeddings=16))
    source = BartForGeneration(config)
    full = dict(source.state_dict())
    for alias, canonical in BartForGeneration.tied_aliases.items():
        full[alias] = full[canonical]
    target = BartForGeneration(config)
    load_strict(target, full, "full")
    torch.testing.assert_close(target.model.shared.weight, source.model.shared.weight)
    minimal = {k: v for k, v in source.state_dict().items() if k != "final_logits_bias"}
    load_strict(BartForGeneration(config), minimal, "minimal")  # HF tolerates a missing final_logits_bias
    only_alias = dict(minimal)
    only_alias["lm_head.weight"] = only_alias.pop("model.shared.weight")
    target = BartForGeneration(config)
    load_strict(target, only_alias, "alias only")
    torch.testing.assert_close(target.model.shared.weight, source.model.shared.weight)


def test_safetensors_checkpoints_load(tiny_models, tmp_path):
    from safetensors.torch import save_file

    folder = tmp_path / "conv"
    folder.mkdir()
    state = read_state_dict(tiny_models / "barcor_conv_redial")
    save_file({k: v.contiguous().clone() for k, v in state.items()}, str(folder / "model.safetensors"))
    assert read_state_dict(folder).keys() == state.keys()


def test_check_names_the_missing_folder_and_the_fix(tmp_path, hf_cache):
    settings = Settings.from_env(models_dir=tmp_path)
    problems = {s.name: s.check() for s in neural_specs(settings, hf_cache_dir=hf_cache)}
    for name, problem in problems.items():
        assert isinstance(problem, CRSUnavailable)
        assert f"{name.split('_')[0]}_rec_{name.split('_')[1]}" in problem.reason
        assert problem.fix == f"python -m crs download {name}"


def test_check_names_a_missing_base_model(tiny_models, tmp_path, hf_cache):
    models = tmp_path / "models"
    models.mkdir()
    for folder in ("kbrd_rec_redial", "kbrd_conv_redial", "unicrs_rec_redial", "unicrs_conv_redial"):
        shutil.copytree(tiny_models / folder, models / folder)
    shutil.copytree(tiny_models / "base" / "microsoft--DialoGPT-small", models / "base" / "microsoft--DialoGPT-small")
    settings = Settings.from_env(models_dir=models)
    specs = {s.name: s for s in neural_specs(settings, hf_cache_dir=hf_cache)}
    kbrd = specs["kbrd_redial"].check()
    assert "facebook/bart-base" in kbrd.reason and "tokenizer" in kbrd.reason
    assert kbrd.fix == "python -m crs download kbrd_redial"
    unicrs = specs["unicrs_redial"].check()
    assert "FacebookAI/roberta-base" in unicrs.reason and "weights" in unicrs.reason
    with pytest.raises(CRSUnavailable, match="roberta-base"):
        specs["unicrs_redial"].load()
