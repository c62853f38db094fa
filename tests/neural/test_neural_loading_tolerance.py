"""Checkpoints load as tolerantly as in the code CRS Arena ran, and say what they left out:
fatal where that code failed (KBRD's recommender loaded strictly, any shape difference),
reported where it went on (from_pretrained folders, UniCRS's prompt encoders)."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from arena.runtime.config import Settings
from arena.conversation.crs_interface import CRSUnavailable
from crs.neural import CheckpointMismatch, neural_specs
from crs.neural.networks import BART_OPTIONAL_KEYS, BartConfig, BartForConditionalGeneration
from crs.neural.weights import Tolerance, load_strict, read_state_dict


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


def report_of(system, folder: str):
    return next(r for r in system.load_reports if folder in r.source)


def test_renamed_key_in_kbrd_recommender_is_rejected_by_name(tiny_models, tmp_path, hf_cache, test_options):
    # CRS Arena loaded KBRD's recommender with torch's strict load_state_dict: a renamed key is fatal.
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


def test_generator_folders_tolerate_what_from_pretrained_tolerated(tiny_models, tmp_path, hf_cache, test_options,
                                                                     caplog):
    models = copy_models(tiny_models, tmp_path, ["barcor_rec_redial", "barcor_conv_redial"])
    path = models / "barcor_conv_redial" / "pytorch_model.bin"
    original = torch.load(path, weights_only=True)
    state = dict(original)
    state["model.encoder.layers.0.extra.weight"] = torch.zeros(2)
    state["rec_proj.bias"] = torch.zeros(3)
    kept = state.pop("model.decoder.layers.1.fc1.bias")
    torch.save(state, path)
    with caplog.at_level("WARNING", logger="crs.neural.weights"):  # fp32, to read the parameters back
        system = load("barcor_redial", models, hf_cache, replace(test_options, quantize=False))
    report = report_of(system, "barcor_conv_redial")
    assert report.tolerance is Tolerance.LENIENT
    assert report.unexpected == ["model.encoder.layers.0.extra.weight", "rec_proj.bias"]
    assert report.missing == ["model.decoder.layers.1.fc1.bias"]
    assert not torch.equal(system.generator.model.decoder.layers[1].fc1.bias, kept)  # left at its initial value
    torch.testing.assert_close(system.generator.model.decoder.layers[0].fc1.bias,
                               original["model.decoder.layers.0.fc1.bias"])
    assert "1 missing (kept their initial values): model.decoder.layers.1.fc1.bias" in caplog.text
    assert "2 unexpected (dropped)" in caplog.text
    assert report_of(system, "barcor_rec_redial").exact

    # A shape difference stopped from_pretrained too.
    state = dict(original)
    state["model.decoder.layers.1.fc1.weight"] = state["model.decoder.layers.1.fc1.weight"][:, :-1]
    torch.save(state, path)
    with pytest.raises(CheckpointMismatch, match=r"shape mismatch: model\.decoder\.layers\.1\.fc1\.weight"):
        load("barcor_redial", models, hf_cache, test_options)


def test_unicrs_prompt_encoder_loads_as_with_strict_false(tiny_models, tmp_path, hf_cache, test_options):
    models = copy_models(tiny_models, tmp_path, ["unicrs_rec_opendialkg", "unicrs_conv_opendialkg"])
    path = models / "unicrs_conv_opendialkg" / "model.pt"
    state = torch.load(path, weights_only=True)
    # The fabricated checkpoints carry what training saved besides the module CRS Arena built.
    assert {"conv_prefix_embeds", "conv_prefix_proj.0.weight", "edge_index", "edge_type"} <= state.keys()
    state.pop("prompt_proj2.weight")
    torch.save(state, path)
    system = load("unicrs_opendialkg", models, hf_cache, test_options)
    conv = report_of(system, "unicrs_conv_opendialkg")
    assert conv.missing == ["prompt_proj2.weight"] and conv.unexpected == []
    assert "conv_prefix_embeds" in conv.ignored and "conv_prefix_proj.0.weight" in conv.ignored
    rec = report_of(system, "unicrs_rec_opendialkg")
    assert rec.exact and "rec_prefix_embeds" in rec.ignored
    assert "prompt_proj2.weight" in conv.summary() and "ignored" in rec.summary()

    state["prompt_proj1.0.weight"] = state["prompt_proj1.0.weight"][:-1]
    torch.save(state, path)
    with pytest.raises(CheckpointMismatch, match=r"shape mismatch: prompt_proj1\.0\.weight"):
        load("unicrs_opendialkg", models, hf_cache, test_options)


def test_unicrs_runs_on_the_edges_its_checkpoint_carries(tiny_models, tmp_path, hf_cache, test_options):
    """CRS Arena's prompt encoder held the graph's edges as parameters: a checkpoint's own edges
    replaced those built from the KG files, and edges of another size stopped the load."""
    models = copy_models(tiny_models, tmp_path, ["unicrs_rec_opendialkg", "unicrs_conv_opendialkg"])
    path = models / "unicrs_conv_opendialkg" / "model.pt"
    state = torch.load(path, weights_only=True)
    first = load("unicrs_opendialkg", models, hf_cache, test_options)
    state["edge_type"] = state["edge_type"].roll(1)  # same size, other relations
    torch.save(state, path)
    system = load("unicrs_opendialkg", models, hf_cache, test_options)
    assert torch.equal(system.conv_prompt.graph_edges[1], state["edge_type"])
    assert not torch.allclose(system.conv_entities, first.conv_entities)
    torch.testing.assert_close(system.rec_entities, first.rec_entities)  # its own edges: unchanged

    state["edge_index"] = state["edge_index"][:, :-2]
    torch.save(state, path)
    with pytest.raises(CheckpointMismatch, match=r"shape mismatch: edge_index"):
        load("unicrs_opendialkg", models, hf_cache, test_options)


def test_every_checkpoint_reports_how_it_loaded(registry):
    for name, count in (("kbrd_redial", 2), ("barcor_opendialkg", 2), ("unicrs_redial", 4)):
        reports = registry.get(name).load_reports
        assert len(reports) == count and all(r.exact for r in reports)
    strict = [r.tolerance for r in registry.get("kbrd_redial").load_reports]
    assert strict == [Tolerance.STRICT, Tolerance.LENIENT]  # the recommender, then the generator


def test_tied_copies_may_be_present_or_absent():
    config = BartConfig(vocab_size=30, d_model=8, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                        decoder_attention_heads=2, encoder_ffn_dim=8, decoder_ffn_dim=8, max_position_embeddings=16)
    source = BartForConditionalGeneration(config)
    full = dict(source.state_dict())  # every tied name present, as older library versions saved them
    target = BartForConditionalGeneration(config)
    load_strict(target, full, "full", optional_keys=BART_OPTIONAL_KEYS)
    torch.testing.assert_close(target.model.shared.weight, source.model.shared.weight)
    tied = ("lm_head.weight", "model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight")
    minimal = {k: v for k, v in full.items() if k not in tied and k != "final_logits_bias"}
    # the library tolerates a missing final_logits_bias
    load_strict(BartForConditionalGeneration(config), minimal, "minimal", optional_keys=BART_OPTIONAL_KEYS)
    only_alias = dict(minimal)
    only_alias["lm_head.weight"] = only_alias.pop("model.shared.weight")
    target = BartForConditionalGeneration(config)
    load_strict(target, only_alias, "alias only", optional_keys=BART_OPTIONAL_KEYS)
    torch.testing.assert_close(target.model.shared.weight, source.model.shared.weight)
    assert target.lm_head.weight is target.model.shared.weight
    without_any = {k: v for k, v in minimal.items() if k != "model.shared.weight"}
    with pytest.raises(CheckpointMismatch, match="missing keys: .*model.shared.weight"):
        load_strict(BartForConditionalGeneration(config), without_any, "none", optional_keys=BART_OPTIONAL_KEYS)


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
