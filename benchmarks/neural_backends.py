"""Hand-written networks against transformers' model classes, per chat turn.

The question this answers (issue 12, item 6): are the hand-written BART,
GPT-2 and RoBERTa modules of `crs/neural/` at least 1.5x faster per turn than
transformers' own classes used the same way? Both backends get the same
weights (random, at the published sizes: bart-base for BARCOR, KBRD's
2+2-layer width-300 BART, DialoGPT-small and roberta-base for UniCRS, all
built from transformers' config classes, nothing downloaded), the same
quantization (int8 dynamic linears and an int8 copy of the tied head for
BARCOR and UniCRS, fp32 for KBRD, as the systems run by default), key/value
caches, one torch thread, and the same greedy loop with the same rules
(`crs.neural.decoding`), so the only difference is the network code.

One chat turn per system (the common turn; the parts both backends share,
such as tokenization, entity linking, R-GCN and prompt MLPs, are left out, so
the ratio is if anything in the hand-written modules' favour):
  KBRD    encode the context, 2 policy steps, a 24-token reply with the user bias
  BARCOR  encode the context, 5 policy steps, a 24-token reply
  UniCRS  RoBERTa over the padded prompt text, DialoGPT prefill with a
          128-position prompt cache, a 24-token reply
24 new tokens is a typical reply (median human reply: 19-21 tokens); the end
token is suppressed so that both backends do exactly the same work.

Turns alternate between the backends (order flipped every repetition);
medians of wall and CPU time and the ratios (transformers / hand-written)
come from this one run; on a shared machine the CPU-time ratio is the
steadier one. The generated token ids of the
two backends are compared on every turn.

    nice -n 10 python benchmarks/neural_backends.py [--repetitions 9] [--systems kbrd,barcor,unicrs]

The hand-written modules were removed after this measurement (results and
decision in BENCHMARKS.md), so the script runs against the commit that added
it, where both backends exist:

    git worktree add /tmp/neural-backends b16e1ab
    nice -n 10 python /tmp/neural-backends/benchmarks/neural_backends.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402
import transformers  # noqa: E402

from crs.neural.decoding import DecodingRules, greedy  # noqa: E402

NEW_TOKENS = 24
CONTEXT_TOKENS = 120  # a mid-dialogue context (the systems keep at most 200 / 128)
PROMPT_POSITIONS = 128  # UniCRS's conversation prompt: one position per padded RoBERTa token


def bart_base(**extra) -> transformers.BartConfig:
    return transformers.BartConfig(
        vocab_size=50265, d_model=768, encoder_layers=6, decoder_layers=6, encoder_attention_heads=12,
        decoder_attention_heads=12, encoder_ffn_dim=3072, decoder_ffn_dim=3072, max_position_embeddings=1024,
        dropout=0.0, attention_dropout=0.0, activation_dropout=0.0, **extra)


def kbrd_bart() -> transformers.BartConfig:
    return transformers.BartConfig(
        vocab_size=50265, d_model=300, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=300, decoder_ffn_dim=300, max_position_embeddings=1024,
        dropout=0.0, attention_dropout=0.0, activation_dropout=0.0)


def dialogpt_small() -> transformers.GPT2Config:
    return transformers.GPT2Config(vocab_size=50259, n_embd=768, n_layer=12, n_head=12, n_positions=1024,
                                   resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)


def roberta_base() -> transformers.RobertaConfig:
    return transformers.RobertaConfig(vocab_size=50266, hidden_size=768, num_hidden_layers=12,
                                      num_attention_heads=12, intermediate_size=3072, max_position_embeddings=514,
                                      hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)


# -- quantization of transformers' models, the same scheme as crs.neural.quantize ---------------

def quantize_transformers_model(model: torch.nn.Module) -> torch.nn.Module:
    """int8 dynamic linears; GPT-2's Conv1D layers become Linear first; the tied head gets its own int8 copy."""
    import warnings

    from transformers.pytorch_utils import Conv1D

    def replace(module):
        for name, child in module.named_children():
            if isinstance(child, Conv1D):
                linear = torch.nn.Linear(child.weight.size(0), child.weight.size(1))
                with torch.no_grad():
                    linear.weight.copy_(child.weight.T)
                    linear.bias.copy_(child.bias)
                setattr(module, name, linear)
            else:
                replace(child)

    replace(model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8, inplace=True)


# -- one turn per backend --------------------------------------------------------------------------

def _rules(eos: int, steps: int) -> DecodingRules:
    return DecodingRules(eos_token_id=eos, no_repeat_ngram_size=3, min_new_tokens=steps)


