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

from arena.dialogue import Dialogue

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


def recall_at(rankings: Iterable[Sequence[str]], targets: Iterable[Sequence[str]], ks: Sequence[int]) -> tuple[dict[int, float], int]:
    """(Recall@k for each k, number of samples): each target of each turn is one sample."""
    hits = {k: 0 for k in ks}
    samples = 0
    for ranking, wanted in zip(rankings, targets):
        position = {name: i for i, name in reversed(list(enumerate(ranking)))}
        for target in wanted:
            samples += 1
            where = position.get(target)
            for k in ks:
                hits[k] += where is not None and where < k
    return ({k: (hits[k] / samples if samples else 0.0) for k in ks}, samples)


def _names(system: Any, items) -> list[str]:
    """Catalog names ("Title (Year)" as the dataset writes it) of ranked items."""
    catalog = getattr(system, "catalog", None)
    out = []
    for item in items:
        found = catalog.get(item.item_id) if catalog is not None else None
        out.append(found.name if found is not None else item.title)
    return out


def rank_file(system: Any, lines: Iterable[str], k: int, out, crs_id: str = "") -> tuple[list[list[str]], list[list[str]], list[float], int]:
    """Rank every line; writes one JSON line each to `out`. Returns rankings, targets,
    per-call seconds and the number of unreadable lines."""
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
        items = _names(system, system.recommend(dialogue_from_context(context, crs_id), k))
        seconds.append(time.perf_counter() - started)
        out.write(json.dumps({"dialog_id": row.get("dialog_id"), "turn_id": row.get("turn_id"),
                              "items": items}, ensure_ascii=False) + "\n")
        rankings.append(items)
        targets.append([str(t) for t in row.get("rec") or ()])
    return rankings, targets, seconds, bad


def load_system(name: str) -> tuple[Optional[Any], Optional[str], str]:
    """(system, why it cannot rank, dataset)."""
    from arena.config import Settings
    from arena.llm import build_client
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
        rankings, targets, seconds, bad = rank_file(system, lines, k, out, args.crs)
    ks = KS.get(dataset, (1, 10, 50))
    scores, samples = recall_at(rankings, targets, ks)
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
