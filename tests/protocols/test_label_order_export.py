"""A label's order within its participant's session reaches the exported dialogue (`metadata.label_order`,
beside the feedback), in the bundle's files and the plain JSON export, and DialogueKit still reads them."""

from __future__ import annotations

import io
import json

from dialoguekit.utils.dialogue_reader import json_to_dialogues

from arena.corpus.bundle import export_bundle
from arena.corpus.records import export_json
from arena.store import Store
from tests.store.store_strategies import rich_dialogue


def _labelled(store):
    first, second = rich_dialogue(user_id="user-a"), rich_dialogue(user_id="user-a")
    unlabelled = rich_dialogue(user_id="user-a", sentiment=None)
    for d in (first, second, unlabelled):
        store.save_dialogue(d)
    return {first.dialogue_id: 1, second.dialogue_id: 2, unlabelled.dialogue_id: None}


def _orders(records) -> dict:
    # The exported ids are public ids: match each record back by its creation time, which export keeps.
    return {rec["metadata"]["created_at"]: rec["metadata"].get("label_order") for rec in records}


def test_the_bundle_and_the_json_export_carry_each_labels_order(tmp_path):
    with Store(tmp_path / "arena.sqlite3") as store:
        _check_exports(store, tmp_path)


def _check_exports(store, tmp_path):
    wanted = _labelled(store)
    by_created = {d.created_at.isoformat(): wanted[d.dialogue_id] for d in store.list_dialogues()}
    bundle = export_bundle(store, tmp_path / "bundle", salt="fixed")
    lines = [json.loads(line) for line in bundle.files["dialogues"].read_text().splitlines()]
    assert _orders(lines) == by_created
    for rec in lines:
        if rec["metadata"].get("label_order") is not None:
            assert "feedback" in rec["metadata"]  # the order sits beside the label it orders
    listed = json.loads(bundle.files["dialogues_json"].read_text())
    assert _orders(listed) == by_created
    out = io.StringIO()
    export_json(store, out, salt="fixed")
    assert _orders(json.loads(out.getvalue())) == by_created
    path = tmp_path / "dialogues.json"
    path.write_text(out.getvalue())
    assert len(json_to_dialogues(str(path))) == 3  # DialogueKit's reader takes the extra key
