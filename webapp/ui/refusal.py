"""Refusing a visitor's input: a message on the page and one line in the log.

Gradio prints the full traceback of every `gr.Error` unless told otherwise;
a refused message or a limit reached is expected, not a fault, so it is
logged as one line instead.
"""

from __future__ import annotations

import logging

import gradio as gr

log = logging.getLogger("webapp.refused")


def refuse(message: str) -> gr.Error:
    """The error to raise for a refusal (logged here in one line, shown to the visitor as is)."""
    log.info("refused: %s", " ".join(str(message).split()))
    return gr.Error(message, print_exception=False)
