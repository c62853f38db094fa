"""Mirroring the store to a Hub dataset through the real huggingface_hub code, against a local Hub server."""

from __future__ import annotations

import json
import threading

import pytest

from arena.corpus.hub_mirror import HubMirror, MirrorRefused
from arena.corpus.records import export_records
from arena.store import Store
from tests.space.mirror_support import SALT, add_battle, corpus_view, person_dialogue
from tests.support.hub_server import HubServer

REPO = "researchers/arena-corpus"


@pytest.fixture
def hub():
    with HubServer() as server:
        yield server


def mirror(hub, path, *, salt=SALT, replica="r1") -> HubMirror:
    return HubMirror(Store(path), REPO, salt=salt, token="hf_test_token", endpoint=hub.url, replica=replica)


def test_push_then_restore_onto_an_empty_disk_loses_nothing_pushed(hub, tmp_path):
    first = mirror(hub, tmp_path / "one" / "arena.sqlite3")
    assert first.prepare() == {}  # a new, empty dataset: nothing to restore
    assert hub.repos[("dataset", REPO)].private  # private by default
    store = first.store
    add_battle(store, "b1", "raw-person-0001", flag_fast=True)
    store.save_dialogue(person_dialogue("solo", "raw-person-0002"))
    store.hide_dialogues(["solo"], actor="ada", reason="spam")
    assert first.push() > 0
    add_battle(store, "b2", "raw-person-0003")
    assert first.push() > 0 and first.push() == 0  # the second push carries only b2; a third has nothing
    files = hub.files(REPO)
    shard_names = [f for f in files if f.startswith("shards/")]
    assert {f.split("/")[1] for f in shard_names} >= {"dialogues", "ratings", "votes", "scores", "hidden", "moderation"}
    everything = b"".join(files.values())
    for raw in (b"raw-person-0001", b"raw-person-0002", b"raw-person-0003", b"ada@example.org"):
        assert raw not in everything  # pseudonymised as the export is
    assert json.loads(files["salt.json"])["fingerprint"] and SALT.encode() not in everything
    assert "hf_test_token" in hub.tokens_seen

    second = mirror(hub, tmp_path / "two" / "arena.sqlite3", replica="r2")  # a new, empty disk
    counts = second.prepare()
    assert counts["dialogues"] == 5 and counts["votes"] == 2
    assert corpus_view(second.store) == corpus_view(store)
    # exports agree before and after: the same pseudonyms, since the salt is the same
    assert list(export_records(second.store, salt=SALT)) == list(export_records(store, salt=SALT))
    assert second.push() == 0  # what was restored is not pushed again


def test_a_deleted_dialogue_stays_deleted_after_a_restore(hub, tmp_path):
    one = mirror(hub, tmp_path / "one.sqlite3")
    one.prepare()
    a, b, vote_id = add_battle(one.store, "gone", "raw-person-0009")
    add_battle(one.store, "kept", "raw-person-0010")
    one.push()
    # Another replica restored before the deletion; it will push its (older) copy afterwards.
    late = mirror(hub, tmp_path / "late.sqlite3", replica="late")
    late.prepare()
    one.store.delete_dialogues([a, b], actor="ada", reason="asked to be forgotten")
    one.push()
    late.store.save_dialogue(person_dialogue(a, "raw-person-0009"))  # touched again: pushed after the tombstone
    late.push()
    restored = mirror(hub, tmp_path / "restored.sqlite3", replica="new")
    restored.prepare()
    ids = {d.dialogue_id for d in restored.store.list_dialogues()}
    assert a not in ids and b not in ids and {"kept-a", "kept-b"} <= ids
    assert vote_id not in {v.vote_id for v in restored.store.list_votes()}
    assert ("delete", f"{a},{b}", "asked to be forgotten") in corpus_view(restored.store)["log"]


