"""The sixth set of real users' conversations (benchmarks/conversations/real_user_turns_v2.json): a fresh
held-out set for the final measurement. It names its user turns by source and keeps no text, every turn
it names is a user's (or ReDial seeker's) message in ../shared, its gold uses only keys the checker reads,
and none of its conversations is one of v1's. The checks every fresh set must pass (no text kept, the
gold's keys, each turn a user's message, titles in the catalog, a missing half refused) run over v2 and v3
in test_real_user_turns_v3.py."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SETS = ROOT / "benchmarks" / "conversations"
V1 = json.loads((SETS / "real_user_turns_v1.json").read_text(encoding="utf-8"))
V2 = json.loads((SETS / "real_user_turns_v2.json").read_text(encoding="utf-8"))


def turns():
    return [(c, t) for c in V2["conversations"] for t in c["turns"]]


def test_v2_is_one_fresh_half_with_no_conversation_of_v1():
    assert V2["version"] == 2 and V2["about"] and V2["origin"]["draw"]
    assert {c["split"] for c in V2["conversations"]} == {"fresh"}
    v1_dialogues = {c["source"]["dialogue"] for c in V1["conversations"]}
    v2_dialogues = [c["source"]["dialogue"] for c in V2["conversations"]]
    assert len(set(v2_dialogues)) == len(v2_dialogues) >= 45
    assert not v1_dialogues & set(v2_dialogues)
    assert len({c["id"] for c in V2["conversations"]}) == len(v2_dialogues)
    assert len(turns()) >= 150
    assert all(len(c["turns"]) >= 2 for c in V2["conversations"])


def test_no_user_of_the_study_wrote_two_of_its_conversations_or_one_of_v1s():
    # A CRS Arena id is "<system>_<dataset>_<user>"; the study's users talked to two systems, often in the
    # same words, so a user already in v1 (or twice in v2) would make the set less unseen than it looks.
    def users(gold):
        return [c["source"]["dialogue"].rsplit("_", 1)[-1] for c in gold["conversations"]
                if c["source"]["corpus"] == "crsarena_dial"]

    assert len(set(users(V2))) == len(users(V2))
    assert not set(users(V1)) & set(users(V2))
