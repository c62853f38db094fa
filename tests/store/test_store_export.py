"""Corpus export: DialogueKit layout, votes attached, user ids pseudonymised."""

import io
import json

import pytest

from arena.dialogue import UserKind
from arena.corpus.loading import load_dialogues
from arena.corpus.cli import main
from arena.corpus.records import export_json, export_jsonl, import_dialogues, pseudonymiser
from arena.store import Store

from store_strategies import battle, rich_dialogue

RAW_IDS = ["3f2b9d70-5e1c-4c4e-9a51-0d8c2b7e11aa", "prolific-5f8a1bc2d3e4", "user-battle-01"]


@pytest.fixture
def corpus(store):
    first = rich_dialogue("kbrd_redial", RAW_IDS[0])
    first.dialogue_id = f"kbrd_redial_{RAW_IDS[0]}"  # imported corpora embed user ids in ids
    first.user.details = {"prolific_pid": RAW_IDS[1]}
    store.save_dialogues([first, rich_dialogue("chatcrs_redial", RAW_IDS[1]),
                          rich_dialogue("kbrd_redial", "sim-goal-000123", kind=UserKind.SIMULATOR)])
    a, b, vote = battle("kbrd_redial", "unicrs_redial", user_id=RAW_IDS[2], choice="B")
    store.save_battle(a, b, vote)
    return store, (a, b, vote)


def _lines(store, **kwargs):
    buf = io.StringIO()
    n = export_jsonl(store, buf, **kwargs)
    lines = buf.getvalue().splitlines()
    assert n == len(lines)
    return buf.getvalue(), [json.loads(line) for line in lines]


def test_raw_user_ids_never_appear_and_pseudonyms_are_stable(corpus):
    store, _ = corpus
    text, records = _lines(store)
    assert len(records) == 5
    for raw in RAW_IDS:
        assert raw not in text
    again, _ = _lines(store)
    assert again == text  # same salt (kept in the database) -> same pseudonyms
    ids = {r["user"]["id"] for r in records}
    assert len(ids) == 4 and all(len(i) == 16 and int(i, 16) >= 0 for i in ids)
    assert pseudonymiser(store.get_meta("pseudonym_salt"))(RAW_IDS[0]) in ids
    battle_users = {r["user"]["id"] for r in records if "vote" in r["metadata"]}
    assert battle_users == {r["metadata"]["vote"]["user_id"] for r in records if "vote" in r["metadata"]}


def test_salt_argument_changes_pseudonyms(corpus):
    store, _ = corpus
    _, default = _lines(store)
    _, explicit = _lines(store, salt="team-secret")
    assert [r["user"]["id"] for r in explicit] != [r["user"]["id"] for r in default]
    assert explicit[0]["user"]["id"] == pseudonymiser("team-secret")(RAW_IDS[0])


def test_battle_dialogues_carry_their_vote(corpus):
    store, (a, b, vote) = corpus
    _, records = _lines(store)
    by_id = {r["conversation ID"]: r for r in records}
    va, vb = by_id[a.dialogue_id]["metadata"]["vote"], by_id[b.dialogue_id]["metadata"]["vote"]
    assert (va["side"], va["result"], vb["side"], vb["result"]) == ("A", "lose", "B", "win")
    assert va["winner"] == "unicrs_redial" and va["battle_id"] == vote.battle_id
    assert sum("vote" in r["metadata"] for r in records) == 2


def test_filters_and_json_list(corpus, tmp_path):
    store, _ = corpus
    _, kbrd = _lines(store, crs_ids=["kbrd_redial"])
    assert {r["agent"]["id"] for r in kbrd} == {"kbrd_redial"} and len(kbrd) == 3
    _, sims = _lines(store, user_kind="simulator")
    assert [r["user"]["kind"] for r in sims] == ["simulator"]
    out = tmp_path / "out" / "corpus.json"
    assert export_json(store, out) == 5
    assert len(json.loads(out.read_text(encoding="utf-8"))) == 5


def test_export_then_import_round_trips_into_a_fresh_store(corpus, tmp_path):
    store, _ = corpus
    path = tmp_path / "corpus.jsonl"
    export_jsonl(store, path)
    with Store(tmp_path / "fresh.sqlite3") as fresh:
        imported = import_dialogues(fresh, path)
        assert len(imported) == fresh.count_dialogues() == 5
        originals = {d.crs_id + d.utterances[0].text + str(d.created_at): d for d in store.list_dialogues()}
        for d in fresh.list_dialogues():
            orig = originals[d.crs_id + d.utterances[0].text + str(d.created_at)]
            assert d.utterances == orig.utterances and d.feedback == orig.feedback
            assert d.scores == orig.scores and d.ended_at == orig.ended_at
            assert d.user.id != orig.user.id and d.user.kind == orig.user.kind
    # Export -> import -> export is a fixed point once ids are pseudonymous.
    again = tmp_path / "again.jsonl"
    with Store(tmp_path / "fresh.sqlite3") as fresh:
        export_jsonl(fresh, again, salt="x")
    assert len(load_dialogues(again)) == 5


def test_command_line(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("ARENA_PSEUDONYM_SALT", raising=False)
    db = str(tmp_path / "cli.sqlite3")
    src = tmp_path / "in.json"
    src.write_text(json.dumps([{"conversation ID": "c1", "agent": {"id": "kbrd_redial"}, "user": {"id": "u1"},
                                "conversation": [{"participant": "USER", "utterance": "hi"}],
                                "metadata": {"sentiment": "satisfied"}}]), encoding="utf-8")
    assert main(["import", str(src), "--db", db]) == 0
    assert main(["export", "--db", db, "--out", str(tmp_path / "out.jsonl")]) == 0
    assert "wrote 1 dialogues" in capsys.readouterr().out
    # The salt setting (ARENA_PSEUDONYM_SALT) reaches the export through the command line's settings.
    monkeypatch.setenv("ARENA_PSEUDONYM_SALT", "team-secret")
    assert main(["export", "--db", db, "--out", str(tmp_path / "salted.jsonl")]) == 0
    salted = json.loads((tmp_path / "salted.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert salted["user"]["id"] == pseudonymiser("team-secret")("u1")
    src.write_text("[1]", encoding="utf-8")
    assert main(["import", str(src), "--db", db]) == 2
    assert "record 0" in capsys.readouterr().err
