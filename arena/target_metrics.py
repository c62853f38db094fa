"""Recall@k and preference coverage: how many of a seeker's target items a system recommended.

The one implementation, used by the scorers (`evaluators.metrics`) and by the
simulators that record them per turn (`simulators.metrics`).

A target is an item id or a title (a string), or a mapping with "item_id"
and/or "title"; a recommendation is an (item id or None, title) pair. They
match when the ids are equal or the titles have the same `arena.titles.names.title_key`.

- Recall@k at turn t = |P_t ∩ Y| / |Y|, with P_t the first k recommendations of
  the t-th system reply and Y the targets.
- PC_t = |(P_1 ∪ … ∪ P_t) ∩ Y| / |Y| (preference coverage after t replies);
  PCIR_t = PC_t − PC_{t−1} with PC_0 = 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Iterable, Optional, Sequence, Union

from arena.titles.names import title_key

Recommendation = tuple[Optional[str], str]  # (item id or None, title)
Target = Union[str, Mapping[str, Optional[str]]]
TargetKeys = frozenset[str]


def match_keys(item_id: Optional[str], title: Optional[str]) -> TargetKeys:
    """What an item can be recognised by: its id and its title key."""
    keys = set()
    if item_id:
        keys.add(f"id:{item_id}")
    key = title_key(title) if title else ""
    if key:
        keys.add(f"title:{key}")
    return frozenset(keys)


def target_keys(targets: Iterable[Target]) -> list[TargetKeys]:
    """One key set per target; a bare string may be either an id or a title."""
    out = []
    for target in targets:
        if isinstance(target, Mapping):
            out.append(match_keys(str(target.get("item_id") or ""), str(target.get("title") or "")))
        else:
            out.append(match_keys(str(target), str(target)))
    return out


def hits(recommendations: Iterable[Recommendation], targets: Sequence[TargetKeys]) -> set[int]:
    """Indices of the targets found among the recommendations."""
    found: set[int] = set()
    for item_id, title in recommendations:
        keys = match_keys(item_id, title)
        found.update(i for i, target in enumerate(targets) if keys & target)
    return found


def recall_at(recommendations: Sequence[Recommendation], targets: Sequence[TargetKeys], k: int) -> float:
    """Share of the targets among the first k recommendations (0.0 without targets)."""
    if not targets:
        return 0.0
    return len(hits(recommendations[:k], targets)) / len(targets)


def coverage_per_turn(turns: Iterable[Sequence[Recommendation]], targets: Sequence[TargetKeys],
                      k: int) -> list[float]:
    """PC_t after each turn: the share of targets among the first k recommendations of any turn so far."""
    covered: set[int] = set()
    out = []
    for recommendations in turns:
        covered |= hits(recommendations[:k], targets)
        out.append(len(covered) / len(targets) if targets else 0.0)
    return out


def coverage_increase(pc: Sequence[float]) -> list[float]:
    """PCIR_t = PC_t − PC_{t−1}, with PC_0 = 0."""
    return [b - a for a, b in zip([0.0, *pc[:-1]], pc)]
