"""Turning dialogues into safe text for Gradio components.

Everything a user or a model wrote is escaped before display: no raw HTML
or script from a message can reach the page.
"""

from __future__ import annotations

import functools
from typing import Iterable, Optional

from arena.catalogs.catalog import DATASETS, load_catalog, split_name
from arena.dialogue import Dialogue, RecommendedItem, Role, Utterance
from arena.text_safety import escape_text
from arena.titles.names import split_year, title_variants
from arena.titles.phrases import normalize



def chat_messages(dialogue: Optional[Dialogue]) -> list[dict[str, str]]:
    """Chatbot messages (role/content dicts), escaped."""
    if dialogue is None:
        return []
    out = []
    for utt in dialogue.utterances:
        role = "user" if utt.role == Role.USER else "assistant"
        out.append({"role": role, "content": escape_text(utt.text)})
    return out


# The chatbot buttons a participant gets: copying a message; not sharing the conversation to a hub
# (Gradio's default), which would publish it outside the study's consent. Gradio always adds a Clear button;
# the `worker-chat` class hides it (webapp.ui.parts.style).
WORKER_CHATBOT_BUTTONS = ["copy"]


# Shown as the system's message while it writes its reply (styled by `webapp.ui.parts.style`).
TYPING_TEXT = "typing…"


def typing_message() -> dict[str, str]:
    return {"role": "assistant",
            "content": f'<span class="typing-indicator" role="status">{TYPING_TEXT}</span>'}


def echo_messages(dialogue: Optional[Dialogue], text: str) -> list[dict[str, str]]:
    """The conversation as it looks the moment a message is sent: the message, then the typing indicator."""
    return [*chat_messages(dialogue), {"role": "user", "content": escape_text(text)}, typing_message()]


def plural(count: int, noun: str, nouns: Optional[str] = None) -> str:
    """"1 battle", "2 battles" ("0 battles")."""
    return f"{count} {noun if count == 1 else (nouns or noun + 's')}"


def items_markdown(items: Iterable[RecommendedItem], limit: int = 5, heading: str = "Recommended") -> str:
    items = list(items)[:limit]
    if not items:
        return f"**{heading}:** nothing yet."
    lines = [f"**{heading}:**", ""]
    lines += [f"{rank}. {escape_text(uniform_title(item.title))}" for rank, item in enumerate(items, 1)]
    return "\n".join(lines)


@functools.lru_cache(maxsize=8192)
def uniform_title(title: str) -> str:
    """Every system's items in one format, "Title (Year)" (just "Title" when no catalog knows the year).

    Systems name items differently (one dataset's names carry the year, the
    other's a qualifier such as "(Science Fiction Film)"), which would tell a
    battle's systems apart; the year comes from the shipped catalogs.
    """
    bare, year = split_name(title, "opendialkg")
    if year is None:
        for name in DATASETS:
            try:
                item = load_catalog(name).exact_title(bare)
            except (OSError, ValueError):  # a catalog that is not installed changes nothing
                item = None
            if item is not None and item.year:
                year = item.year
                break
    return f"{bare} ({year})" if year else bare


def named_items(utterance: Utterance) -> list[RecommendedItem]:
    """The items a reply names, in the order it names them. A system may attach more items than its text
    names (its ranked list); the Recommended panel shows what the reply presents, so that the panel and
    the text agree ("the reply names three, the panel lists five" was the complaint)."""
    haystack = f" {normalize(utterance.text or '')} "
    found = []
    for rank, item in enumerate(utterance.items):
        # The same whole-word match as `arena.titles.names.mentions_title` (short one-word keys are skipped,
        # "Up" is a word before it is a film), plus the title as written with its year: "Up (2009)".
        keys = [*title_variants(item.title), normalize(item.title), normalize(split_year(item.title)[0])]
        places = [haystack.find(f" {key} ") for key in keys
                  if key and (len(key) >= 3 or " " in key) and f" {key} " in haystack]
        if places:
            found.append((min(places), rank, item))
    return [item for _, _, item in sorted(found, key=lambda f: (f[0], f[1]))]


def latest_items(dialogue: Optional[Dialogue]) -> list[RecommendedItem]:
    """What the Recommended panel shows: the items the latest reply that names any of its items names."""
    if dialogue is None:
        return []
    for utt in reversed(dialogue.agent_turns()):
        named = named_items(utt) if utt.items else []
        if named:
            return named
    return []
