"""A conversation under way, marked on its message box for the page script (`webapp.ui.parts.page_script`).

A conversation is under way from its first message until its verdict (a Chat conversation rated, a battle
voted): leaving it then would lose what was said. Its message box carries the `under-way` class while it
is, so the page asks before "New battle", "New conversation", another system in Chat's dropdown, or closing
the page. The mark rides on the box's update, which every handler that changes the answer sends anyway
(the chatbot's value stays a plain list of messages for API clients).
"""

from __future__ import annotations

from typing import Any, Optional

import gradio as gr

from arena.dialogue import Dialogue
from webapp.ui.parts.page_script import KEEPS_DRAFT, UNDER_WAY


def chat_under_way(dialogue: Optional[Dialogue]) -> bool:
    """A Chat conversation with a message sent and no rating yet."""
    return dialogue is not None and bool(dialogue.utterances) and dialogue.feedback is None


def message_box(under_way: bool, **update: Any) -> Any:
    """A message box's update (`update`: its value, interactive, ...), marked while its conversation is
    under way; the box keeps its unsent text across a reload either way."""
    return gr.Textbox(elem_classes=[KEEPS_DRAFT] + ([UNDER_WAY] if under_way else []), **update)


def leave_js(boxes: list[str], index: int) -> str:
    """The `js` of an event that leaves the conversation of `boxes` (elem_ids) and cannot be stopped in the
    page (a dropdown has already changed when its event runs): its input at `index` (a hidden Checkbox)
    becomes whether the participant agreed to leave; the handler puts things back when they did not."""
    ids = ", ".join(f"'{box}'" for box in boxes)
    return (f"(...args) => {{ args[{index}] = window.crsArenaLeave ? window.crsArenaLeave([{ids}]) : true;"
            " return args; }")
