"""The eighth set of real users' conversations (benchmarks/conversations/real_user_turns_v4.json), drawn
after v3 and written before any system ran on it. None of its dialogues or of the study's users is one of
v1's, v2's or v3's, it is of the size the issue asks, and its draw is redone from the rule and the
passed-over ids its origin writes out. The checks every fresh set must pass (no text kept, the gold's keys,
each turn a user's message, titles in the catalog, a missing half refused) run over it in
test_real_user_turns_v3.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "benchmarks" / "conversations"))

import draw_real_user_turns as draw  # noqa: E402
import real_turn_checks as checks  # noqa: E402

SETS = ROOT / "benchmarks" / "conversations"
EARLIER = [json.loads((SETS / f"real_user_turns_v{n}.json").read_text(encoding="utf-8")) for n in (1, 2, 3)]
V4_PATH = SETS / "real_user_turns_v4.json"
V4 = json.loads(V4_PATH.read_text(encoding="utf-8"))
HAVE_TEXTS = all(path.is_file() for path in checks.SOURCES.values())


def turns(gold=V4):
    return draw.set_turns(gold)


def test_v4_is_one_fresh_half_of_the_size_the_issue_asks():
    assert V4["version"] == 4 and V4["about"] and V4["origin"]["draw"]
    assert {c["split"] for c in V4["conversations"]} == {"fresh"}
    v4_dialogues = [c["source"]["dialogue"] for c in V4["conversations"]]
    assert len(set(v4_dialogues)) == len(v4_dialogues) == 45
    assert len({c["id"] for c in V4["conversations"]}) == len(v4_dialogues)
    assert len(turns()) >= 150
    assert all(len(c["turns"]) >= 2 for c in V4["conversations"])
    groups = [c["dataset"] if c["source"]["corpus"] == "crsarena_dial" else "seeker"
              for c in V4["conversations"]]
    assert [groups.count(g) for g in draw.GROUP_ORDER] == [14, 10, 21]


def test_no_dialogue_or_study_user_of_an_earlier_set_is_in_v4():
    before = set().union(*(draw.set_dialogues(g) for g in EARLIER))
    assert not before & draw.set_dialogues(V4)
    # A study user met before (or twice here) would have typed the same words to another system.
    users = draw.study_users(V4)
    assert len(set(users)) == len(users)
    assert not set().union(*(set(draw.study_users(g)) for g in EARLIER)) & set(users)


def test_the_draw_text_says_the_rule_the_script_follows():
    text = V4["origin"]["draw"]
    assert "random.Random(4704)" in text and draw.V4["seed"] == 4704
    assert "14, 10 and 21 conversations" in text
    assert draw.V4["wanted"] == {"redial": 14, "opendialkg": 10, "seeker": 21}


@pytest.mark.skipif(not HAVE_TEXTS, reason="needs the source dialogues in ../shared/data")
def test_the_draw_written_in_the_origin_gives_exactly_the_sets_dialogues():
    passed = draw._passed_in(V4["origin"]["draw"])
    not_sensible = {d for d, why in passed if why == draw.NOT_SENSIBLE}
    result = draw.draw(draw.V4["seed"], EARLIER, draw.V4["wanted"], not_sensible)
    assert result.taken == [c["source"]["dialogue"] for c in V4["conversations"]]
    # Every id the origin names was met on the way, for the reason the rule gives, and none is missing.
    assert result.passed == passed


@pytest.mark.skipif(not HAVE_TEXTS, reason="needs the source dialogues in ../shared/data")
def test_no_message_of_v4_is_copied_into_the_file():
    written = " ".join(V4_PATH.read_text(encoding="utf-8").lower().split())
    conversations = checks.resolve_texts(json.loads(json.dumps(V4["conversations"])))
    for conversation in conversations:
        for turn in conversation["turns"]:
            text = " ".join(turn["user"].lower().split())
            if len(text) >= 20:  # "Hello" or "a comedy" may well be words of the gold
                assert text not in written, (conversation["id"], turn["source"]["utterance"])
