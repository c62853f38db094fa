"""A refusal shown on the page: a line by the control, leaving every other output alone.

Participant handlers catch `Refusal` (`webapp.sessions.refusal`, raised by the
rules) and show its text in the status line next to the control that was used,
so nothing the participant typed or picked is lost; Gradio's error toasts,
which stack over the page, are never used for them.
"""

from __future__ import annotations

from webapp.sessions.refusal import Refusal

NOTICE_MARK = "⚠️"


def notice(refusal: Refusal | str) -> str:
    """The status-line text (Markdown) for a refusal."""
    text = refusal.text if isinstance(refusal, Refusal) else str(refusal)
    return f"{NOTICE_MARK} {text}"