class BartTurn:
    """KBRD (with `user_bias`) or BARCOR chat turn on one backend."""

    def __init__(self, backend: str, model, policy_steps: int, user: torch.Tensor | None = None,
                 rec_proj: torch.nn.Module | None = None):
        # KBRD: the hand-written generator projects `user` itself every step (its `rec_proj`);
        # for transformers' class the same projection is added to its logits every step.
        self.backend, self.model, self.policy_steps = backend, model, policy_steps
        self.user, self.rec_proj = user, rec_proj

    def _stepper(self, encoder_states) -> Callable[[int], torch.Tensor]:
        if self.backend == "hand-written":
            cache = self.model.model.start_decoder(encoder_states)

            def step(token: int) -> torch.Tensor:
                return self.model.logits(self.model.model.decode(torch.tensor([[token]]), cache), self.user)[0, -1]

            return step
        cache = transformers.EncoderDecoderCache(transformers.DynamicCache(), transformers.DynamicCache())
        encoder_outputs = transformers.modeling_outputs.BaseModelOutput(last_hidden_state=encoder_states)

        def step(token: int) -> torch.Tensor:
            out = self.model(encoder_outputs=encoder_outputs, decoder_input_ids=torch.tensor([[token]]),
                             past_key_values=cache, use_cache=True)
            logits = out.logits[0, -1]
            return logits + self.rec_proj(self.user)[0] if self.rec_proj is not None else logits

        return step

    def __call__(self, context: list[int]) -> list[int]:
        ids = torch.tensor([context])
        if self.backend == "hand-written":
            states = self.model.model.encode(ids)
        else:
            states = self.model.get_encoder()(input_ids=ids).last_hidden_state
        start = 2
        step = self._stepper(states)
        policy, _ = greedy(step(start), step, [start], _rules(2, self.policy_steps), self.policy_steps)
        step = self._stepper(states)
        reply, _ = greedy(step(start), step, [start], _rules(2, NEW_TOKENS), NEW_TOKENS)
        return policy + reply


class UniCRSTurn:
    def __init__(self, backend: str, gpt2, roberta, prompt: torch.Tensor):
        self.backend, self.gpt2, self.roberta, self.prompt = backend, gpt2, roberta, prompt

    def __call__(self, context: list[int]) -> list[int]:
        text_ids = torch.tensor([context + [1] * (PROMPT_POSITIONS - len(context))])
        mask = text_ids.ne(1).long()
        layers = self.prompt.size(0)
        if self.backend == "hand-written":
            from crs.neural.gpt2 import PromptGPT2

            self.roberta(text_ids, mask)
            cache = PromptGPT2.prompt_cache(self.prompt, layers)

            def run(ids: list[int], start: int) -> torch.Tensor:
                positions = torch.arange(start, start + len(ids))[None]
                return self.gpt2.lm_logits(self.gpt2(torch.tensor([ids]), positions, cache)[:, -1])[0]
        else:
            self.roberta(input_ids=text_ids, attention_mask=mask).last_hidden_state
            cache = transformers.DynamicCache()
            for layer in range(layers):
                cache.update(self.prompt[layer, 0], self.prompt[layer, 1], layer)

            def run(ids: list[int], start: int) -> torch.Tensor:
                positions = torch.arange(start, start + len(ids))[None]
                out = self.gpt2(input_ids=torch.tensor([ids]), position_ids=positions, past_key_values=cache,
                                use_cache=True, logits_to_keep=1)
                return out.logits[0, -1]

        ids = context[:100]
        position = [len(ids)]
        first = run(ids, 0)

        def step(token: int) -> torch.Tensor:
            logits = run([token], position[0])
            position[0] += 1
            return logits

        reply, _ = greedy(first, step, ids, _rules(50256, NEW_TOKENS), NEW_TOKENS)
        return reply


# -- building both backends with the same weights --------------------------------------------------

def _hand_written_bart(hf_model, user_hidden: int | None):
    from crs.neural.bart import BartConfig, BartForGeneration
    from crs.neural.weights import load_strict

    model = BartForGeneration(BartConfig.from_dict(hf_model.config.to_dict()), user_hidden_size=user_hidden)
    state = dict(hf_model.state_dict())
    if user_hidden:
        state.update(REC_PROJ)
    load_strict(model, state, "transformers BartForConditionalGeneration")
    return model.eval()


REC_PROJ: dict[str, torch.Tensor] = {}


