"""The one place the app reads Gradio's per-session store (`Blocks.state_holder`), for the idle sweep.

Gradio documents no way to drop a session's copy of the page before `state_session_capacity` newer sessions
came, and the idle-session sweep needs it (`webapp.sessions.idle_sessions`, whose docstring gives the memory
it saves; docs/architecture.md, Browser sessions and Gradio, why the public API does not do it). The sweep
goes through `session_store` so that a Gradio upgrade is checked in one file (and by
`tests/safety/test_idle_sessions.py`); the architecture test allows this reach here and nowhere else. The
API guard's choice check reads the app's own record instead (`webapp.sessions.session_choices`).
`tests/safety/test_gradio_session_expiry_gap.py` shows what the public API leaves undone (a closed page's
copy outlives `unload` and the States' expiry; `state_session_capacity` drops a page in use before closed
ones); when it fails after an upgrade, this file can go.
"""

from __future__ import annotations

from typing import Any, Optional


def session_store(blocks: Any) -> Optional[Any]:
    """The Blocks' per-session store (with `lock`, `session_data`, `time_last_used`, `delete_state`), or
    None before the Blocks are served."""
    return getattr(blocks, "state_holder", None)
