"""The sixth set of real users' conversations (benchmarks/conversations/real_user_turns_v2.json): a fresh
held-out set for the final measurement. It names its user turns by source and keeps no text, every turn
it names is a user's (or ReDial seeker's) message in ../shared, its gold uses only keys the checker reads,
and none of its conversations is one of v1's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import real_turn_checks as checks  # noqa: E402

SETS = ROOT / "benchmarks" / "conversations"
V1 = json.loads((SETS / "real_user_turns_v1.json").read_text(encoding="utf-8"))
V2 = json.loads((SETS / "real_user_turns_v2.json").read_text(encoding="utf-8"))
HAVE_TEXTS = all(path.is_file() for path in checks.SOURCES.values())
ACTS = {"request", "refine", "question", "close", "chat", "other"}
EXPECTS = {"list", "answer", "close", "chat"}
ORDINALS = {"first", "second", "third"}


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


def test_v2_keeps_no_text_and_names_each_turn_in_its_own_dialogue():
    for conversation, turn in turns():
        assert "user" not in turn
        assert turn["source"]["corpus"] == conversation["source"]["corpus"]
        assert turn["source"]["dialogue"] == conversation["source"]["dialogue"]


def test_every_gold_key_and_value_is_one_the_checker_reads():
    turn_keys = set(V1["turn_keys"]) | {"set", "clear"}
    constraint_keys = set(V1["constraint_keys"])
    assert V2["turn_keys"] == V1["turn_keys"] and V2["constraint_keys"] == V1["constraint_keys"]
    for conversation, turn in turns():
        where = f"{conversation['id']} utterance {turn['source']['utterance']}"
        assert set(turn) <= turn_keys, where
        assert turn["act"] in ACTS and turn["expect"] in EXPECTS, where
        assert set(turn.get("set", {})) <= constraint_keys, where
        assert set(turn.get("clear", ())) <= constraint_keys, where
        about, reject = turn.get("about"), turn.get("reject")
        assert about is None or about in ORDINALS or about.startswith("title:"), where
        assert reject is None or reject in ORDINALS | {"all"} or reject.startswith("title:"), where
        if turn["act"] == "question":
            assert turn["expect"] == "answer" and turn.get("aspect"), where


@pytest.mark.skipif(not HAVE_TEXTS, reason="needs the source dialogues in ../shared/data")
def test_every_turn_resolves_to_a_users_own_message():
    conversations = checks.resolve_texts(json.loads((SETS / "real_user_turns_v2.json").read_text())
                                         ["conversations"])
    assert all(t["user"].strip() for c in conversations for t in c["turns"])
    arena = {d["conversation ID"]: d["conversation"]
             for d in json.loads(checks.SOURCES["crsarena_dial"].read_text(encoding="utf-8"))}
    seekers = {}
    for line in checks.SOURCES["redial_valid"].read_text(encoding="utf-8").splitlines():
        dialogue = json.loads(line)
        seekers[str(dialogue["conversationId"])] = [m["senderWorkerId"] == dialogue["initiatorWorkerId"]
                                                    for m in dialogue["messages"]]
    for _conversation, turn in turns():
        source = turn["source"]
        if source["corpus"] == "crsarena_dial":
            assert arena[source["dialogue"]][source["utterance"]]["participant"] == "USER", source
        else:
            assert seekers[source["dialogue"]][source["utterance"]], source


@pytest.mark.skipif(not HAVE_TEXTS, reason="needs the ReDial and OpenDialKG catalogs")
def test_every_title_the_gold_names_is_in_its_catalog():
    from arena.catalogs.catalog import load_catalog

    catalogs = {name: load_catalog(name) for name in ("redial", "opendialkg")}
    for conversation, turn in turns():
        named = [turn[key][len("title:"):] for key in ("about", "reject")
                 if str(turn.get(key, "")).startswith("title:")]
        catalog = catalogs[conversation["dataset"]]
        for title in named + turn.get("set", {}).get("like", []):
            assert catalog.find_title(title) is not None, (conversation["id"], title)


def test_a_half_the_set_lacks_is_refused_before_any_system_runs():
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "real_user_turns.py"), "--set", "v2",
                          "--halves", "heldout", "--rescore", "--label", "no_such_label"],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    if not HAVE_TEXTS:
        pytest.skip("needs the source dialogues in ../shared/data")
    assert run.returncode == 2
    assert "has no half heldout; its halves: fresh" in run.stderr
