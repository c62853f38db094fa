"""ARENA_DEVICE: auto picks CUDA when there is one; the CPU path is unchanged; the CUDA path runs on a GPU.

The CUDA tests run only where torch sees a GPU (none on the development machines
or in CI); everything else runs everywhere.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import arena.runtime.devices as devices
from arena.runtime.config import Settings
from arena.dialogue import Dialogue
from crs.neural import neural_specs
from crs.neural.variants import RuntimeOptions
from crs.registry import CRSRegistry

needs_cuda = pytest.mark.skipif(not devices.cuda_available(), reason="no CUDA device on this machine")


def test_settings_and_resolution(monkeypatch):
    assert Settings.from_env({}).device == "auto"
    assert Settings.from_env({"ARENA_DEVICE": " CPU "}).device == "cpu"
    with pytest.raises(ValueError, match="ARENA_DEVICE"):
        Settings.from_env({"ARENA_DEVICE": "gpu"})
    monkeypatch.setattr(devices, "cuda_available", lambda: False)
    assert devices.resolve_device("auto") == "cpu" and devices.resolve_device("cpu") == "cpu"
    with pytest.raises(ValueError, match="no CUDA"):
        devices.resolve_device("cuda")
    monkeypatch.setattr(devices, "cuda_available", lambda: True)
    assert devices.resolve_device("auto") == "cuda" and devices.resolve_device("cpu") == "cpu"


def test_int8_quantization_is_for_the_cpu_only():
    assert RuntimeOptions(device="cpu").quantizes("barcor") and RuntimeOptions().quantizes("unicrs")
    assert not RuntimeOptions(device="cuda").quantizes("barcor")
    assert not RuntimeOptions(device="cuda", quantize=True).quantizes("kbrd")


def _replies(registry, name, turns):
    crs, dialogue, out = registry.get(name), Dialogue(crs_id=name), []
    for text in turns:
        dialogue.add_user(text)
        reply = crs.reply(dialogue)
        dialogue.add_agent(reply.text, reply.items)
        out.append((reply.text, [i.item_id for i in reply.ranking]))
    return out


TURNS = ["Hi! I'm looking for a movie like Super Troopers (2001)", "Something with Brad Pitt would be great"]


def test_cpu_choice_keeps_the_cpu_path(tiny_settings, hf_cache, test_options):
    """Settings auto (no GPU here) and an explicit cpu give the very same replies, on CPU tensors."""
    auto = CRSRegistry(neural_specs(tiny_settings, options=test_options, hf_cache_dir=hf_cache))
    on_cpu = CRSRegistry(neural_specs(tiny_settings.model_copy(update={"device": "cpu"}),
                                      options=replace(test_options, device="cpu"), hf_cache_dir=hf_cache))
    name = "kbrd_redial"
    if not devices.cuda_available():
        assert _replies(auto, name, TURNS) == _replies(on_cpu, name, TURNS)
    assert all(p.device.type == "cpu" for p in on_cpu.get(name).generator.parameters())


@needs_cuda
@pytest.mark.parametrize("name", ["kbrd_redial", "barcor_redial", "unicrs_redial"])
def test_cuda_path_runs_on_the_gpu_in_16_bit(tiny_settings, hf_cache, test_options, name):
    import torch

    on_gpu = CRSRegistry(neural_specs(tiny_settings.model_copy(update={"device": "cuda"}), options=test_options,
                                      hf_cache_dir=hf_cache))
    crs = on_gpu.get(name)
    modules = [m for m in vars(crs).values() if isinstance(m, torch.nn.Module)]
    assert modules and all(p.device.type == "cuda" for m in modules for p in m.parameters())
    replies = _replies(on_gpu, name, TURNS)
    assert all(isinstance(text, str) and ranking for text, ranking in replies)
    on_cpu = CRSRegistry(neural_specs(tiny_settings.model_copy(update={"device": "cpu"}), options=replace(test_options, device="cpu"),
                                      hf_cache_dir=hf_cache))
    cpu_ranking = _replies(on_cpu, name, TURNS)[-1][1]
    assert len(set(replies[-1][1][:20]) & set(cpu_ranking[:20])) >= 10  # 16-bit math, same model


@needs_cuda
def test_embeddings_on_the_gpu_match_the_cpu(monkeypatch):
    import arena.catalogs.retrieval as retrieval

    texts = ["a funny movie from the nineties", "a scary film about a shark", "space opera"]
    monkeypatch.setattr(retrieval, "_MODEL", None)
    retrieval.use_device("cpu")
    cpu = retrieval.encode(texts)
    monkeypatch.setattr(retrieval, "_MODEL", None)
    retrieval.use_device("cuda")
    gpu = retrieval.encode(texts)
    retrieval.use_device("cpu")
    assert gpu.dtype == np.float32 and np.all(np.sum(cpu * gpu, axis=1) > 0.99)
    assert next(retrieval.embedding_model().parameters()).dtype.itemsize == 2



@needs_cuda
def test_reference_mode_runs_fp32_on_the_gpu(tiny_settings, hf_cache, test_options):
    """The reference ran fp32: no autocast on the GPU, so its rankings follow the CPU's."""
    import torch

    options = replace(test_options, mode="reference")
    on_gpu = CRSRegistry(neural_specs(tiny_settings.model_copy(update={"device": "cuda"}), options=options,
                                      hf_cache_dir=hf_cache))
    on_cpu = CRSRegistry(neural_specs(tiny_settings.model_copy(update={"device": "cpu"}),
                                      options=replace(options, device="cpu"), hf_cache_dir=hf_cache))
    name = "unicrs_redial"
    crs = on_gpu.get(name)
    assert crs.runtime.device == "cuda" and not crs.runtime.half_precision
    assert crs.gpt2.transformer.wte.weight.dtype == torch.float32
    gpu_ranking, cpu_ranking = _replies(on_gpu, name, TURNS)[-1][1], _replies(on_cpu, name, TURNS)[-1][1]
    assert len(set(gpu_ranking[:10]) & set(cpu_ranking[:10])) >= 8
