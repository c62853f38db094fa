"""Turns of the simulated user that the system ignored, read from the dialogue itself.

A person who asked "what is it about?" and got a new list, or turned a title
down and was offered it again, does not leave satisfied; `finalize` lowers a
satisfied verdict when this happened (see `simulators.base`).

- an ignored question: the user asked about something already shown ("is it
  ok for kids?", "who directed <title>?") and the reply was a new list of two
  or more items;
- an ignored rejection: a title the user turned down ("didn't like <title>",
  "<title> is not for me") was shown again later.
"""

from __future__ import annotations

import re

from arena.dialogue import Dialogue, Role

_ITEM_QUESTION = re.compile(
    r"^\W*(what|who|when|which|is|does|was|how)\b.*\b(it|that|this|one|about|direct\w*|star\w*|in it|year|"
    r"kids?|child\w*|scary|old)\b.*\?", re.IGNORECASE)
# Only a plain no counts: "seen it, loved it" shown again is a repeat, not an ignored rejection.
_TURN_DOWN = re.compile(r"\b(not (for me|my thing|that)|no thanks|didn'?t like|don'?t like|hated?|dislike[ds]?|"
                        r"not interested|boring)\b", re.IGNORECASE)


def ignored_turns(dialogue: Dialogue) -> list[str]:
    """One line per ignored question or rejection, in order."""
    out: list[str] = []
    utterances = dialogue.utterances
    shown_so_far: list = []
    turned_down: dict[str, str] = {}  # item id -> the user's message
    for index, utterance in enumerate(utterances):
        if utterance.role == Role.AGENT:
            for item in utterance.items:
                if item.item_id in turned_down:
                    out.append(f"turned down, then shown again: {item.title}")
                    turned_down.pop(item.item_id)
            shown_so_far += utterance.items
            continue
        text = utterance.text or ""
        reply = next((u for u in utterances[index + 1:] if u.role == Role.AGENT), None)
        if shown_so_far and _ITEM_QUESTION.search(text) and reply is not None and len(reply.items) >= 2:
            out.append(f"asked {text!r} and got a new list")
        lowered = text.lower()
        for item in shown_so_far:
            name = item.title.lower().split(" (")[0]
            where = lowered.find(name) if name else -1
            if where >= 0 and _TURN_DOWN.search(lowered[max(0, where - 30):where + len(name) + 30]):
                turned_down[item.item_id] = text
    return out
