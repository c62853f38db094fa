"""A returning browser keeps its participant id, and its own data, across a restore onto an empty disk."""

from __future__ import annotations

import json

from arena.corpus.hub_mirror import HubMirror
from arena.store import Store
from tests.space.mirror_support import SALT, person_dialogue
from tests.space.test_hub_erasure import text_anywhere
from tests.space.test_hub_mirror import REPO, hub  # noqa: F401 (the fixture)
from webapp.sessions import participants
from webapp.ui.parts.participant import BROWSER_SECRET_KEY

TOKEN = participants.new_token()


def mirrored(hub, path, replica: str) -> HubMirror:
    return HubMirror(Store(path), REPO, salt=SALT, token="t", endpoint=hub.url, replica=replica)


def test_a_returning_browser_sees_downloads_and_deletes_its_dialogues_after_a_restore(hub, tmp_path):
    first = mirrored(hub, tmp_path / "first.sqlite3", "r1")
    first.prepare()
    browser_key = participants.identity_secret(first.store, BROWSER_SECRET_KEY, SALT)
    me = participants.participant_id(first.store, TOKEN, SALT)
    someone = participants.participant_id(first.store, participants.new_token(), SALT)
    for i in range(3):
        d = person_dialogue(f"mine-{i}", me)
        d.add_user("the tall lighthouse keeper")
        first.store.save_dialogue(d)
    first.store.save_dialogue(person_dialogue("theirs", someone))
    first.push()

    again = mirrored(hub, tmp_path / "empty-disk.sqlite3", "r2")  # the disk was lost: nothing but the Hub
    assert again.prepare()["dialogues"] == 4
    # The browser can still decrypt its localStorage value, and its token gives the same id.
    assert participants.identity_secret(again.store, BROWSER_SECRET_KEY, SALT) == browser_key
    assert participants.participant_id(again.store, TOKEN, SALT) == me
    own = participants.summary(again.store, me, SALT)
    assert own.chats == 3 and participants.summary(again.store, someone, SALT).chats == 1
    path, count = participants.export_own(again.store, me, tmp_path / "download", SALT)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert count == 3 and {r["conversation_id"] for r in records} == {"mine-0", "mine-1", "mine-2"}
    # A new conversation after the restore is theirs too, next to the restored ones.
    again.store.save_dialogue(person_dialogue("mine-new", me))
    assert participants.summary(again.store, me, SALT).chats == 4
    deleted = participants.delete_own(again.store, me, SALT)
    assert deleted["dialogues"] == 4
    assert participants.summary(again.store, me, SALT).total == 0
    assert [d.dialogue_id for d in again.store.list_dialogues()] == ["theirs"]
    again.push()  # the deletion reaches the Hub, history included
    assert text_anywhere(hub, b"lighthouse keeper") == []


def test_without_the_salt_the_secrets_stay_in_the_database(tmp_path):
    store = Store(tmp_path / "arena.sqlite3")
    me = participants.participant_id(store, TOKEN)
    assert me == participants.participant_id(store, TOKEN) != participants.participant_id(store, TOKEN, SALT)
    assert participants.participant_id(Store(tmp_path / "other.sqlite3"), TOKEN) != me
