"""The seventh set of real users' conversations (benchmarks/conversations/real_user_turns_v3.json), kept
unseen for the final measurement of issue 47. It names its user turns by source and keeps none of their
words, every turn it names is a user's (or ReDial seeker's) message in ../shared, its gold uses only keys
the checker reads, none of its dialogues or of the study's users is one of v1's or v2's, and its draw can
be redone from the rule and the passed-over ids that its origin writes out. The checks every fresh set must
pass run here over v2, v3, v4, v5, v7 and v8 (FRESH_SETS), and over v6, a tune set held to the same checks."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import real_turn_checks as checks  # noqa: E402

SETS = ROOT / "benchmarks" / "conversations"
V3_PATH = SETS / "real_user_turns_v3.json"
V1 = json.loads((SETS / "real_user_turns_v1.json").read_text(encoding="utf-8"))
V2 = json.loads((SETS / "real_user_turns_v2.json").read_text(encoding="utf-8"))
V3 = json.loads(V3_PATH.read_text(encoding="utf-8"))
V4 = json.loads((SETS / "real_user_turns_v4.json").read_text(encoding="utf-8"))
V5 = json.loads((SETS / "real_user_turns_v5.json").read_text(encoding="utf-8"))
V6 = json.loads((SETS / "real_user_turns_v6.json").read_text(encoding="utf-8"))
V7 = json.loads((SETS / "real_user_turns_v7.json").read_text(encoding="utf-8"))
V8 = json.loads((SETS / "real_user_turns_v8.json").read_text(encoding="utf-8"))
HAVE_TEXTS = all(path.is_file() for path in checks.SOURCES.values())
ACTS = {"request", "refine", "question", "close", "chat", "other"}
EXPECTS = {"list", "answer", "close", "chat"}
ORDINALS = {"first", "second", "third"}
GROUPS = {"redial": 21, "opendialkg": 13, "seeker": 11}  # the draw's groups, in the order it shuffles them


# what every fresh set must pass runs over each
FRESH_SETS = {"v2": V2, "v3": V3, "v4": V4, "v5": V5, "v7": V7, "v8": V8}
# v6 is a development set (one half, "tune"), but its gold was written as a fresh set's is and is held to
# the same checks; only the half it has differs.
SHARED_CHECKED = {**FRESH_SETS, "v6": V6}
HALVES = {**{name: "fresh" for name in FRESH_SETS}, "v6": "tune"}


def turns(gold=V3):
    return [(c, t) for c in gold["conversations"] for t in c["turns"]]


def dialogues(gold) -> set[str]:
    return {c["source"]["dialogue"] for c in gold["conversations"]}


def study_users(gold) -> list[str]:
    # A CRS Arena id is "<system>_<dataset>_<user>".
    return [c["source"]["dialogue"].rsplit("_", 1)[-1] for c in gold["conversations"]
            if c["source"]["corpus"] == "crsarena_dial"]


def test_v3_is_one_fresh_half_of_the_size_the_issue_asks():
    assert V3["version"] == 3 and V3["about"] and V3["origin"]["draw"]
    assert {c["split"] for c in V3["conversations"]} == {"fresh"}
    v3_dialogues = [c["source"]["dialogue"] for c in V3["conversations"]]
    assert len(set(v3_dialogues)) == len(v3_dialogues) >= 45
    assert len({c["id"] for c in V3["conversations"]}) == len(v3_dialogues)
    assert len(turns()) >= 150
    assert all(len(c["turns"]) >= 2 for c in V3["conversations"])


def test_no_dialogue_or_study_user_of_v1_or_v2_is_in_v3():
    assert not (dialogues(V1) | dialogues(V2)) & dialogues(V3)
    # The study's users talked to two systems, often in the same words: a user met before (or twice in v3)
    # would make the set less unseen than it looks.
    assert len(set(study_users(V3))) == len(study_users(V3))
    assert not (set(study_users(V1)) | set(study_users(V2))) & set(study_users(V3))


@pytest.mark.parametrize("name", sorted(SHARED_CHECKED))
def test_a_fresh_set_keeps_no_text_and_names_each_turn_in_its_own_dialogue(name):
    for conversation, turn in turns(SHARED_CHECKED[name]):
        assert "user" not in turn
        assert turn["source"]["corpus"] == conversation["source"]["corpus"]
        assert turn["source"]["dialogue"] == conversation["source"]["dialogue"]
        expected = "redial_valid" if conversation["id"].startswith("s-") else "crsarena_dial"
        assert conversation["source"]["corpus"] == expected, conversation["id"]


@pytest.mark.parametrize("name", sorted(SHARED_CHECKED))
def test_every_gold_key_and_value_is_one_the_checker_reads(name):
    gold = SHARED_CHECKED[name]
    turn_keys = set(V1["turn_keys"]) | {"set", "clear"}
    constraint_keys = set(V1["constraint_keys"])
    assert gold["turn_keys"] == V1["turn_keys"] and gold["constraint_keys"] == V1["constraint_keys"]
    for conversation, turn in turns(gold):
        where = f"{conversation['id']} utterance {turn['source']['utterance']}"
        assert set(turn) <= turn_keys | {"source"}, where
        assert turn["act"] in ACTS and turn["expect"] in EXPECTS, where
        assert set(turn.get("set", {})) <= constraint_keys, where
        assert set(turn.get("clear", ())) <= constraint_keys, where
        about, reject = turn.get("about"), turn.get("reject")
        assert about is None or about in ORDINALS or about.startswith("title:"), where
        assert reject is None or reject in ORDINALS | {"all"} or reject.startswith("title:"), where
        if turn["act"] == "question":
            assert turn["expect"] == "answer" and turn.get("aspect"), where
        era = turn.get("set", {}).get("era")
        assert era is None or (len(era) == 2 and era[0] <= era[1]), where
        assert set(turn.get("set", {}).get("origin", ())) <= set(checks.ORIGINS), where


def _resolved(gold=V3):
    return checks.resolve_texts(json.loads(json.dumps(gold["conversations"])))


@pytest.mark.skipif(not HAVE_TEXTS, reason="needs the source dialogues in ../shared/data")
@pytest.mark.parametrize("name", sorted(SHARED_CHECKED))
def test_every_turn_resolves_to_a_users_own_message(name):
    conversations = _resolved(SHARED_CHECKED[name])
    assert all(t["user"].strip() for c in conversations for t in c["turns"])
    arena = {d["conversation ID"]: d["conversation"]
             for d in json.loads(checks.SOURCES["crsarena_dial"].read_text(encoding="utf-8"))}
    seekers = {}
    for line in checks.SOURCES["redial_valid"].read_text(encoding="utf-8").splitlines():
        dialogue = json.loads(line)
        seekers[str(dialogue["conversationId"])] = [m["senderWorkerId"] == dialogue["initiatorWorkerId"]
                                                    for m in dialogue["messages"]]
    for _conversation, turn in turns(SHARED_CHECKED[name]):
        source = turn["source"]
        if source["corpus"] == "crsarena_dial":
            assert arena[source["dialogue"]][source["utterance"]]["participant"] == "USER", source
        else:
            assert seekers[source["dialogue"]][source["utterance"]], source


@pytest.mark.skipif(not HAVE_TEXTS, reason="needs the source dialogues in ../shared/data")
def test_no_message_of_the_set_is_copied_into_the_file():
    def strings(value):
        if isinstance(value, str):
            yield value
        elif isinstance(value, dict):
            for v in value.values():
                yield from strings(v)
        elif isinstance(value, list):
            for v in value:
                yield from strings(v)

    written = " | ".join(" ".join(s.lower().split()) for s in strings(V3))
    for conversation in _resolved():
        for turn in conversation["turns"]:
            text = " ".join(turn["user"].lower().split())
            if len(text) >= 20:  # "Hello" or "a comedy" may well be words of the gold
                assert text not in written, (conversation["id"], turn["source"]["utterance"])


@pytest.mark.skipif(not HAVE_TEXTS, reason="needs the ReDial and OpenDialKG catalogs")
@pytest.mark.parametrize("name", sorted(SHARED_CHECKED))
def test_every_title_the_gold_names_is_in_its_catalog(name):
    from arena.catalogs.catalog import load_catalog

    catalogs = {name: load_catalog(name) for name in ("redial", "opendialkg")}
    for conversation, turn in turns(SHARED_CHECKED[name]):
        named = [turn[key][len("title:"):] for key in ("about", "reject")
                 if str(turn.get(key, "")).startswith("title:")]
        catalog = catalogs[conversation["dataset"]]
        for title in named + turn.get("set", {}).get("like", []) + turn.get("set", {}).get("like_all", []):
            assert catalog.find_title(title) is not None, (conversation["id"], title)


def _user_turns(corpus: str) -> dict[str, int]:
    """How many non-empty user (seeker) messages each dialogue of a corpus has."""
    path = checks.SOURCES[corpus]
    if corpus == "crsarena_dial":
        return {d["conversation ID"]: sum(t["participant"] == "USER" and bool(t["utterance"].strip())
                                          for t in d["conversation"])
                for d in json.loads(path.read_text(encoding="utf-8"))}
    counts = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        counts[str(d["conversationId"])] = sum(m["senderWorkerId"] == d["initiatorWorkerId"]
                                               and bool(m["text"].strip()) for m in d["messages"])
    return counts


@pytest.mark.skipif(not HAVE_TEXTS, reason="needs the source dialogues in ../shared/data")
def test_the_draw_written_in_the_origin_gives_exactly_the_sets_dialogues():
    draw = V3["origin"]["draw"]
    assert "random.Random(4703)" in draw
    named = draw.split("in draw order:")[1]
    passed = dict(re.findall(r"([\w-]+) \((its user [^)]*|fewer than 2 [^)]*)\)", named))
    eligible = {}
    for corpus in ("crsarena_dial", "redial_valid"):
        eligible.update({d: n for d, n in _user_turns(corpus).items()
                         if n >= 2 and d not in dialogues(V1) | dialogues(V2)})
    pools = {"redial": sorted(d for d in eligible if "_redial_" in d),
             "opendialkg": sorted(d for d in eligible if "_opendialkg_" in d),
             "seeker": sorted(d for d in eligible if "_" not in d)}
    before = set(study_users(V1)) | set(study_users(V2))
    rng = random.Random(4703)
    drawn, users, walked = [], set(), set()
    for group, wanted in GROUPS.items():
        pool = pools[group]
        rng.shuffle(pool)
        taken = 0
        for dialogue in pool:
            if taken == wanted:
                break
            walked.add(dialogue)
            user = dialogue.rsplit("_", 1)[-1] if group != "seeker" else ""  # a seeker is no study user
            if user in before:
                assert "v1 or v2" in passed.get(dialogue, ""), dialogue
            elif user in users:
                assert "earlier conversation of this set" in passed.get(dialogue, ""), dialogue
            elif dialogue in passed:
                assert passed[dialogue].startswith("fewer than 2"), dialogue
            else:
                drawn.append(dialogue)
                taken += 1
                users |= {user} - {""}
        assert taken == wanted, group
    assert drawn == [c["source"]["dialogue"] for c in V3["conversations"]]
    assert set(passed) <= walked  # every id the origin names was met on the way


@pytest.mark.parametrize("name", sorted(SHARED_CHECKED))
def test_a_half_the_set_lacks_is_refused_before_any_system_runs(name):
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "real_user_turns.py"), "--set", name,
                          "--halves", "heldout", "--rescore", "--label", "no_such_label"],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    if not HAVE_TEXTS:
        pytest.skip("needs the source dialogues in ../shared/data")
    assert run.returncode == 2
    assert f"real_user_turns_{name}.json has no half heldout; its halves: {HALVES[name]}" in run.stderr
