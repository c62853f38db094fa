"""`python -m evaluators recall`: the iEvaLM offline Recall@k of any system that ranks items.

    python -m evaluators recall --crs chatcrs_redial --input test_data_processed.jsonl --out ranked.jsonl

Each input line is an iEvaLM processed turn: `context` (utterances alternating
user/system, starting and ending with the user) and `rec` (the target item
names). Each output line, in input order, carries the line's `dialog_id` and
`turn_id` and `items`: the system's ranking as catalog names (`--k`, at least
50). Recall@k counts every target of every turn as one sample, as iEvaLM and
UniCRS do, and items already mentioned in the context stay rankable. A line
that cannot be read gets `items: []` and an `error`, is reported on one line
and does not count.

A system ranks items when it has `recommend(dialogue, k)` returning its ranked
`RecommendedItem`s (ChatCRS and the neural systems do).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

from arena.catalogs.catalog import load_catalog
from arena.dialogue import Dialogue
from arena.runtime.imports import heavy_imports
from crs.recommender.training import recall_per_target

KS = {"redial": (1, 10, 50), "opendialkg": (1, 10, 25)}
MIN_ITEMS = 50


def dialogue_from_context(context: Sequence[str], crs_id: str = "") -> Dialogue:
    """User and system turns alternate, starting with the user."""
    dialogue = Dialogue(crs_id=crs_id or "offline")
    for index, text in enumerate(context):
        if index % 2 == 0:
            dialogue.add_user(str(text))
        else:
            dialogue.add_agent(str(text))
    return dialogue


def _names(catalog: Any, items) -> list[str]:
    """Catalog names (as the dataset writes them, which the targets use) of ranked items."""
    out = []
    for item in items:
        found = catalog.get(item.item_id) if catalog is not None else None
        out.append(found.name if found is not None else item.title)
    return out


def rank_file(system: Any, lines: Iterable[str], k: int, out, crs_id: str = "",
              catalog: Any = None) -> tuple[list[list[str]], list[list[str]], list[float], int]:
    """Rank every line; writes one JSON line each to `out`. Returns rankings, targets,
    per-call seconds and the number of unreadable lines. `catalog` maps item ids to
    names (default: the system's own)."""
    catalog = catalog if catalog is not None else getattr(system, "catalog", None)
    rankings, targets, seconds, bad = [], [], [], 0
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            context = row["context"]
            if not isinstance(context, list) or not context:
                raise ValueError("'context' must be a non-empty list of utterances")
        except (ValueError, KeyError, TypeError) as exc:
            bad += 1
            print(f"line {number}: skipped, not an iEvaLM turn ({exc})", file=sys.stderr)
            out.write(json.dumps({"line": number, "items": [], "error": str(exc)}) + "\n")
            continue
        started = time.perf_counter()
        items = _names(catalog, system.recommend(dialogue_from_context(context, crs_id), k))
        seconds.append(time.perf_counter() - started)
        out.write(json.dumps({"dialog_id": row.get("dialog_id"), "turn_id": row.get("turn_id"),
                              "items": items}, ensure_ascii=False) + "\n")
        rankings.append(items)
        targets.append([str(t) for t in row.get("rec") or ()])
    return rankings, targets, seconds, bad


def load_system(name: str) -> tuple[Optional[Any], Optional[str], str]:
    """(system, why it cannot rank, dataset)."""
    from arena.runtime.config import Settings
    from arena.llm import build_client
    with heavy_imports():
        from crs.chatcrs import chatcrs_specs
    from crs.registry import CRSRegistry

    settings = Settings.from_env()
    specs = list(chatcrs_specs(lambda: build_client(settings), settings.cache_dir))
    try:
        from crs.neural import neural_specs

        specs.extend(neural_specs(settings))
    except ImportError as exc:
        if name not in {s.name for s in specs}:
            return None, f"{name} needs the neural stack, which is not installed here ({exc})", ""
    from crs.systems import external_system_specs  # the systems of ARENA_SYSTEMS rank too

    specs.extend(external_system_specs(settings, frozenset(s.name for s in specs)))
    registry = CRSRegistry(specs)
    if name not in registry.names:
        return None, f"unknown system {name!r}; known: {', '.join(registry.names)}", ""
    dataset = registry.spec(name).dataset
    problem = registry.problem(name)
    if problem is not None:
        return None, str(problem), dataset
    system = registry.get(name)
    if not callable(getattr(system, "recommend", None)):
        return None, f"{name} does not expose an item ranking (no recommend(dialogue, k))", dataset
    return system, None, dataset


def cmd_recall(args) -> int:
    system, problem, dataset = load_system(args.crs)
    if problem is not None:
        print(problem, file=sys.stderr)
        return 2
    k = max(MIN_ITEMS, args.k)
    source = Path(args.input)
    if not source.exists():
        print(f"no input file at {source}", file=sys.stderr)
        return 2
    out_path = Path(args.out)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with source.open(encoding="utf-8") as lines, out_path.open("w", encoding="utf-8") as out:
        catalog = getattr(system, "catalog", None) or load_catalog(dataset)
        rankings, targets, seconds, bad = rank_file(system, lines, k, out, args.crs, catalog)
    ks = KS.get(dataset, (1, 10, 50))
    scores, samples = recall_per_target(rankings, targets, ks)
    version = getattr(getattr(system, "recommender", None), "version", "")
    print(f"{args.crs} on {source.name}: {len(rankings)} turns, {samples} target items"
          + (f", {bad} unreadable lines skipped" if bad else "") + (f" [{version}]" if version else ""))
    print("  ".join(f"Recall@{k} {scores[k]:.3f}" for k in ks))
    if seconds:
        ordered = sorted(seconds)
        print(f"per call: p50 {ordered[len(ordered) // 2] * 1000:.0f} ms, "
              f"p95 {ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))] * 1000:.0f} ms")
    return 0


def add_parser(sub) -> None:
    p = sub.add_parser("recall", help="iEvaLM offline Recall@k of a system's item ranking",
                       description=__doc__.splitlines()[0])
    p.add_argument("--crs", required=True, help="system name, e.g. chatcrs_redial")
    p.add_argument("--input", required=True, help="iEvaLM processed turns (.jsonl)")
    p.add_argument("--out", required=True, help="where to write the ranked items (.jsonl)")
    p.add_argument("--k", type=int, default=MIN_ITEMS, help="items per line (at least 50)")
    p.set_defaults(func=cmd_recall)
