"""Dialogues for the ChatCRS tests: user and agent turns alternate, starting with the user."""

from __future__ import annotations

from arena.dialogue import Dialogue, RecommendedItem


def dialogue(*turns: str, items_after: dict[int, list[RecommendedItem]] | None = None) -> Dialogue:
    d = Dialogue(crs_id="chatcrs_redial")
    for n, text in enumerate(turns):
        if n % 2 == 0:
            d.add_user(text)
        else:
            d.add_agent(text, items=(items_after or {}).get(n, []))
    return d
