"""How large an upload each app accepts.

Gradio accepts files at `/upload` for any app, whether or not a page has a
file input, and sets no size limit unless told: a probe posted anonymous
100 MB files to the public app, which has no file input at all. The public
app now refuses every upload (a limit of 0 bytes: Gradio answers 413 before
anything is written); the researcher app accepts files up to
`ARENA_MAX_UPLOAD_BYTES`.
"""

from __future__ import annotations

from typing import Any

# The public app has no file input: nothing to upload.
PUBLIC_MAX_UPLOAD_BYTES = 0


def upload_limit(settings: Any, *, admin: bool) -> int:
    return settings.max_upload_bytes if admin else PUBLIC_MAX_UPLOAD_BYTES


def launch_options(settings: Any, *, admin: bool) -> dict[str, Any]:
    """Keyword arguments for `Blocks.launch` (or `gr.mount_gradio_app`) that bound uploads."""
    return {"max_file_size": upload_limit(settings, admin=admin)}
