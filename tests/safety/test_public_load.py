"""32 people battling at once through the public app, systems and scorer on the stub LLM:
every dialogue, rating and vote stored exactly once, and the scoring backlog drained."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

SESSIONS = 32
TURNS = 1
DRAIN_LIMIT_S = 120.0  # generous for a shared 2-core machine; BENCHMARKS.md has the measured figure


@pytest.mark.slow
def test_thirty_two_sessions_are_stored_once_and_scored(tmp_path):
    from public_load import run_public_load

    figures = run_public_load(tmp_path, SESSIONS, TURNS, workers=2, drain_timeout_s=DRAIN_LIMIT_S)
    assert figures["problems"] == []
    assert figures["drain_after_last_vote_s"] <= DRAIN_LIMIT_S