def build(system: str, quantize: bool) -> dict[str, Callable[[list[int]], list[int]]]:
    from crs.neural.quantize import quantize_model

    torch.manual_seed(0)
    if system in ("kbrd", "barcor"):
        reference = transformers.BartForConditionalGeneration(kbrd_bart() if system == "kbrd" else bart_base()).eval()
        user_hidden = 128 if system == "kbrd" else None
        rec_proj = embeds = None
        if user_hidden:
            rec_proj = torch.nn.Linear(user_hidden, reference.config.vocab_size)
            REC_PROJ.update({f"rec_proj.{k}": v for k, v in rec_proj.state_dict().items()})
            embeds = torch.randn(1, user_hidden)
        mine = _hand_written_bart(reference, user_hidden)
        if quantize:
            quantize_transformers_model(reference)
            quantize_model(mine)
        steps = 2 if system == "kbrd" else 5
        return {"transformers": BartTurn("transformers", reference, steps, embeds, rec_proj),
                "hand-written": BartTurn("hand-written", mine, steps, embeds)}
    from crs.neural.gpt2 import GPT2Config, PromptGPT2
    from crs.neural.roberta import RobertaConfig, RobertaEncoder
    from crs.neural.weights import load_strict

    gpt2 = transformers.GPT2LMHeadModel(dialogpt_small()).eval()
    roberta = transformers.RobertaModel(roberta_base(), add_pooling_layer=False).eval()
    my_gpt2 = PromptGPT2(GPT2Config.from_dict(gpt2.config.to_dict()))
    load_strict(my_gpt2, gpt2.state_dict(), "transformers GPT2LMHeadModel")
    my_roberta = RobertaEncoder(RobertaConfig.from_dict(roberta.config.to_dict()))
    load_strict(my_roberta, roberta.state_dict(), "transformers RobertaModel")
    config = gpt2.config
    prompt = torch.randn(config.n_layer, 2, 1, config.n_head, PROMPT_POSITIONS, config.n_embd // config.n_head)
    if quantize:
        for model in (gpt2, roberta):
            quantize_transformers_model(model)
        for model in (my_gpt2, my_roberta):
            quantize_model(model)
    return {"transformers": UniCRSTurn("transformers", gpt2, roberta, prompt),
            "hand-written": UniCRSTurn("hand-written", my_gpt2.eval(), my_roberta.eval(), prompt)}


def measure(system: str, repetitions: int, quantize: bool) -> dict:
    started = time.perf_counter()
    turns = build(system, quantize)
    built = time.perf_counter() - started
    generator = torch.Generator().manual_seed(1)
    times: dict[str, list[float]] = {name: [] for name in turns}
    cpu: dict[str, list[float]] = {name: [] for name in turns}
    same = 0
    with torch.inference_mode():
        for backend in turns:  # one warm-up turn each
            turns[backend]([0] + torch.randint(3, 50000, (CONTEXT_TOKENS - 2,)).tolist() + [2])
        for rep in range(repetitions):
            context = [0] + torch.randint(3, 50000, (CONTEXT_TOKENS - 2,), generator=generator).tolist() + [2]
            order = list(turns) if rep % 2 == 0 else list(reversed(list(turns)))
            outputs = {}
            for backend in order:
                t0, c0 = time.perf_counter(), time.process_time()
                outputs[backend] = turns[backend](context)
                times[backend].append(time.perf_counter() - t0)
                cpu[backend].append(time.process_time() - c0)
            same += outputs["transformers"] == outputs["hand-written"]
    medians = {name: statistics.median(values) for name, values in times.items()}
    cpu_medians = {name: statistics.median(values) for name, values in cpu.items()}
    return {"system": system, "int8": quantize, "build_s": built, "repetitions": repetitions, "same_tokens": same,
            "median_s": medians, "ratio": medians["transformers"] / medians["hand-written"],
            "cpu_median_s": cpu_medians, "cpu_ratio": cpu_medians["transformers"] / cpu_medians["hand-written"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--systems", default="kbrd,barcor,unicrs")
    parser.add_argument("--repetitions", type=int, default=9)
    args = parser.parse_args()
    torch.set_num_threads(1)
    defaults = {"kbrd": False, "barcor": True, "unicrs": True}  # the systems' default quantization
    print(f"torch {torch.__version__}, transformers {transformers.__version__}, 1 thread, "
          f"loadavg {os.getloadavg()[0]:.1f}", flush=True)
    print("| system | int8 | hand-written wall / CPU | transformers wall / CPU | ratio wall / CPU "
          "| same tokens |", flush=True)
    print("|---|---|---|---|---|---|", flush=True)
    for system in args.systems.split(","):
        row = measure(system, args.repetitions, defaults[system])
        wall, cpu = row["median_s"], row["cpu_median_s"]
        print(f"| {system} | {'yes' if row['int8'] else 'no'} "
              f"| {wall['hand-written']:.3f} / {cpu['hand-written']:.3f} s "
              f"| {wall['transformers']:.3f} / {cpu['transformers']:.3f} s "
              f"| {row['ratio']:.2f}x / {row['cpu_ratio']:.2f}x | {row['same_tokens']}/{row['repetitions']} |",
              flush=True)
    print(f"loadavg at the end {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
