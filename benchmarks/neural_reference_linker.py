"""Entity linking per utterance: the arena's catalog linker against reference mode's.

Reference mode links every utterance as the code CRS Arena ran did: rapidfuzz
WRatio against every entity name of the knowledge graph, the 20 best kept when
they score 90 or more. `crs.neural.reference.reference_linker` passes the 90
as a score cutoff, which lets rapidfuzz skip most names early; this script
times it against the literal rule (score all, then filter) and checks that
both give the same ids, on the seekers' messages of the public ReDial
validation dialogues (movie mentions written out).

    HF_HUB_OFFLINE=1 nice -n 10 python benchmarks/neural_reference_linker.py [--messages 200]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DIALOGUES = ROOT.parent / "shared" / "data" / "redial_dialogues" / "valid_data.jsonl"


def user_messages(limit: int) -> list[str]:
    messages = []
    for line in DIALOGUES.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        mentions = row.get("movieMentions") or {}
        for message in row["messages"]:
            if message["senderWorkerId"] == row["initiatorWorkerId"]:
                text = message["text"]
                for movie_id, title in mentions.items():
                    text = text.replace(f"@{movie_id}", title or "")
                messages.append(text)
                if len(messages) >= limit:
                    return messages
    return messages


def timed(link, messages: list[str]) -> tuple[list, list[float]]:
    results, times = [], []
    for text in messages:
        started = time.perf_counter()
        results.append(link(text))
        times.append(time.perf_counter() - started)
    return results, times


def summary(times: list[float]) -> str:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"p50 {statistics.median(ordered) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=200)
    args = parser.parse_args()
    from rapidfuzz import fuzz, process

    from arena.catalogs.catalog import load_catalog
    from crs.neural.kg import KnowledgeGraph, default_kg_dir
    from crs.neural.reference import reference_linker
    from crs.neural.system import catalog_linker

    messages = user_messages(args.messages)
    print(f"{len(messages)} ReDial seeker messages")
    for dataset in ("redial", "opendialkg"):
        kg = KnowledgeGraph.load(default_kg_dir(dataset))
        names = list(kg.entity2id)

        def literal(text: str) -> list[int]:
            best = process.extract(text, names, scorer=fuzz.WRatio, limit=20)
            return [kg.entity2id[name] for name, score, _ in best if score >= 90]

        fast, fast_times = timed(reference_linker(kg), messages)
        slow, slow_times = timed(literal, messages)
        catalog, catalog_times = timed(catalog_linker(load_catalog(dataset), kg), messages)
        same = sum(a == b for a, b in zip(fast, slow))
        linked = statistics.mean(len(ids) for ids in fast)
        print(f"{dataset} ({len(names)} names): reference linker {summary(fast_times)}; literal rule "
              f"{summary(slow_times)}; same ids {same}/{len(messages)}; {linked:.1f} entities per message "
              f"(catalog linker {summary(catalog_times)}, "
              f"{statistics.mean(len(ids) for ids in catalog):.1f} per message)")


if __name__ == "__main__":
    main()
