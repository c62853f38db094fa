"""Per-turn target metrics recorded by the target-based simulators (computed by `arena.target_metrics`).

* Recall@k at turn t (iEvaLM): share of the target items among the first k
  items the system showed in its t-th reply.
* Preference Coverage at turn t (PEPPER): share of the target items shown in
  any reply up to turn t (a cumulative union), and its per-turn increase.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Optional, Sequence

from arena.dialogue import Dialogue, RecommendedItem
from arena.target_metrics import (
    Recommendation,
    TargetKeys,
    coverage_increase,
    coverage_per_turn,
    hits,
    recall_at,
    target_keys,
)

RECALL_KS = (1, 5, 10, 50)


def _recommendations(items: Sequence[RecommendedItem]) -> list[Recommendation]:
    return [(item.item_id, item.title) for item in items]


def target_ids(targets: Iterable[Mapping[str, Optional[str]]]) -> list[str]:
    """Targets as the scorers read them: the catalog id, or the title when the item has none."""
    return [str(t.get("item_id") or t.get("title")) for t in targets if t.get("item_id") or t.get("title")]


def is_target(item: RecommendedItem, targets: Sequence[TargetKeys]) -> bool:
    return bool(hits([(item.item_id, item.title)], targets))


def per_turn_recall(
    dialogue: Dialogue, targets: Iterable[Mapping[str, str]], ks: Sequence[int] = RECALL_KS
) -> list[dict[str, float]]:
    """One entry per system reply: {"turn": t, "recall@k": ...}."""
    keys = target_keys(targets)
    rows = []
    for turn, reply in enumerate(dialogue.agent_turns(), 1):
        recommendations = _recommendations(reply.items)
        row: dict[str, float] = {"turn": turn, "shown": len(reply.items)}
        row.update({f"recall@{k}": recall_at(recommendations, keys, k) for k in ks})
        rows.append(row)
    return rows


def preference_coverage(
    dialogue: Dialogue, targets: Iterable[Mapping[str, str]], k: int = 5
) -> list[dict[str, float]]:
    """Cumulative coverage of the targets by the top-k shown items, per system reply."""
    turns = [_recommendations(reply.items) for reply in dialogue.agent_turns()]
    pc = coverage_per_turn(turns, target_keys(targets), k)
    return [{"turn": turn, "pc": value, "increase": increase}
            for turn, (value, increase) in enumerate(zip(pc, coverage_increase(pc)), 1)]
