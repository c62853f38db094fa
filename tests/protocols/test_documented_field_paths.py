"""Every field path docs/protocols.md names is where a real export writes it: each `metadata.` path,
the record's ids, and the keys it says an exported utterance carries. Exports of a ReDial file, of a
corpus whose ids hold its user ids (researchers' export), of a UserSimCRS file with shared ids
(imported with --rename-duplicates) and of a DialogueKit file are read and their paths collected."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterator

import pytest

from arena.corpus.cli import main as corpus_main
from arena.corpus.records import export_json
from arena.store import Store

ROOT = Path(__file__).resolve().parents[2]
PROTOCOLS = ROOT / "docs" / "protocols.md"
REDIAL_SAMPLE = Path(__file__).parent / "data" / "redial_sample.jsonl"
USER = "03368a16-5b1e-4c8e-9f00-1a2b3c4d5e6f"

# Names the page gives to keys of an exported record and of its utterances (not dotted paths).
RECORD_KEYS = ("conversation ID", "conversation_id")
UTTERANCE_KEYS = ("utterance ID", "utterance_id", "recommended_items", "utterance_feedback", "annotations")


def _paths(value: Any, prefix: str = "") -> Iterator[str]:
    if isinstance(value, dict):
        for key, inner in value.items():
            yield prefix + key
            yield from _paths(inner, prefix + key + ".")


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def _corpora(tmp_path: Path) -> list[Path]:
    crsarena = {"conversation ID": f"barcor_redial_{USER}", "agent": {"id": "barcor_redial", "type": "AGENT"},
                "user": {"id": USER, "type": "USER"},
                "conversation": [{"participant": "USER", "utterance": "Any heist films?",
                                  "utterance ID": f"barcor_redial_{USER}_0"}]}
    shared = {"conversation ID": "arena_agent-simulated_user-1796160000",
              "agent": {"id": "arena_agent", "type": "AGENT"},
              "user": {"id": "simulated_user", "type": "USER"},
              "conversation": [{"participant": "USER", "utterance": "Something with robots"}]}
    dialoguekit = {"conversation ID": "dk-1", "agent": {"id": "barcor_redial", "type": "AGENT"},
                   "user": {"id": "simulated-user-7", "type": "USER"},
                   "conversation": [
                       {"participant": "USER", "utterance": "I like horror films", "utterance ID": "dk-1-0",
                        "dialogue_acts": [{"intent": "DISCLOSE",
                                           "slot_values": [["GENRE", "horror", 7, 13]]}],
                        "annotations": [["sentiment", "positive"]]},
                       {"participant": "AGENT", "utterance": "How about The Shining (1980)?",
                        "utterance ID": "dk-1-1", "utterance_feedback": 1,
                        "recommended_items": [{"id": "m1", "title": "The Shining (1980)"}]}]}
    return [REDIAL_SAMPLE, _write(tmp_path / "crsarena.json", [crsarena]),
            _write(tmp_path / "usersimcrs.json", [shared, shared]),
            _write(tmp_path / "dialoguekit.json", [dialoguekit])]


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> list[dict]:
    tmp_path = tmp_path_factory.mktemp("field-paths")
    db = tmp_path / "arena.sqlite3"
    for corpus in _corpora(tmp_path):
        assert corpus_main(["import", str(corpus), "--db", str(db), "--rename-duplicates"]) == 0
    records = []
    with Store(db) as store:
        for name, source_ids in (("public.json", False), ("research.json", True)):
            export_json(store, tmp_path / name, salt="s", source_ids=source_ids)
            records += json.loads((tmp_path / name).read_text(encoding="utf-8"))
    return records


def _documented_metadata_paths() -> list[str]:
    return sorted(set(re.findall(r"`(metadata\.[A-Za-z_.]+)`", PROTOCOLS.read_text(encoding="utf-8"))))


def test_the_page_names_field_paths_in_full():
    text = PROTOCOLS.read_text(encoding="utf-8")
    # A path given as a suffix of the one before (`.recommender`) is not checkable: write it in full.
    assert not re.findall(r"`\.[a-z_]+`", text)
    assert "metadata.dialogue_metadata.answers.seeker" in _documented_metadata_paths()


@pytest.mark.parametrize("path", _documented_metadata_paths())
def test_each_documented_metadata_path_is_in_a_real_export(exported, path):
    found = {p for record in exported for p in _paths(record)}
    assert path in found, f"docs/protocols.md names `{path}`, which no export writes"


def test_the_record_and_utterance_keys_the_page_names_are_exported(exported):
    text = PROTOCOLS.read_text(encoding="utf-8")
    for key in RECORD_KEYS + UTTERANCE_KEYS:
        assert f"`{key}`" in text, key
    for key in RECORD_KEYS:
        assert all(key in record for record in exported), key
    utterance_keys = {k for record in exported for u in record["conversation"] for k in u}
    for key in UTTERANCE_KEYS:
        assert key in utterance_keys, key