def test_two_replicas_pushing_at_once_never_overwrite_each_others_shards(hub, tmp_path):
    replicas = [mirror(hub, tmp_path / f"r{i}.sqlite3", replica="space") for i in range(2)]  # same host name
    for r in replicas:
        r.prepare()
    written: list[str] = []
    original = hub.files

    def work(i: int, r: HubMirror) -> None:
        for round_ in range(4):
            add_battle(r.store, f"r{i}-{round_}", f"raw-person-{i}{round_}")
            r.push()

    threads = [threading.Thread(target=work, args=(i, r)) for i, r in enumerate(replicas)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    commits = hub.repos[("dataset", REPO)].commits
    for (_, before), (_, after) in zip(commits, commits[1:]):
        changed = [p for p in before if p in after and after[p] != before[p]]
        assert changed == []  # no commit ever rewrote a file
        written += [p for p in after if p not in before]
    shards_written = [p for p in written if p.startswith("shards/")]
    assert len(shards_written) == len(set(shards_written)) == len([p for p in original(REPO) if p.startswith("shards/")])
    restored = mirror(hub, tmp_path / "restored.sqlite3", replica="new")
    assert restored.prepare()["dialogues"] == 16  # 2 replicas x 4 battles x 2 dialogues


def test_the_salt_comes_from_a_secret_and_must_match_the_corpus(hub, tmp_path):
    with pytest.raises(MirrorRefused) as missing:
        mirror(hub, tmp_path / "a.sqlite3", salt=None).prepare()
    assert "ARENA_PSEUDONYM_SALT" in str(missing.value) and "\n" not in str(missing.value)
    first = mirror(hub, tmp_path / "b.sqlite3")
    first.prepare()
    add_battle(first.store, "x", "raw-person-0100")
    first.push()
    with pytest.raises(MirrorRefused) as different:
        mirror(hub, tmp_path / "c.sqlite3", salt="another-salt").prepare()
    assert "differs" in str(different.value) and "\n" not in str(different.value)
    fresh = mirror(hub, tmp_path / "c.sqlite3")
    assert fresh.store.list_dialogues() == []  # the refused start restored nothing


def test_the_mirror_reaches_the_hub_while_models_stay_offline(hub, tmp_path):
    from huggingface_hub import constants

    assert constants.HF_HUB_OFFLINE  # the test suite (like the app) runs offline
    m = mirror(hub, tmp_path / "a.sqlite3")
    m.prepare()
    add_battle(m.store, "y", "raw-person-0200")
    assert m.push() > 0
    assert constants.HF_HUB_OFFLINE  # lifted only for the mirror's own calls


def test_a_public_start_without_the_salt_secret_refuses_with_one_line(hub, tmp_path, monkeypatch, capsys):
    from webapp.serve import main

    first = mirror(hub, tmp_path / "a.sqlite3")
    first.prepare()
    add_battle(first.store, "z", "raw-person-0300")
    first.push()  # an existing corpus on the Hub
    for name, value in {"ARENA_DB": str(tmp_path / "new.sqlite3"), "ARENA_CACHE_DIR": str(tmp_path / "cache"),
                        "ARENA_LLM_PROVIDER": "fake", "ARENA_HUB_DATASET": REPO, "HF_ENDPOINT": hub.url}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("ARENA_PSEUDONYM_SALT", raising=False)
    assert main([]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ARENA_HUB_DATASET=") and "ARENA_PSEUDONYM_SALT" in err and "\n" not in err
    assert Store(tmp_path / "new.sqlite3").list_dialogues() == []  # nothing restored, nothing served


def test_a_deletion_is_pushed_within_seconds_not_at_the_next_period(hub, tmp_path):
    import time

    m = HubMirror(Store(tmp_path / "a.sqlite3"), REPO, salt=SALT, endpoint=hub.url, replica="r1",
                  every_s=3600, check_s=0.1)
    m.prepare()
    a, b, _ = add_battle(m.store, "soon-gone", "raw-person-0400")
    m.push()
    m.start()
    try:
        m.store.delete_dialogues([a, b], actor="ada", reason="asked to be forgotten")
        deadline = time.monotonic() + 30
        while not any(b'"deleted": true' in data for data in hub.files(REPO).values()):
            assert time.monotonic() < deadline, "the deletion was not pushed"
            time.sleep(0.1)
    finally:
        m.stop()
    restored = mirror(hub, tmp_path / "restored.sqlite3", replica="new")
    restored.prepare()
    assert restored.store.list_dialogues() == []
