"""Per-turn target metrics recorded by the target-based simulators.

* Recall@k at turn t (iEvaLM): share of the target items among the first k
  items the system showed in its t-th reply.
* Preference Coverage at turn t (PEPPER): share of the target items shown in
  any reply up to turn t (a cumulative union), and its per-turn increase.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Optional, Sequence

from arena.dialogue import Dialogue, RecommendedItem
from simulators.titles import normalize_title

RECALL_KS = (1, 5, 10, 50)


def _keys(item_id: str, title: str) -> set[str]:
    keys = {f"title:{normalize_title(title)}"} if title else set()
    if item_id:
        keys.add(f"id:{item_id}")
    return keys


def target_ids(targets: Iterable[Mapping[str, Optional[str]]]) -> list[str]:
    """Targets as the scorers read them: the catalog id, or the title when the item has none."""
    return [str(t.get("item_id") or t.get("title")) for t in targets if t.get("item_id") or t.get("title")]


def target_keys(targets: Iterable[Mapping[str, str]]) -> list[set[str]]:
    return [_keys(str(t.get("item_id") or ""), str(t.get("title") or "")) for t in targets]


def is_target(item: RecommendedItem, targets: Sequence[set[str]]) -> bool:
    keys = _keys(item.item_id, item.title)
    return any(keys & t for t in targets)


def hits(items: Sequence[RecommendedItem], targets: Sequence[set[str]]) -> set[int]:
    """Indices of the targets found among `items`."""
    found: set[int] = set()
    for item in items:
        keys = _keys(item.item_id, item.title)
        found.update(i for i, t in enumerate(targets) if keys & t)
    return found


def recall_at(items: Sequence[RecommendedItem], targets: Sequence[set[str]], k: int) -> float:
    if not targets:
        return 0.0
    return len(hits(items[:k], targets)) / len(targets)


def per_turn_recall(
    dialogue: Dialogue, targets: Iterable[Mapping[str, str]], ks: Sequence[int] = RECALL_KS
) -> list[dict[str, float]]:
    """One entry per system reply: {"turn": t, "recall@k": ...}."""
    keys = target_keys(targets)
    rows = []
    for turn, reply in enumerate(dialogue.agent_turns(), 1):
        row: dict[str, float] = {"turn": turn, "shown": len(reply.items)}
        row.update({f"recall@{k}": recall_at(reply.items, keys, k) for k in ks})
        rows.append(row)
    return rows


def preference_coverage(
    dialogue: Dialogue, targets: Iterable[Mapping[str, str]], k: int = 5
) -> list[dict[str, float]]:
    """Cumulative coverage of the targets by the top-k shown items, per system reply."""
    keys = target_keys(targets)
    covered: set[int] = set()
    rows = []
    previous = 0.0
    for turn, reply in enumerate(dialogue.agent_turns(), 1):
        covered |= hits(reply.items[:k], keys)
        value = len(covered) / len(keys) if keys else 0.0
        rows.append({"turn": turn, "pc": value, "increase": value - previous})
        previous = value
    return rows
