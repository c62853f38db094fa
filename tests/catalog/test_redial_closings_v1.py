"""The closings probe (benchmarks/conversations/redial_closings_v1.json): ReDial seekers' own last
messages with gold written before any system ran. None of its dialogues is a source of the real users'
sets, it keeps no text (only references and gold), its keys are the ones the benchmark reads, every
reference is one of the draw's last two seeker messages, and the halves follow the id hash."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "benchmarks" / "conversations"))

import draw_redial_closings as draw  # noqa: E402
import real_turn_checks as checks  # noqa: E402

PROBE = json.loads((ROOT / "benchmarks" / "conversations" / "redial_closings_v1.json").read_text("utf-8"))
HAVE_TEXTS = checks.SOURCES["redial_valid"].is_file()


def test_no_dialogue_of_the_real_users_sets_is_in_the_probe():
    probe = {c["source"]["dialogue"] for c in PROBE["conversations"]}
    assert len(probe) == len(PROBE["conversations"]) >= 100
    assert not probe & draw.earlier_sources()


def test_the_probe_keeps_references_and_gold_only():
    assert set(PROBE) == {"about", "origin", "version", "turn_keys", "conversations"}
    assert "CC BY 4.0" in PROBE["origin"]["redial_valid"] and "4805" in PROBE["origin"]["draw"]
    for c in PROBE["conversations"]:
        assert set(c) == {"id", "split", "dataset", "source", "turns"}
        assert c["source"] == {"corpus": "redial_valid", "dialogue": c["source"]["dialogue"]}
        assert c["split"] == draw.half_of(c["source"]["dialogue"])
        assert c["turns"] and all(set(t) == set(PROBE["turn_keys"]) for t in c["turns"])
        assert all(t["gold"] in ("close", "more") and isinstance(t["utterance"], int) for t in c["turns"])
        # A kept text would be a string longer than an id anywhere in the conversation.
        assert max(len(v) for v in _strings(c)) < 40


def test_both_halves_have_closings_and_requests():
    for half in ("tune", "heldout"):
        golds = [t["gold"] for c in PROBE["conversations"] if c["split"] == half for t in c["turns"]]
        assert golds.count("close") >= 30 and golds.count("more") >= 5


def test_the_half_rule_depends_on_the_id_alone():
    assert draw.half_of("12345") == draw.half_of("12345")
    assert {draw.half_of(str(n)) for n in range(20)} == {"tune", "heldout"}


@pytest.mark.skipif(not HAVE_TEXTS, reason="the ReDial texts are not in ../shared")
def test_each_reference_is_a_last_seeker_message_of_the_seeded_draw():
    taken = draw.draw()
    numbers = draw.seeker_messages()
    for c in PROBE["conversations"]:
        dialogue = c["source"]["dialogue"]
        assert dialogue in taken
        assert {t["utterance"] for t in c["turns"]} <= set(numbers[dialogue][-draw.LAST:])


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)
