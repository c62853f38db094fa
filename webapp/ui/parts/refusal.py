"""Refusing a visitor's input: a line on the page by the control, and one line in the log.

A refused message, a second rating or a limit reached is expected, not a
fault. Participant handlers catch `Refusal` and show its text in the status
line next to the control that was used (`notice`), leaving every other output
alone, so nothing the participant typed or picked is lost; Gradio's error
toasts, which stack over the page, are never used for them. `Refusal` is a
`gr.Error`, so where a researcher page does not catch it Gradio still shows it
(without printing a traceback).
"""

from __future__ import annotations

import logging

import gradio as gr

log = logging.getLogger("webapp.refused")

NOTICE_MARK = "⚠️"


class Refusal(gr.Error):
    """A visitor's action that cannot be done now; `message` says why, in words for them."""

    def __init__(self, message: str):
        super().__init__(message, print_exception=False)
        self.text = message


def refuse(message: str) -> Refusal:
    """The refusal to raise (logged here in one line, shown to the visitor as is)."""
    log.info("refused: %s", " ".join(str(message).split()))
    return Refusal(message)


def notice(refusal: Refusal | str) -> str:
    """The status-line text (Markdown) for a refusal."""
    text = refusal.text if isinstance(refusal, Refusal) else str(refusal)
    return f"{NOTICE_MARK} {text}"
