"""The networks compute what the originals compute.

transformers' classes are used as the systems use them: KBRD's user bias on
top of BART's logits, token-by-token decoding through the library's cache,
UniCRS's prompted GPT-2 against a literal transcription of the original (left
padding, additive masks, positions counting the padding); the R-GCN against a
per-edge loop; the decoding rules against `generate`'s semantics.
"""

from __future__ import annotations

import math

import torch
from torch.nn import functional as F

from crs.neural.decoding import DecodingRules, greedy
from crs.neural.layers import EntityAttention, RGCNConv
from crs.neural.networks import (
    BartConfig,
    BartSteps,
    GPT2Config,
    GPT2LMHeadModel,
    KBRDGenerator,
    encode_bart,
    gpt2_forward,
    prompt_cache,
)
from crs.neural.text import pad_length
from tests.support.checkpoints import _randomize

BART = dict(vocab_size=50, d_model=16, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
            decoder_attention_heads=4, encoder_ffn_dim=32, decoder_ffn_dim=32, max_position_embeddings=64,
            pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2,
            activation_function="gelu", scale_embedding=False)
GPT2 = dict(vocab_size=60, n_embd=16, n_layer=2, n_head=4, n_positions=128, activation_function="gelu_new",
            layer_norm_epsilon=1e-5, bos_token_id=0, eos_token_id=0)


def test_kbrd_steps_add_the_user_bias_to_the_cached_decoder_logits():
    model = KBRDGenerator(BartConfig(**BART), user_hidden_size=8).eval()
    _randomize(model, 5)
    user = torch.randn(1, 8)
    ids = [0, 5, 9, 13, 22, 2]
    decoder = [2, 0, 7, 8, 30]
    with torch.no_grad():
        full = model(input_ids=torch.tensor([ids]), decoder_input_ids=torch.tensor([decoder])).logits[0]
        expected = full + model.rec_proj(user)
        step = BartSteps(model, encode_bart(model, ids), user)
        got = torch.stack([step(token) for token in decoder])  # token by token through the cache
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-4)


def test_rgcn_matches_a_per_edge_loop():
    torch.manual_seed(0)
    conv = RGCNConv(5, 3, num_relations=3, num_bases=2)
    torch.nn.init.normal_(conv.bias)
    x = torch.randn(6, 5)
    edges = [(0, 1, 0), (2, 1, 0), (3, 1, 1), (1, 4, 2), (5, 4, 2), (0, 4, 2), (4, 0, 1)]
    edge_index = torch.tensor([[s for s, _, _ in edges], [t for _, t, _ in edges]])
    edge_type = torch.tensor([r for _, _, r in edges])
    weight = torch.einsum("rb,bio->rio", conv.comp, conv.weight)
    expected = x @ conv.root + conv.bias
    for node in range(6):
        for relation in range(3):
            sources = [s for s, t, r in edges if t == node and r == relation]
            if sources:
                expected[node] += torch.stack([x[s] for s in sources]).mean(0) @ weight[relation]
    with torch.no_grad():
        torch.testing.assert_close(conv(x, edge_index, edge_type), expected, atol=1e-5, rtol=1e-5)


def test_entity_attention_sums_entities_like_the_original():
    attention = EntityAttention(4)
    x = torch.randn(1, 3, 4)
    # The original's softmax runs over a singleton axis: every weight is 1, masked or not.
    torch.testing.assert_close(attention(x, torch.tensor([[True, True, False]])), x.sum(1))


