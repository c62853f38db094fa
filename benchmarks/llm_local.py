"""Speed of the local SmolLM2-135M-Instruct provider with each engine.

For every backend: load time, prompt processing (prefill) speed on a ~600-token
prompt, and generation speed on replies of up to --max-tokens tokens, greedy.
Each run changes the start of the prompt so no engine can reuse a cached prefix.

    HF_HUB_OFFLINE=1 python benchmarks/llm_local.py [--runs 3] [--max-tokens 128] [--write]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.llm import LLMClient, LocalProvider  # noqa: E402
from arena.llm.cache import ResponseCache  # noqa: E402
from arena.llm.local import ctranslate2_available, llama_cpp_available  # noqa: E402

# Raw output, not tracked: the figures of record are in BENCHMARKS.md.
RESULTS = Path(__file__).resolve().parent / "out" / "llm.md"
HISTORY = " ".join(
    f"User: I watched film number {i} last week and liked its story. "
    f"Assistant: Then you may enjoy film {i + 1}."
    for i in range(24)
)


def _messages(run: int, long: bool) -> list[dict[str, str]]:
    system = f"Session {run}. You are a friendly movie recommender."
    if long:
        return [{"role": "system", "content": system},
                {"role": "user", "content": HISTORY + " Summarise my taste in one word."}]
    return [{"role": "system", "content": system},
            {"role": "user", "content": "List ten classic science fiction films, one sentence on each."}]


def bench_backend(backend: str, runs: int, max_tokens: int, threads: int | None) -> dict[str, float]:
    started = time.perf_counter()
    provider = LocalProvider(backend=backend, n_threads=threads)
    provider.engine  # noqa: B018 - loads the model
    load_s = time.perf_counter() - started
    client = LLMClient(provider)
    client.complete(_messages(-1, False), max_tokens=8, use_cache=False)  # warm-up

    prefill_tps, gen_tps, gen_tokens = [], [], []
    for run in range(runs):
        t0 = time.perf_counter()
        response = client.complete(_messages(run, True), max_tokens=1, use_cache=False)
        prefill_tps.append(response.prompt_tokens / (time.perf_counter() - t0))
        prompt_tokens = response.prompt_tokens

        short = _messages(1000 + run, False)
        t0 = time.perf_counter()
        first = client.complete(short, max_tokens=1, use_cache=False)
        one_token_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        response = client.complete(_messages(2000 + run, False), max_tokens=max_tokens, use_cache=False)
        total_s = time.perf_counter() - t0
        # Decode speed: wall time minus what prompt processing and the first token cost.
        decode_tokens = max(response.completion_tokens - first.completion_tokens, 1)
        gen_tps.append(decode_tokens / max(total_s - one_token_s, 1e-6))
        gen_tokens.append(response.completion_tokens)
    return {
        "load_s": load_s,
        "prompt_tokens": prompt_tokens,
        "prefill_tps": statistics.median(prefill_tps),
        "gen_tps": statistics.median(gen_tps),
        "gen_tokens": statistics.median(gen_tokens),
    }


def bench_cache(tmp: Path) -> float:
    """Seconds for a cache hit through LLMClient (no model involved)."""
    from arena.llm import FakeProvider

    client = LLMClient(FakeProvider(default="cached answer"), cache=ResponseCache(tmp))
    messages = _messages(0, True)
    client.complete(messages)
    t0 = time.perf_counter()
    for _ in range(200):
        assert client.complete(messages).cached
    return (time.perf_counter() - t0) / 200


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--backends", nargs="+", default=["ctranslate2", "llama_cpp", "transformers"])
    parser.add_argument("--threads", nargs="+", type=int, default=sorted({1, os.cpu_count() or 1}),
                        help="llama.cpp and CTranslate2 thread counts to compare")
    parser.add_argument("--write", action="store_true", help=f"write the table to {RESULTS}")
    args = parser.parse_args()

    rows = []
    load_before = os.getloadavg()[0]
    for backend in args.backends:
        if backend == "llama_cpp" and not llama_cpp_available():
            print("llama_cpp: skipped (llama-cpp-python not installed)")
            continue
        if backend == "ctranslate2" and not ctranslate2_available():
            print("ctranslate2: skipped (ctranslate2 not installed)")
            continue
        for threads in args.threads if backend in ("llama_cpp", "ctranslate2") else [None]:
            label = f"{backend} ({threads} thread{'s' if threads > 1 else ''})" if threads else backend
            r = bench_backend(backend, args.runs, args.max_tokens, threads)
            rows.append((label, r))
            print(f"{label:24s} load {r['load_s']:.1f} s | prefill {r['prefill_tps']:.0f} tok/s "
                  f"({r['prompt_tokens']} prompt tokens) | generation {r['gen_tps']:.1f} tok/s "
                  f"(median reply {r['gen_tokens']:.0f} tokens)", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        hit_ms = bench_cache(Path(tmp)) * 1000
    print(f"cache hit through LLMClient: {hit_ms:.2f} ms")

    if args.write:
        command = f"python benchmarks/llm_local.py --runs {args.runs} --max-tokens {args.max_tokens} --write"
        load_after = os.getloadavg()[0]
        lines = [
            "# LLM: local SmolLM2-135M-Instruct (Q4_1 GGUF) speed",
            "",
            f"Machine: {platform.machine()}, {os.cpu_count()} CPU cores, no GPU, Python "
            f"{platform.python_version()}. Command: `{command}`.",
            f"Greedy decoding, medians of {args.runs} runs.",
            f"Load average {load_before:.1f} before and {load_after:.1f} after: other work shared the cores.",
            "",
            "| backend | load (s) | prompt processing (tok/s) | generation (tok/s) |",
            "|---|---:|---:|---:|",
        ]
        for label, r in rows:
            lines.append(f"| {label} | {r['load_s']:.1f} | {r['prefill_tps']:.0f} | {r['gen_tps']:.1f} |")
        prompt_tokens = rows[0][1]["prompt_tokens"] if rows else "?"
        lines += [
            "",
            f"Prompt processing measured on a {prompt_tokens}-token prompt; generation on replies of up to "
            f"{args.max_tokens} tokens. A cache hit through `LLMClient` takes {hit_ms:.2f} ms.",
            "",
        ]
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text("\n".join(lines), encoding="utf-8")
        print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
