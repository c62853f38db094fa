"""Per-turn latency and memory of the neural systems at their real sizes.

Random weights with the published configurations (bart-base for BARCOR,
KBRD's 2+2-layer width-300 BART and 128-d R-GCN, DialoGPT-small and
roberta-base for UniCRS, the real knowledge graphs) are written once to
benchmarks/out/neural-models/. Each system then plays dialogues from the
iEvaLM evaluation data turn by turn (user utterances from the data, the
system's own replies as history), 50 turns in all, in a fresh process so
that resident memory is its own.

Random weights practically never produce the end token, so every generated
reply runs to the length bound: rows with the default bound (64 new tokens)
or the originals' bounds (--max-new-tokens 0) are worst cases; a bound of 24
stands for a typical reply (human ReDial/OpenDialKG replies: median 19-21
tokens).

    python benchmarks/neural_latency.py [--systems kbrd_redial,...] [--threads 1,2]
                                        [--max-new-tokens 64,24,0] [--quantize auto,0,1] [--turns 50]
                                        [--mode arena,reference]

`--mode reference` (ARENA_NEURAL_MODE=reference) runs fp32 with the originals' bounds whatever
--quantize and --max-new-tokens say, and links entities with the original's rule.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

OUT = ROOT / "benchmarks" / "out" / "neural-models"
SYSTEMS = ["kbrd_redial", "kbrd_opendialkg", "barcor_redial", "barcor_opendialkg", "unicrs_redial", "unicrs_opendialkg"]


def rss_mb(field: str = "VmRSS") -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def ensure_models(models_dir: Path) -> None:
    marker = models_dir / ".complete"
    if marker.exists():
        return
    from tests.support.checkpoints import Sizes, fabricate

    started = time.time()
    print(f"writing real-size random checkpoints to {models_dir} (once) ...", flush=True)
    fabricate(models_dir, Sizes.real())
    marker.write_text("ok")
    print(f"  done in {time.time() - started:.0f} s", flush=True)


def dialogues(dataset: str, count: int, seed: int = 0) -> list[list[str]]:
    """User utterances of `count` evaluation dialogues (longest contexts, so turns are realistic)."""
    from crs.neural.kg import default_kg_dir

    path = default_kg_dir(dataset).parent / f"{dataset}_eval" / "test_data_processed.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    by_dialog: dict = {}
    for row in rows:
        context = row["context"]
        if len(context) > len(by_dialog.get(row["dialog_id"], [])):
            by_dialog[row["dialog_id"]] = context
    pool = [ctx for ctx in by_dialog.values() if len(ctx) >= 6]
    random.Random(seed).shuffle(pool)
    # even positions are the seeker's turns in these dialogues
    return [[u for i, u in enumerate(ctx) if i % 2 == 0 and u.strip()] for ctx in pool[:count]]


def run_one(name: str, models_dir: Path, turns: int, threads: int, max_new: int, quantize: str,
            neural_mode: str = "arena") -> dict:
    import torch

    from arena.runtime.config import Settings
    from arena.dialogue import Dialogue
    from crs.neural import neural_specs
    from crs.neural.variants import VARIANTS, RuntimeOptions

    mode = {"auto": None, "1": True, "0": False}[quantize]
    options = RuntimeOptions(threads=threads, max_new_tokens=max_new or None, quantize=mode, mode=neural_mode)
    settings = Settings.from_env(models_dir=models_dir)
    spec = next(s for s in neural_specs(settings, options=options) if s.name == name)
    problem = spec.check()
    if problem:
        raise SystemExit(str(problem))
    before = rss_mb()
    started = time.perf_counter()
    crs = spec.load()
    load_s = time.perf_counter() - started
    loaded = rss_mb()
    per_dialogue = 5
    plays = dialogues(VARIANTS[name].dataset, 4 * turns)
    latencies, cpu, actions, context_tokens = [], [], [], []
    for users in plays:
        if len(latencies) >= turns:
            break
        dialogue = Dialogue(crs_id=name)
        for text in users[:per_dialogue]:
            if len(latencies) >= turns:
                break
            dialogue.add_user(text)
            t0, c0 = time.perf_counter(), time.process_time()
            reply = crs.reply(dialogue)
            latencies.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
            actions.append(reply.action)
            dialogue.add_agent(reply.text, reply.items)
            context_tokens.append(sum(len(u.text.split()) for u in dialogue.utterances))
    ordered = sorted(latencies)
    return {
        "system": name, "mode": neural_mode, "threads": threads,
        "max_new_tokens": "original" if options.reference or not max_new else max_new,
        "quantized": options.quantizes(VARIANTS[name].family),
        "turns": len(latencies), "recommend_turns": actions.count("recommend"),
        "p50_s": round(statistics.median(ordered), 3),
        "p95_s": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 3),
        "mean_s": round(statistics.mean(ordered), 3), "max_s": round(ordered[-1], 3),
        "cpu_per_turn_s": round(statistics.mean(cpu), 3),
        "cpu_p50_s": round(statistics.median(cpu), 3),
        "cpu_p95_s": round(sorted(cpu)[min(len(cpu) - 1, int(0.95 * len(cpu)))], 3),
        "load_s": round(load_s, 1), "rss_loaded_mb": round(loaded), "rss_peak_mb": round(rss_mb("VmHWM")),
        "rss_before_load_mb": round(before), "mean_context_words": round(statistics.mean(context_tokens)),
        "loadavg_1m": round(os.getloadavg()[0], 1), "torch_threads": torch.get_num_threads(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--threads", default="1", help="comma-separated torch thread counts to compare")
    parser.add_argument("--max-new-tokens", default="64,24", help="reply length bounds; 0 = the originals'")
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--quantize", default="auto", help="comma-separated: 0 (fp32), 1 (int8), auto")
    parser.add_argument("--mode", default="arena", help="comma-separated neural modes: arena, reference")
    parser.add_argument("--models-dir", default=str(OUT))
    parser.add_argument("--json", help="also write the rows to this file")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # internal: run one configuration
    args = parser.parse_args()
    models_dir = Path(args.models_dir)
    if args.one:
        name, threads, max_new, quantize, neural_mode = args.one.split(":")
        print(json.dumps(run_one(name, models_dir, args.turns, int(threads), int(max_new), quantize, neural_mode)))
        return
    ensure_models(models_dir)
    rows = []
    configurations = [
        (name, threads, max_new, quantize, neural_mode)
        for neural_mode in args.mode.split(",")
        for name in args.systems.split(",")
        for quantize in args.quantize.split(",")
        for max_new in (int(x) for x in args.max_new_tokens.split(","))
        for threads in (int(x) for x in args.threads.split(","))
    ]
    for name, threads, max_new, quantize, neural_mode in configurations:
        command = [sys.executable, __file__, "--one", f"{name}:{threads}:{max_new}:{quantize}:{neural_mode}",
                   "--turns", str(args.turns), "--models-dir", str(models_dir)]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"{name} threads={threads} failed:\n{done.stderr[-2000:]}", flush=True)
            continue
        row = json.loads(done.stdout.strip().splitlines()[-1])
        rows.append(row)
        print(
            f"{row['system']:<18} mode={neural_mode} threads={threads} new_tokens={row['max_new_tokens']!s:<8} "
            f"int8={int(row['quantized'])} p50={row['p50_s']:.3f}s p95={row['p95_s']:.3f}s "
            f"mean={row['mean_s']:.3f}s cpu p50={row.get('cpu_p50_s', float('nan')):.3f}s "
            f"p95={row.get('cpu_p95_s', float('nan')):.3f}s rec={row['recommend_turns']}"
            f"/{row['turns']} load={row['load_s']}s rss={row['rss_loaded_mb']}MB peak={row['rss_peak_mb']}MB "
            f"loadavg={row['loadavg_1m']}",
            flush=True,
        )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
