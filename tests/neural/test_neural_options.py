"""Runtime options: reply bound, quantization, threads."""

from __future__ import annotations

import pytest
import torch

from arena.runtime.config import Settings, SettingsError
from crs.neural.networks import (
    BartConfig,
    BartForConditionalGeneration,
    BartSteps,
    GPT2Config,
    GPT2LMHeadModel,
    encode_bart,
    gpt2_forward,
    prompt_cache,
)
from crs.neural.quantize import quantize_model
from crs.neural.variants import DEFAULT_MAX_NEW_TOKENS, RuntimeOptions
from tests.support.checkpoints import _randomize


def _options(env: dict) -> RuntimeOptions:
    return RuntimeOptions.from_settings(Settings.from_env(env))


def test_options_from_settings():
    default = _options({})
    assert default.max_new_tokens == DEFAULT_MAX_NEW_TOKENS == 64 and default.threads == 1
    assert default.quantizes("unicrs") and default.quantizes("barcor") and not default.quantizes("kbrd")
    assert default.response_limit(127) == 64 and default.response_limit(40) == 40
    original = _options({"ARENA_NEURAL_MAX_NEW_TOKENS": "0", "ARENA_NEURAL_QUANTIZE": "0",
                         "ARENA_NEURAL_THREADS": "1"})
    assert original.response_limit(127) == 127 and original.threads == 1
    assert _options({"ARENA_NEURAL_THREADS": "0"}).threads is None  # torch's default
    assert not original.quantizes("unicrs")
    assert _options({"ARENA_NEURAL_QUANTIZE": "1"}).quantizes("kbrd")
    with pytest.raises(SettingsError, match="ARENA_NEURAL_QUANTIZE must be one of"):
        _options({"ARENA_NEURAL_QUANTIZE": "maybe"})
    with pytest.raises(SettingsError, match="ARENA_NEURAL_THREADS must be an integer"):
        _options({"ARENA_NEURAL_THREADS": "two"})


def _cosine(a: torch.Tensor, b: torch.Tensor) -> float:
    return float(torch.nn.functional.cosine_similarity(a.flatten(), b.flatten(), dim=0))


def test_quantized_bart_stays_close_to_fp32():
    config = BartConfig(vocab_size=300, d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                        decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128,
                        max_position_embeddings=64)
    exact = BartForConditionalGeneration(config).eval()
    _randomize(exact, 9)
    quantized = BartForConditionalGeneration(config).eval()
    quantized.load_state_dict(exact.state_dict())
    quantize_model(quantized)
    # the tied head became an int8 copy; the embedding table stays fp32
    assert not isinstance(quantized.lm_head, torch.nn.Linear)
    assert quantized.model.shared.weight.dtype == torch.float32
    ids = [0, 15, 29, 113, 2]
    with torch.inference_mode():
        logits = []
        for model in (exact, quantized):
            step = BartSteps(model, encode_bart(model, ids))
            logits.append(torch.stack([step(token) for token in (2, 0, 40)]))
    assert _cosine(*logits) > 0.99


def test_quantized_gpt2_stays_close_to_fp32():
    config = GPT2Config(vocab_size=300, n_embd=64, n_layer=2, n_head=4, n_positions=64)
    exact = GPT2LMHeadModel(config).eval()
    _randomize(exact, 10)
    quantized = GPT2LMHeadModel(config).eval()
    quantized.load_state_dict(exact.state_dict())
    quantize_model(quantized)
    ids = [5, 17, 250, 3]
    with torch.inference_mode():
        logits = [m.lm_head(gpt2_forward(m, ids, 0, prompt_cache(None))) for m in (exact, quantized)]
    assert _cosine(*logits) > 0.99


def test_thread_setting_is_per_call_and_restored(registry):
    import threading

    crs = registry.get("kbrd_redial")
    seen = []
    original = crs.prepare

    def spy(*args):
        seen.append(torch.get_num_threads())
        return original(*args)

    from arena.dialogue import Dialogue

    dialogue = Dialogue(crs_id="kbrd_redial")
    dialogue.add_user("Any comedies?")
    crs.prepare = spy
    try:
        def worker():
            torch.set_num_threads(2)
            crs.reply(dialogue)
            seen.append(("after", torch.get_num_threads()))

        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
    finally:
        del crs.prepare
    assert seen[0] == crs.runtime.threads == 1 and seen[-1] == ("after", 2)
