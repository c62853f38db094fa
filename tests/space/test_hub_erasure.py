"""Erasure reaches the Hub mirror: a deleted dialogue's text leaves the current shards and every revision."""

from __future__ import annotations

import time

import pytest
from huggingface_hub import HfApi
from huggingface_hub.errors import RevisionNotFoundError

from arena.corpus.hub_mirror import HubMirror, hub_online
from arena.store import Store
from tests.space.mirror_support import SALT, add_battle, person_dialogue
from tests.space.test_hub_mirror import REPO, hub, mirror  # noqa: F401 (the fixture)
from webapp.protection import moderation

SECRET_TEXT = b"my neighbour Oskar Brandt at 12 Elm Road"


def secret_dialogue(dialogue_id: str, user_id: str):
    d = person_dialogue(dialogue_id, user_id)
    d.add_user(SECRET_TEXT.decode())
    d.add_agent("Noted.")
    return d


def text_anywhere(hub, text: bytes) -> list[str]:
    """Every (revision, path) of the dataset's reachable history that still holds `text`."""
    return [f"{sha[:8]}:{path}" for sha, files in hub.history(REPO) for path, data in files.items() if text in data]


def test_a_deletion_removes_the_text_from_the_current_files_and_from_the_history(hub, tmp_path):
    one = mirror(hub, tmp_path / "one.sqlite3")
    one.prepare()
    a, b, vote_id = add_battle(one.store, "gone", "raw-person-0009")
    one.store.save_dialogue(secret_dialogue("secret", "raw-person-0009"))
    add_battle(one.store, "kept", "raw-person-0010")
    one.push()
    one.store.save_dialogue(secret_dialogue("kept-too", "raw-person-0011"))  # same text, another person
    one.push()
    assert text_anywhere(hub, b"oskar") == [] and len(text_anywhere(hub, SECRET_TEXT)) >= 2
    shas_before = [sha for sha, _ in hub.history(REPO)]

    one.store.delete_dialogues(["secret", a, b], actor="ada", reason="asked to be forgotten")
    one.push()
    assert one.squashes == 1
    # Only the other person's copy is left: in the current files and in the one revision that remains.
    left = text_anywhere(hub, SECRET_TEXT)
    assert len(hub.history(REPO)) == 1 and len(left) == 1
    assert b'"kept-too"' in hub.files(REPO)[left[0].split(":", 1)[1]]
    everything = b"".join(hub.files(REPO).values())
    for gone in (b'"dialogue_id": "secret"', b'"dialogue_id": "gone-a"', b'"key": "gone-vote", "record"',
                 b'"key": "gone-a/rdl", "record"'):
        assert gone not in everything  # records, ratings, votes (with their comments), scores: only ids are left
    # The earlier revisions can no longer be read, through the real client either.
    api = HfApi(endpoint=hub.url, token="hf_test_token")
    with hub_online():
        assert [c.commit_id for c in api.list_repo_commits(REPO, repo_type="dataset")] == [hub.history(REPO)[0][0]]
        for sha in shas_before:
            with pytest.raises(RevisionNotFoundError):
                api.list_repo_files(REPO, repo_type="dataset", revision=sha)

    # A restore still knows what was deleted and keeps the rest.
    restored = mirror(hub, tmp_path / "restored.sqlite3", replica="new")
    restored.prepare()
    ids = {d.dialogue_id for d in restored.store.list_dialogues()}
    assert ids == {"kept-a", "kept-b", "kept-too"}
    assert vote_id not in {v.vote_id for v in restored.store.list_votes()}


def test_a_participants_own_deletion_is_erased_within_one_push_of_the_thread(hub, tmp_path):
    one = HubMirror(Store(tmp_path / "one.sqlite3"), REPO, salt=SALT, token="t", endpoint=hub.url,
                    every_s=3600, check_s=0.2)
    one.prepare()
    one.store.save_dialogue(secret_dialogue("mine", "p-0123456789abcdef01234567"))
    one.push()
    one.start()
    try:
        moderation.delete_user(one.store, "p-0123456789abcdef01234567", actor="participant", reason="mine",
                               exact=True)
        deadline = time.monotonic() + 20
        while text_anywhere(hub, SECRET_TEXT) and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        one.stop()
    assert text_anywhere(hub, SECRET_TEXT) == []


def test_a_squash_that_failed_is_done_at_the_next_push(hub, tmp_path, monkeypatch):
    one = mirror(hub, tmp_path / "one.sqlite3")
    one.prepare()
    one.store.save_dialogue(secret_dialogue("secret", "raw-person-0012"))
    one.push()
    one.store.delete_dialogues(["secret"], actor="ada", reason="asked")
    calls = []

    def down(*args, **kwargs):
        calls.append(1)
        raise ConnectionError("the Hub is away")

    monkeypatch.setattr(one.api, "super_squash_history", down)
    try:
        one.push()
    except ConnectionError:
        pass
    assert calls and text_anywhere(hub, SECRET_TEXT)  # the old revision still holds it
    monkeypatch.undo()
    assert one.push() == 0
    assert text_anywhere(hub, SECRET_TEXT) == [] and one.squashes == 1
