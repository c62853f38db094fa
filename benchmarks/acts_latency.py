"""CPU latency of the offline act annotator, per utterance.

    HF_HUB_OFFLINE=1 python benchmarks/acts_latency.py [--threads 1] [--limit 400]
        [--runtimes onnxruntime,torch]

For each utterance of IARD's held-out dialogues and of the arena-style test set,
in its dialogue up to that point: "latest utterance" is what a simulator reading the
system's turn (and a live annotation of each new turn) costs: titles found in
the new utterance (catalog linker included; the earlier turns were read, as in a
live dialogue, before timing) and facts built over the dialogue, then one network
pass over the (context, utterance) pair; "context decision" is what deciding Accept over the
dialogue (version 14; Reject too where the artifact decides it so) adds once the outputs are
known. "two-utterance dialogue" annotates the utterance and the one before it (two passes in
one batch). "network pass" times the network alone on the latest utterance's pair. Each
runtime (ONNX Runtime, the default on CPU, and PyTorch) is timed in the same run over the same utterances,
so their ratio is comparable. The network and catalogs are loaded before timing.
Also reports whole-dialogue annotation divided by the number of utterances. The machine is shared: CPU time (of this process,
`time.process_time`) is reported beside wall-clock time, because on a loaded
machine the wall clock mostly measures waiting for a core. Prints Markdown.
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


def timed(fn) -> tuple[float, float]:
    """(wall ms, CPU ms) of one call."""
    started, started_cpu = time.perf_counter(), time.process_time()
    fn()
    return (time.perf_counter() - started) * 1000, (time.process_time() - started_cpu) * 1000


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=1, help="threads of the runtime (torch threads as well)")
    ap.add_argument("--limit", type=int, default=400, help="utterances timed one by one")
    ap.add_argument("--runtimes", default="onnxruntime,torch", help="comma-separated: onnxruntime, torch")
    args = ap.parse_args(argv)

    import torch

    torch.set_num_threads(args.threads)
    from arena.titles.linking import shared_linker
    from evaluators.acts.context_decision import utterance_facts
    from evaluators.acts.features import dialogue_pairs
    from evaluators.acts.network import encode_pairs
    from evaluators.acts.offline import OfflineActAnnotator

    _, held = iard_split(load_iard())
    prefixes = [d.model_copy(update={"utterances": d.utterances[:i + 1]}) for d in held for i in range(len(d.utterances))]
    prefixes += [row.dialogue for row in load_arena_style(ARENA_HELD_OUT)]
    step = max(1, len(prefixes) // args.limit)
    cases = prefixes[::step][: args.limit]
    linker = shared_linker()  # the annotators' default linker
    print("| runtime | case | threads | utterances timed | wall p50 / p95 / max ms | CPU time p50 / p95 ms "
          "| load (1 min) |")
    print("|---|---|---|---|---|---|---|")
    for runtime in [r.strip() for r in args.runtimes.split(",") if r.strip()]:
        annotator = OfflineActAnnotator(runtime=runtime, threads=args.threads)
        annotator.annotate(cases[0], overwrite=True)  # loads the network and catalogs
        model = annotator.model
        results: dict[str, tuple[list[float], list[float]]] = {}

        def record(name: str, fn) -> None:
            wall, cpu = timed(fn)
            results.setdefault(name, ([], []))[0].append(wall)
            results[name][1].append(cpu)

        for d in cases:
            if len(d.utterances) > 1:  # a live dialogue: its earlier turns were read when they came
                annotator.annotate_intents(d.model_copy(update={"utterances": d.utterances[:-1]}), last_only=True)
            record("latest utterance of its dialogue", lambda: annotator.annotate_intents(d, last_only=True))
            short = pair(d, len(d.utterances) - 1)
            record("two-utterance dialogue (both annotated)", lambda: annotator.annotate(short, overwrite=True))
            rows = encode_pairs(model.tokenizer, dialogue_pairs(d, linker, last_only=True)[1])
            record("network pass (latest utterance)", lambda: model.probabilities_of(rows))
            if model.context is not None:  # Accept (Reject) re-decided over the dialogue once its outputs are known
                views, pairs = dialogue_pairs(d, linker)
                roles, outputs = [v.role for v in views], model.probabilities(pairs)
                record("context decision over the dialogue (outputs known)",
                       lambda: model.intents(roles, outputs, facts=utterance_facts(views)))
        started = time.perf_counter()
        for d in held:
            annotator.annotate(d, overwrite=True)
        n_utts = sum(len(d.utterances) for d in held)
        whole = (time.perf_counter() - started) * 1000 / n_utts
        load = os.getloadavg()[0]
        for name, (wall, cpu) in results.items():
            print(f"| {runtime} | {name} | {args.threads} | {len(wall)} | {statistics.median(wall):.1f} / "
                  f"{percentile(wall, 0.95):.1f} / {max(wall):.1f} | {statistics.median(cpu):.1f} / "
                  f"{percentile(cpu, 0.95):.1f} | {load:.1f} |")
        print(f"| {runtime} | whole dialogues, per utterance (mean) | {args.threads} | {n_utts} ({len(held)} "
              f"dialogues) | {whole:.1f} | | {load:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
