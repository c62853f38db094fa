"""The one place the app reads Gradio's per-session store (`Blocks.state_holder`).

Gradio documents no way to read a session's copy of the page or to drop that copy before
`state_session_capacity` newer sessions came, and the app needs both: the idle-session sweep forgets idle
and closed sessions (`webapp.sessions.idle_sessions`, whose docstring gives the memory it saves), and the
API guard checks a choice input's value against the choices the caller's session was offered
(`webapp.protection.api_guard`). Both go through `session_store` so that a Gradio upgrade is checked in one
file (and by `tests/safety/test_idle_sessions.py` and `tests/safety/test_session_choices.py`); the
architecture test allows this reach here and nowhere else.
"""

from __future__ import annotations

from typing import Any, Optional


def session_store(blocks: Any) -> Optional[Any]:
    """The Blocks' per-session store (with `lock`, `session_data`, `time_last_used`, `delete_state`), or
    None before the Blocks are served."""
    return getattr(blocks, "state_holder", None)