def _original_prompted_gpt2(model: GPT2LMHeadModel, prompt, ids, pad_id, pad_to):
    """The UniCRS forward as originally written: left padding to `pad_to`, an all-ones
    prompt mask, additive -1e4 masks, and positions 0..pad_to-1 over the padded row."""
    config = model.config
    pads = pad_to - len(ids)
    row = torch.tensor([[pad_id] * pads + ids])
    mask = torch.tensor([[0] * pads + [1] * len(ids)], dtype=torch.float)
    mask = torch.cat([torch.ones(1, prompt.shape[-2]), mask], dim=-1)[:, None, None, :]
    additive = (1.0 - mask) * -10000.0
    body = model.transformer
    x = body.wte(row) + body.wpe(torch.arange(pad_to)[None])
    heads, width = config.n_head, config.n_embd
    for index, block in enumerate(body.h):
        h = block.ln_1(x)
        q, k, v = block.attn.c_attn(h).split(width, dim=2)
        q, k, v = (t.view(1, -1, heads, width // heads).transpose(1, 2) for t in (q, k, v))
        k = torch.cat([prompt[index, 0], k], dim=-2)
        v = torch.cat([prompt[index, 1], v], dim=-2)
        scores = q @ k.transpose(-1, -2) / math.sqrt(width // heads)
        causal = torch.ones(pad_to, pad_to).tril().bool()
        causal = torch.cat([torch.ones(pad_to, prompt.shape[-2]).bool(), causal], dim=-1)
        scores = torch.where(causal, scores, torch.tensor(-1e4)) + additive
        out = (F.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(1, -1, width)
        x = x + block.attn.c_proj(out)
        x = x + block.mlp(block.ln_2(x))
    return model.lm_head(body.ln_f(x))[0, -1]


def test_prompted_gpt2_without_padding_equals_the_padded_original():
    mine = GPT2LMHeadModel(GPT2Config(**GPT2, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)).eval()
    _randomize(mine, 8)
    prompt = torch.randn(2, 2, 1, 4, 5, 4)  # layers, key/value, batch, heads, prompt length, head dim
    ids = [7, 3, 9, 11, 4, 20]
    pad_to = pad_length(len(ids), 10)  # 16 with the original's multiple of 8
    with torch.no_grad():
        expected = _original_prompted_gpt2(mine, prompt, ids, pad_id=1, pad_to=pad_to)
        offset = pad_to - len(ids)
        got = mine.lm_head(gpt2_forward(mine, ids, offset, prompt_cache(prompt)))[0]
    torch.testing.assert_close(got, expected, atol=1e-4, rtol=1e-4)


def test_decoding_rules_follow_generate_semantics():
    rules = DecodingRules(eos_token_id=2, no_repeat_ngram_size=3, encoder_no_repeat_ngram_size=3,
                          encoder_input_ids=[0, 8, 9, 2, 1, 1], min_new_tokens=1)
    logits = torch.zeros(12)
    # "5 6 7" seen before and the sequence ends with "5 6": 7 is banned (and the end token,
    # before the first new token). The input holds "0 8 9": after "0 8", 9 is banned.
    scores = rules.apply(logits, [3, 5, 6, 7, 5, 6], new_tokens=0, max_length=20)
    assert scores[7] == float("-inf") and scores[2] == float("-inf")
    assert torch.isfinite(scores[[0, 1, 3, 4, 5, 6, 8, 9]]).all()
    scores = rules.apply(logits, [2, 0, 8], new_tokens=1, max_length=20)
    assert scores[2] == 0 and scores[9] == float("-inf")
    forced = DecodingRules(eos_token_id=2, forced_bos_token_id=0, forced_eos_token_id=2)
    assert int(torch.argmax(forced.apply(torch.randn(12), [2], 0, 10))) == 0
    assert int(torch.argmax(forced.apply(torch.randn(12), [2, 0, 5], 2, 4))) == 2


def test_greedy_stops_at_end_token_and_at_the_bound():
    table = {None: 5, 5: 6, 6: 2}
    logits_for = lambda token: F.one_hot(torch.tensor(table.get(token, 4)), 10).float()
    new, kept = greedy(logits_for(None), logits_for, [2], DecodingRules(eos_token_id=2), 50, keep_scores=2)
    assert new == [5, 6, 2] and len(kept) == 2
    new, _ = greedy(logits_for(None), logits_for, [2], DecodingRules(eos_token_id=2), 2)
    assert new == [5, 6]
