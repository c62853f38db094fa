"""A conversation under way, marked on its chatbot for the page script (`webapp.ui.parts.page_script`).

A conversation is under way from its first message until its verdict (a Chat conversation rated, a battle
voted): leaving it then would lose what was said. Its chatbot carries the `under-way` class while it is, so
the page asks before "New battle", "New conversation", another system in Chat's dropdown, or closing the
page. The class is set with every update that changes the answer, as part of the chatbot's update.
"""

from __future__ import annotations

from typing import Any, Optional

import gradio as gr

from arena.dialogue import Dialogue
from webapp.ui.parts.page_script import UNDER_WAY

CHATBOT_CLASSES = ["worker-chat"]  # the participant chatbots' own classes (webapp.ui.parts.style)


def chat_under_way(dialogue: Optional[Dialogue]) -> bool:
    """A Chat conversation with a message sent and no rating yet."""
    return dialogue is not None and bool(dialogue.utterances) and dialogue.feedback is None


def chatbot(messages: Any, under_way: bool) -> Any:
    """The chatbot's update: `messages` (or `gr.skip()`), with the mark when the conversation is under way."""
    classes = CHATBOT_CLASSES + ([UNDER_WAY] if under_way else [])
    if messages is None:
        return gr.Chatbot(elem_classes=classes)
    return gr.Chatbot(value=messages, elem_classes=classes)


# The `js` of an event that leaves the conversation in `chatbots` and cannot be stopped in the page (a
# dropdown has already changed when its event runs): its input at `index` (a hidden Checkbox) becomes
# whether the participant agreed to leave; the handler puts things back when they did not.
def leave_js(chatbots: list[str], index: int) -> str:
    ids = ", ".join(f"'{c}'" for c in chatbots)
    return (f"(...args) => {{ args[{index}] = window.crsArenaLeave ? window.crsArenaLeave([{ids}]) : true;"
            " return args; }")
