"""DialogueKit for the protocol tests: imported when installed (scripts/install_dialoguekit.sh);
where ARENA_REQUIRE_DIALOGUEKIT is set (.ci/run sets it) its absence fails the test instead of
skipping it."""

from __future__ import annotations

import importlib
import os

import pytest


def require_dialoguekit() -> None:
    try:
        importlib.import_module("dialoguekit")
    except ImportError:
        message = "dialoguekit is not installed: run scripts/install_dialoguekit.sh"
        if os.environ.get("ARENA_REQUIRE_DIALOGUEKIT"):
            pytest.fail(message)
        pytest.skip(message)
