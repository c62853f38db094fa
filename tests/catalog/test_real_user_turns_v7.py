"""The eleventh set of real users' conversations (benchmarks/conversations/real_user_turns_v7.json): ReDial
seekers drawn after v6 as an unseen measurement set, with its gold written before any system ran on it. Every
conversation's split is 'fresh'; none of its dialogues is one of v1's to v6's or one the closings probe
(redial_closings_v1.json) replays; it is of the size asked; and its draw is redone from the rule and the
passed-over ids its origin writes out. The checks every fresh set must pass (no text kept, the gold's keys,
each turn a seeker's message, titles in the catalog, a missing half refused) run over it too, in
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
EARLIER = [json.loads((SETS / f"real_user_turns_v{n}.json").read_text(encoding="utf-8"))
           for n in (1, 2, 3, 4, 5, 6)]
CLOSINGS = json.loads((SETS / "redial_closings_v1.json").read_text(encoding="utf-8"))
V7_PATH = SETS / "real_user_turns_v7.json"
V7 = json.loads(V7_PATH.read_text(encoding="utf-8"))
HAVE_TEXTS = all(path.is_file() for path in checks.SOURCES.values())


def turns(gold=V7):
    return draw.set_turns(gold)


def test_v7_is_one_fresh_half_of_redial_seekers_of_the_size_asked():
    assert V7["version"] == 7 and V7["about"] and V7["origin"]["draw"]
    assert {c["split"] for c in V7["conversations"]} == {"fresh"}
    dialogues = [c["source"]["dialogue"] for c in V7["conversations"]]
    assert len(set(dialogues)) == len(dialogues) == 40
    assert len({c["id"] for c in V7["conversations"]}) == len(dialogues)
    assert {c["source"]["corpus"] for c in V7["conversations"]} == {"redial_valid"}
    assert {c["dataset"] for c in V7["conversations"]} == {"redial"}
    assert all(c["id"] == f"s-r-{c['source']['dialogue']}" for c in V7["conversations"])
    assert len(turns()) >= 120
    assert sum(t["expect"] == "list" for _c, t in turns()) >= 60
    assert all(len(c["turns"]) >= 2 for c in V7["conversations"])
    # The keys are v6's, word for word.
    assert V7["turn_keys"] == EARLIER[-1]["turn_keys"]
    assert V7["constraint_keys"] == EARLIER[-1]["constraint_keys"]


def test_no_dialogue_of_an_earlier_set_is_in_v7():
    for earlier in EARLIER:
        assert not draw.set_dialogues(earlier) & draw.set_dialogues(V7), earlier["version"]


def test_no_dialogue_of_the_closings_probe_is_in_v7():
    assert draw.set_dialogues(CLOSINGS)
    assert not draw.set_dialogues(CLOSINGS) & draw.set_dialogues(V7)


def test_the_draw_text_says_the_rule_the_script_follows():
    text = V7["origin"]["draw"]
    assert "random.Random(4707)" in text and draw.V7["seed"] == 4707
    assert "until 0, 0 and 40 conversations are taken" in text
    assert draw.V7["wanted"] == {"redial": 0, "opendialkg": 0, "seeker": 40}
    assert draw.V7["earlier"] == ("v1", "v2", "v3", "v4", "v5", "v6")
    assert draw.V7["probes"] == ("redial_closings_v1",) and "redial_closings_v1.json" in text
    assert "real_user_turns_v6.json" in text and "--set v7" in text
    # The earlier draws are untouched by v7's.
    assert all(draw.DRAWS[name] is rule for name, rule in
               (("v4", draw.V4), ("v5", draw.V5), ("v6", draw.V6), ("v7", draw.V7)))
    assert draw.V6["seed"] == 4706 and draw.V6["earlier"] == ("v1", "v2", "v3", "v4", "v5")


def test_a_seeker_v6_passed_over_may_be_drawn_again_but_is_not_taken():
    # A dialogue v6 passed over is a source of no earlier set, so v7's draw may meet it again; the reader's
    # judgement of it stands, and the origin names it again rather than taking it.
    v6_passed = {d for d, _why in draw._passed_in(EARLIER[-1]["origin"]["draw"])}
    v7_passed = {d for d, _why in draw._passed_in(V7["origin"]["draw"])}
    assert "19846" in v6_passed & v7_passed
    assert not v6_passed & draw.set_dialogues(V7)


@pytest.mark.skipif(not HAVE_TEXTS, reason="needs the source dialogues in ../shared/data")
def test_the_draw_written_in_the_origin_gives_exactly_the_sets_dialogues():
    passed = draw._passed_in(V7["origin"]["draw"])
    assert passed  # the reader passed some seekers over; each is named
    not_sensible = {d for d, why in passed if why == draw.NOT_SENSIBLE}
    result = draw.draw(draw.V7["seed"], EARLIER, draw.V7["wanted"], not_sensible, [CLOSINGS])
    assert result.taken == [c["source"]["dialogue"] for c in V7["conversations"]]
    # Seekers name no study user: the only reason to pass one over is the reader's judgement.
    assert result.passed == passed and all(why == draw.NOT_SENSIBLE for _d, why in passed)
    assert result.walked["redial"] == result.walked["opendialkg"] == []
    assert result.short == {"redial": 0, "opendialkg": 0, "seeker": 0}


@pytest.mark.skipif(not HAVE_TEXTS, reason="needs the source dialogues in ../shared/data")
def test_the_seekers_order_rests_on_the_crs_arena_groups_shuffled_before_them():
    # The rule shuffles the two CRS Arena groups first even though it takes none of them; a draw that
    # skipped those shuffles would meet the seekers in another order.
    passed = draw._passed_in(V7["origin"]["draw"])
    not_sensible = {d for d, why in passed if why == draw.NOT_SENSIBLE}
    before = set().union(*(draw.set_dialogues(g) for g in EARLIER)) | draw.set_dialogues(CLOSINGS)
    seekers = sorted(d for d, n in draw.user_turns("redial_valid").items() if len(n) >= 2 and d not in before)
    draw.random.Random(draw.V7["seed"]).shuffle(seekers)
    alone = [d for d in seekers if d not in not_sensible][:40]
    assert alone != [c["source"]["dialogue"] for c in V7["conversations"]]


@pytest.mark.skipif(not HAVE_TEXTS, reason="needs the source dialogues in ../shared/data")
def test_no_message_of_v7_is_copied_into_the_file():
    written = " ".join(V7_PATH.read_text(encoding="utf-8").lower().split())
    conversations = checks.resolve_texts(json.loads(json.dumps(V7["conversations"])))
    for conversation in conversations:
        for turn in conversation["turns"]:
            assert turn["user"].strip()
            text = " ".join(turn["user"].lower().split())
            if len(text) >= 20:  # "Hello" or "a comedy" may well be words of the gold
                assert text not in written, (conversation["id"], turn["source"]["utterance"])
