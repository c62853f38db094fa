"""The sets of ReDial seekers' conversations drawn after the CRS Arena study's users ran out
(benchmarks/conversations/real_user_turns_v6.json, _v7.json and _v8.json), each with its gold written
before any system ran on it: v6, the tenth set, drawn after v5 as a development set to be tuned on (every
split 'tune'); v7, the eleventh, drawn after v6 as an unseen measurement set (every split 'fresh'); v8, the
twelfth, drawn after v7 as another unseen measurement set (every split 'fresh'). For each:
none of its dialogues is one of an earlier set's or one the closings probe (redial_closings_v1.json)
replays; it is of the size asked; and its draw is redone from the rule and the passed-over ids its origin
writes out. The checks every fresh set must pass (no text kept, the gold's keys, each turn a seeker's
message, titles in the catalog, a missing half refused) run over all three too, in
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
CLOSINGS = json.loads((SETS / "redial_closings_v1.json").read_text(encoding="utf-8"))
HAVE_TEXTS = all(path.is_file() for path in checks.SOURCES.values())
# name -> (version, the one split, seed)
SEEKER_SETS = {"v6": (6, "tune", 4706), "v7": (7, "fresh", 4707), "v8": (8, "fresh", 4708)}
needs_texts = pytest.mark.skipif(not HAVE_TEXTS, reason="needs the source dialogues in ../shared/data")


def load(name: str) -> dict:
    return json.loads((SETS / f"real_user_turns_{name}.json").read_text(encoding="utf-8"))


def earlier(name: str) -> list[dict]:
    return [load(f"v{n}") for n in range(1, SEEKER_SETS[name][0])]


@pytest.mark.parametrize("name", SEEKER_SETS)
def test_one_half_of_redial_seekers_of_the_size_asked(name):
    version, split, _seed = SEEKER_SETS[name]
    gold = load(name)
    assert gold["version"] == version and gold["about"] and gold["origin"]["draw"]
    assert {c["split"] for c in gold["conversations"]} == {split}
    dialogues = [c["source"]["dialogue"] for c in gold["conversations"]]
    assert len(set(dialogues)) == len(dialogues) == 40
    assert len({c["id"] for c in gold["conversations"]}) == len(dialogues)
    assert {c["source"]["corpus"] for c in gold["conversations"]} == {"redial_valid"}
    assert {c["dataset"] for c in gold["conversations"]} == {"redial"}
    assert all(c["id"] == f"s-r-{c['source']['dialogue']}" for c in gold["conversations"])
    turns = draw.set_turns(gold)
    assert len(turns) >= 120
    assert sum(t["expect"] == "list" for _c, t in turns) >= 60
    assert all(len(c["turns"]) >= 2 for c in gold["conversations"])
    # The keys are the set before's, word for word.
    assert gold["turn_keys"] == earlier(name)[-1]["turn_keys"]
    assert gold["constraint_keys"] == earlier(name)[-1]["constraint_keys"]


@pytest.mark.parametrize("name", SEEKER_SETS)
def test_no_dialogue_of_an_earlier_set_or_of_the_closings_probe_is_in_it(name):
    gold = load(name)
    for before in earlier(name):
        assert not draw.set_dialogues(before) & draw.set_dialogues(gold), before["version"]
    assert draw.set_dialogues(CLOSINGS)
    assert not draw.set_dialogues(CLOSINGS) & draw.set_dialogues(gold)


@pytest.mark.parametrize("name", SEEKER_SETS)
def test_the_draw_text_says_the_rule_the_script_follows(name):
    version, _split, seed = SEEKER_SETS[name]
    text, rule = load(name)["origin"]["draw"], draw.DRAWS[name]
    assert f"random.Random({seed})" in text and rule["seed"] == seed
    assert "until 0, 0 and 40 conversations are taken" in text
    assert rule["wanted"] == {"redial": 0, "opendialkg": 0, "seeker": 40}
    assert rule["earlier"] == tuple(f"v{n}" for n in range(1, version))
    assert rule["probes"] == ("redial_closings_v1",) and "redial_closings_v1.json" in text
    assert f"real_user_turns_v{version - 1}.json" in text and f"--set {name}" in text
    # The earlier draws are untouched by the later ones.
    assert all(draw.DRAWS[n] is r
               for n, r in (("v4", draw.V4), ("v5", draw.V5), ("v6", draw.V6), ("v7", draw.V7),
                            ("v8", draw.V8)))
    assert draw.V5["seed"] == 4705 and draw.V5["wanted"] == {"redial": 10, "opendialkg": 9, "seeker": 26}
    assert draw.V6["seed"] == 4706 and draw.V6["earlier"] == ("v1", "v2", "v3", "v4", "v5")


def test_a_seeker_v6_passed_over_may_be_drawn_again_by_v7_but_is_not_taken():
    # A dialogue v6 passed over is a source of no earlier set, so v7's draw may meet it again; the reader's
    # judgement of it stands, and the origin names it again rather than taking it.
    v6_passed = {d for d, _why in draw._passed_in(load("v6")["origin"]["draw"])}
    v7_passed = {d for d, _why in draw._passed_in(load("v7")["origin"]["draw"])}
    assert "19846" in v6_passed & v7_passed
    assert not v6_passed & draw.set_dialogues(load("v7"))


def test_a_seeker_v6_passed_over_and_v7_did_not_meet_is_passed_over_again_by_v8():
    # v8's walk meets 16593, which v6 passed over and v7's walk never reached; the judgement stands there
    # too, and neither v6's nor v7's passed-over seekers is among v8's dialogues.
    v6_passed = {d for d, _why in draw._passed_in(load("v6")["origin"]["draw"])}
    v7_passed = {d for d, _why in draw._passed_in(load("v7")["origin"]["draw"])}
    v8_passed = {d for d, _why in draw._passed_in(load("v8")["origin"]["draw"])}
    assert v8_passed == {"16593"} and "16593" in v6_passed - v7_passed
    assert not (v6_passed | v7_passed) & draw.set_dialogues(load("v8"))


@needs_texts
@pytest.mark.parametrize("name", SEEKER_SETS)
def test_the_draw_written_in_the_origin_gives_exactly_the_sets_dialogues(name):
    gold, rule = load(name), draw.DRAWS[name]
    passed = draw._passed_in(gold["origin"]["draw"])
    assert passed  # the reader passed some seekers over; each is named
    not_sensible = {d for d, why in passed if why == draw.NOT_SENSIBLE}
    result = draw.draw(rule["seed"], earlier(name), rule["wanted"], not_sensible, [CLOSINGS])
    assert result.taken == [c["source"]["dialogue"] for c in gold["conversations"]]
    # Seekers name no study user: the only reason to pass one over is the reader's judgement.
    assert result.passed == passed and all(why == draw.NOT_SENSIBLE for _d, why in passed)
    assert result.walked["redial"] == result.walked["opendialkg"] == []
    assert result.short == {"redial": 0, "opendialkg": 0, "seeker": 0}


@needs_texts
@pytest.mark.parametrize("name", SEEKER_SETS)
def test_the_seekers_order_rests_on_the_crs_arena_groups_shuffled_before_them(name):
    # The rule shuffles the two CRS Arena groups first even though it takes none of them; a draw that
    # skipped those shuffles would meet the seekers in another order.
    gold = load(name)
    passed = draw._passed_in(gold["origin"]["draw"])
    not_sensible = {d for d, why in passed if why == draw.NOT_SENSIBLE}
    before = set().union(*(draw.set_dialogues(g) for g in earlier(name))) | draw.set_dialogues(CLOSINGS)
    seekers = sorted(d for d, n in draw.user_turns("redial_valid").items() if len(n) >= 2 and d not in before)
    draw.random.Random(draw.DRAWS[name]["seed"]).shuffle(seekers)
    alone = [d for d in seekers if d not in not_sensible][:40]
    assert alone != [c["source"]["dialogue"] for c in gold["conversations"]]


@needs_texts
@pytest.mark.parametrize("name", SEEKER_SETS)
def test_no_message_is_copied_into_the_file(name):
    path = SETS / f"real_user_turns_{name}.json"
    written = " ".join(path.read_text(encoding="utf-8").lower().split())
    conversations = checks.resolve_texts(json.loads(path.read_text(encoding="utf-8"))["conversations"])
    for conversation in conversations:
        for turn in conversation["turns"]:
            assert turn["user"].strip()
            text = " ".join(turn["user"].lower().split())
            if len(text) >= 20:  # "Hello" or "a comedy" may well be words of the gold
                assert text not in written, (conversation["id"], turn["source"]["utterance"])
