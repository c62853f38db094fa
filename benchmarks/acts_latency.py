"""CPU latency of the offline act annotator, per utterance.

    HF_HUB_OFFLINE=1 python benchmarks/acts_latency.py [--threads 1] [--limit 400]

For each utterance of IARD's held-out dialogues and of the arena-style test set,
the annotator reads it with the utterance before it (a two-utterance dialogue):
titles are found (catalog linker included), texts encoded, features built and
the model applied. "new utterance" times it the way a running dialogue meets
it, the previous utterance already encoded (the encoder's cache holds it, and
only it); "cold" empties the cache first, so both texts are encoded. Models and
catalogs are loaded before timing. Also reports whole-dialogue annotation
divided by the number of utterances. The machine is shared: CPU time (of this
process, `time.process_time`) is reported beside wall-clock time, because on a
loaded machine the wall clock mostly measures waiting for a core.
`--fine-tune-steps N` instead times N training steps (batch 16, pairs of the
utterance and the one before it, up to 128 tokens) of all-MiniLM-L6-v2 as a
cross-encoder, the alternative the shipped frozen-embedding model was weighed
against. Prints Markdown.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from arena.dialogue import Dialogue  # noqa: E402
from evaluators.acts.data import ARENA_HELD_OUT, iard_split, load_arena_style, load_iard  # noqa: E402


def pair(dialogue: Dialogue, i: int) -> Dialogue:
    d = Dialogue(crs_id=dialogue.crs_id, dialogue_id=f"{dialogue.dialogue_id}:{i}")
    for utt in dialogue.utterances[max(0, i - 1): i + 1]:
        d.utterances.append(utt.model_copy(update={"dialogue_acts": None}))
    return d


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=1, help="torch threads for the encoder")
    ap.add_argument("--limit", type=int, default=400, help="utterances timed one by one")
    ap.add_argument("--fine-tune-steps", type=int, default=0)
    args = ap.parse_args(argv)

    import torch

    torch.set_num_threads(args.threads)
    if args.fine_tune_steps:
        return fine_tune_cost(args.fine_tune_steps, args.threads)
    from evaluators.acts.embedding import shared_encoder
    from evaluators.acts.offline import OfflineActAnnotator

    annotator = OfflineActAnnotator()
    encoder = shared_encoder()
    _, held = iard_split(load_iard())
    cases = [pair(d, i) for d in held for i in range(len(d.utterances))]
    cases += [row.dialogue for row in load_arena_style(ARENA_HELD_OUT)]
    cases = cases[:: max(1, len(cases) // args.limit)][: args.limit]
    annotator.annotate(cases[0], overwrite=True)  # loads the model, encoder and catalogs
    warm, cold, warm_cpu, cold_cpu = [], [], [], []
    for d in cases:
        encoder.clear()
        started, started_cpu = time.perf_counter(), time.process_time()
        annotator.annotate(d, overwrite=True)
        cold.append((time.perf_counter() - started) * 1000)
        cold_cpu.append((time.process_time() - started_cpu) * 1000)
        encoder.clear()
        if len(d.utterances) > 1:
            previous = d.model_copy(update={"utterances": d.utterances[:-1]})
            annotator.annotate(previous, overwrite=True)
        started, started_cpu = time.perf_counter(), time.process_time()
        annotator.annotate(d, overwrite=True)
        warm.append((time.perf_counter() - started) * 1000)
        warm_cpu.append((time.process_time() - started_cpu) * 1000)
    encoder.clear()
    started = time.perf_counter()
    for d in held:
        annotator.annotate(d, overwrite=True)
    n_utts = sum(len(d.utterances) for d in held)
    whole = (time.perf_counter() - started) * 1000 / n_utts
    load = os.getloadavg()[0]
    print("| case | threads | utterances timed | wall p50 / p95 / max ms | CPU time p50 / p95 ms | load (1 min) |")
    print("|---|---|---|---|---|---|")
    for name, timings, cpu in (("new utterance (previous one encoded)", warm, warm_cpu),
                               ("cold (both encoded)", cold, cold_cpu)):
        print(f"| {name} | {args.threads} | {len(timings)} | {statistics.median(timings):.1f} / "
              f"{percentile(timings, 0.95):.1f} / {max(timings):.1f} | {statistics.median(cpu):.1f} / "
              f"{percentile(cpu, 0.95):.1f} | {load:.1f} |")
    print(f"| whole dialogues, per utterance (mean) | {args.threads} | {n_utts} ({len(held)} dialogues) | {whole:.1f} "
          f"| | {load:.1f} |")
    return 0


def fine_tune_cost(steps: int, threads: int) -> int:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from evaluators.acts.embedding import model_path

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(model_path())
    model = AutoModelForSequenceClassification.from_pretrained(model_path(), num_labels=27)
    optimiser = torch.optim.AdamW(model.parameters(), lr=2e-5)
    _, held = iard_split(load_iard())
    pairs = [(d.utterances[i - 1].text if i else "", d.utterances[i].text) for d in held for i in range(len(d.utterances))]
    model.train()
    timings = []
    for step in range(steps):
        batch = pairs[step * 16:(step + 1) * 16]
        enc = tokenizer([a for a, _ in batch], [b for _, b in batch], truncation=True, max_length=128,
                        padding=True, return_tensors="pt")
        started = time.perf_counter()
        out = model(**enc, labels=torch.zeros(len(batch), 27))
        out.loss.backward()
        optimiser.step()
        optimiser.zero_grad()
        timings.append(time.perf_counter() - started)
    per_step = statistics.median(timings)
    print("| threads | steps timed | s per step (batch 16) | s per epoch of 12,000 utterances | load |")
    print("|---|---|---|---|---|")
    print(f"| {threads} | {steps} | {per_step:.2f} | {per_step * 12000 / 16:.0f} | {os.getloadavg()[0]:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
