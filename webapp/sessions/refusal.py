"""Refusing a participant's action: the exception a session rule raises, with words for them.

A refused message, a second rating or a limit reached is expected, not a
fault: the rule raises `refuse(...)` (one line in the log) and the page shows
its text by the control that was used (`webapp.ui.parts.refusal_notice.notice`),
never as a stacked error toast. `Refusal` is a `gr.Error`, so where a
researcher page does not catch it Gradio still shows it (without printing a
traceback).
"""

from __future__ import annotations

import logging

import gradio as gr

log = logging.getLogger("webapp.refused")


class Refusal(gr.Error):
    """A visitor's action that cannot be done now; `message` says why, in words for them."""

    def __init__(self, message: str):
        super().__init__(message, print_exception=False)
        self.text = message


def refuse(message: str) -> Refusal:
    """The refusal to raise (logged here in one line, shown to the visitor as is)."""
    log.info("refused: %s", " ".join(str(message).split()))
    return Refusal(message)
