"""The ninth set of real users' conversations (benchmarks/conversations/real_user_turns_v5.json), drawn
after v4 and written before any system ran on it. None of its dialogues or of the study's users is one of
v1's to v4's, none of its dialogues is one the closings probe (redial_closings_v1.json) replays, it is of
the size the issue asks, and its draw is redone from the rule and the passed-over ids its origin writes
out. The checks every fresh set must pass (no text kept, the gold's keys, each turn a user's message,
titles in the catalog, a missing half refused) run over it in test_real_user_turns_v3.py."""

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
EARLIER = [json.loads((SETS / f"real_user_turns_v{n}.json").read_text(encoding="utf-8"))
           for n in (1, 2, 3, 4)]
CLOSINGS = json.loads((SETS / "redial_closings_v1.json").read_text(encoding="utf-8"))
V5_PATH = SETS / "real_user_turns_v5.json"
V5 = json.loads(V5_PATH.read_text(encoding="utf-8"))
HAVE_TEXTS = all(path.is_file() for path in checks.SOURCES.values())
# The CRS Arena groups ran out (few of the study's users were left after v1 to v4): the seekers filled in.
TAKEN = {"redial": 8, "opendialkg": 7, "seeker": 30}


def turns(gold=V5):
    return draw.set_turns(gold)


def test_v5_is_one_fresh_half_of_the_size_the_issue_asks():
    assert V5["version"] == 5 and V5["about"] and V5["origin"]["draw"]
    assert {c["split"] for c in V5["conversations"]} == {"fresh"}
    v5_dialogues = [c["source"]["dialogue"] for c in V5["conversations"]]
    assert len(set(v5_dialogues)) == len(v5_dialogues) == 45
    assert len({c["id"] for c in V5["conversations"]}) == len(v5_dialogues)
    assert len(turns()) >= 150
    assert sum(t["expect"] == "list" for _c, t in turns()) >= 90
    assert all(len(c["turns"]) >= 2 for c in V5["conversations"])
    groups = [c["dataset"] if c["source"]["corpus"] == "crsarena_dial" else "seeker"
              for c in V5["conversations"]]
    assert [groups.count(g) for g in draw.GROUP_ORDER] == [TAKEN[g] for g in draw.GROUP_ORDER]


def test_no_dialogue_or_study_user_of_an_earlier_set_is_in_v5():
    before = set().union(*(draw.set_dialogues(g) for g in EARLIER))
    assert not before & draw.set_dialogues(V5)
    # A study user met before (or twice here) would have typed the same words to another system.
    users = draw.study_users(V5)
    assert len(set(users)) == len(users)
    assert not set().union(*(set(draw.study_users(g)) for g in EARLIER)) & set(users)


def test_no_dialogue_of_the_closings_probe_is_in_v5():
    assert draw.set_dialogues(CLOSINGS)  # the probe names its dialogues as the sets do
    assert not draw.set_dialogues(CLOSINGS) & draw.set_dialogues(V5)


def test_the_draw_text_says_the_rule_the_script_follows():
    text = V5["origin"]["draw"]
    assert "random.Random(4705)" in text and draw.V5["seed"] == 4705
    assert "until 10, 9 and 26 conversations are taken" in text
    assert draw.V5["wanted"] == {"redial": 10, "opendialkg": 9, "seeker": 26}
    assert draw.V5["earlier"] == ("v1", "v2", "v3", "v4") and draw.V5["probes"] == ("redial_closings_v1",)
    assert "redial_closings_v1.json" in text
    assert "ran out after 8" in text and "group after 7" in text and "(8, 7 and 30 conversations)" in text
    # v4's rule and words are unchanged by v5's.
    assert draw.DRAWS["v4"] is draw.V4 and draw.V4["probes"] == ()
    assert draw.before_user(EARLIER[:3]) == draw.BEFORE_USER
    assert draw.before_user(EARLIER) == "its user also wrote a conversation of v1, v2, v3 or v4"


@pytest.mark.skipif(not HAVE_TEXTS, reason="needs the source dialogues in ../shared/data")
def test_the_draw_written_in_the_origin_gives_exactly_the_sets_dialogues():
    passed = draw._passed_in(V5["origin"]["draw"])
    not_sensible = {d for d, why in passed if why == draw.NOT_SENSIBLE}
    result = draw.draw(draw.V5["seed"], EARLIER, draw.V5["wanted"], not_sensible, [CLOSINGS])
    assert result.taken == [c["source"]["dialogue"] for c in V5["conversations"]]
    # Every id the origin names was met on the way, for the reason the rule gives, and none is missing.
    assert result.passed == passed
    assert all(why in (draw.NOT_SENSIBLE, draw.EARLIER_USER, draw.before_user(EARLIER)) for _d, why in passed)
    # Both CRS Arena groups were walked to their end; what they lacked went to the seekers.
    assert result.short == {"redial": 2, "opendialkg": 2, "seeker": 0}


@pytest.mark.skipif(not HAVE_TEXTS, reason="needs the source dialogues in ../shared/data")
def test_without_the_closings_probe_left_out_the_draw_would_differ():
    # The probe's exclusion is part of the rule: leaving it out changes the seekers drawn.
    passed = draw._passed_in(V5["origin"]["draw"])
    not_sensible = {d for d, why in passed if why == draw.NOT_SENSIBLE}
    result = draw.draw(draw.V5["seed"], EARLIER, draw.V5["wanted"], not_sensible)
    assert result.taken != [c["source"]["dialogue"] for c in V5["conversations"]]


@pytest.mark.skipif(not HAVE_TEXTS, reason="needs the source dialogues in ../shared/data")
def test_no_message_of_v5_is_copied_into_the_file():
    written = " ".join(V5_PATH.read_text(encoding="utf-8").lower().split())
    conversations = checks.resolve_texts(json.loads(json.dumps(V5["conversations"])))
    for conversation in conversations:
        for turn in conversation["turns"]:
            text = " ".join(turn["user"].lower().split())
            if len(text) >= 20:  # "Hello" or "a comedy" may well be words of the gold
                assert text not in written, (conversation["id"], turn["source"]["utterance"])
