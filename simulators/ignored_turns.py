"""Turns of the simulated user that the system ignored, read from the dialogue itself.

A person who asked "what is it about?" and got a new list, or turned a title
down and was offered it again, does not leave satisfied; `finalize` lowers a
satisfied verdict when this happened (see `simulators.base`).

- an ignored question: the user asked about something already shown ("is it
  ok for kids?", "who directed <title>?") and the reply was a new list of two
  or more items;
- an ignored rejection: a title the user turned down ("didn't like <title>",
  "<title> is not for me") was shown again later.

The user's words are read by the same reader as the systems' (`arena.reading.acts`).
"""

from __future__ import annotations

from arena.dialogue import Dialogue, Role
from arena.reading.acts import question_aspect, turns_down


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
        if shown_so_far and question_aspect(text) is not None and reply is not None and len(reply.items) >= 2:
            out.append(f"asked {text!r} and got a new list")
        lowered = text.lower()
        for item in shown_so_far:
            name = item.title.lower().split(" (")[0]
            where = lowered.find(name) if name else -1
            if where >= 0 and turns_down(lowered[max(0, where - 30):where + len(name) + 30]):
                turned_down[item.item_id] = text
    return out
