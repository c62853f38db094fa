"""Turning dialogues into safe text for Gradio components.

Everything a user or a model wrote is escaped before display: no raw HTML
or script from a message can reach the page.
"""

from __future__ import annotations

import html
import re
from typing import Iterable, Optional

from arena.dialogue import Dialogue, RecommendedItem, Role

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|>~])")


def escape_text(text: str) -> str:
    """Escape HTML and Markdown so text is shown literally."""
    return _MD_SPECIAL.sub(r"\\\1", html.escape(text, quote=False))


def chat_messages(dialogue: Optional[Dialogue]) -> list[dict[str, str]]:
    """Chatbot messages (role/content dicts), escaped."""
    if dialogue is None:
        return []
    out = []
    for utt in dialogue.utterances:
        role = "user" if utt.role == Role.USER else "assistant"
        out.append({"role": role, "content": escape_text(utt.text)})
    return out


def items_markdown(items: Iterable[RecommendedItem], limit: int = 5, heading: str = "Recommended") -> str:
    items = list(items)[:limit]
    if not items:
        return f"**{heading}:** nothing yet."
    lines = [f"**{heading}:**", ""]
    lines += [f"{rank}. {escape_text(item.title)}" for rank, item in enumerate(items, 1)]
    return "\n".join(lines)


def latest_items(dialogue: Optional[Dialogue]) -> list[RecommendedItem]:
    if dialogue is None:
        return []
    for utt in reversed(dialogue.agent_turns()):
        if utt.items:
            return list(utt.items)
    return []


def scores_markdown(dialogue: Dialogue) -> str:
    if not dialogue.scores:
        return "_Scores are being computed; refresh in a moment._"
    lines = ["| metric | value | scorer | model |", "|---|---|---|---|"]
    for name, score in sorted(dialogue.scores.items()):
        value = "unscored" if score.value is None else f"{score.value:.3g}"
        lines.append(
            f"| {escape_text(name)} | {value} | {escape_text(score.scorer + ' ' + score.version)} "
            f"| {escape_text(score.model or '-')} |"
        )
    return "\n".join(lines)
