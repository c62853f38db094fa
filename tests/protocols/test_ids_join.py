"""Ids that join: an imported corpus's own ids survive a researchers' export, ratings may name a
dialogue by its source id or by the id the public export gave it, and the public export stays
pseudonymised."""

from __future__ import annotations

import json

import pytest

from arena.corpus.bundle import export_bundle
from arena.corpus.cli import main as corpus_main
from arena.corpus.loading import load_dialogues
from arena.corpus.records import export_json, import_dialogues
from arena.store import Store
from evaluators.rating_files import RatingImportError, attach_ratings, import_into_store, read_rating_file

USER = "03368a16-5b1e-4c8e-9f00-1a2b3c4d5e6f"
SOURCE_ID = f"barcor_redial_{USER}"


def _crsarena_record() -> dict:
    return {
        "conversation ID": SOURCE_ID,
        "agent": {"id": "barcor_redial", "type": "AGENT"},
        "user": {"id": USER, "type": "USER"},
        "conversation": [
            {"participant": "USER", "utterance": "Any heist films?", "utterance ID": f"{SOURCE_ID}_0"},
            {"participant": "AGENT", "utterance": "Try Heat (1995).", "utterance ID": f"{SOURCE_ID}_1"},
        ],
        "metadata": {"sentiment": "satisfied"},
    }


@pytest.fixture
def store(tmp_path):
    source = tmp_path / "crsarena.json"
    source.write_text(json.dumps([_crsarena_record()]), encoding="utf-8")
    with Store(tmp_path / "arena.sqlite3") as s:
        import_dialogues(s, source)
        yield s


def _ratings(tmp_path, dialogue_id: str, name: str = "ratings.csv"):
    path = tmp_path / name
    path.write_text(f"dialogue_id,rater_id,overall_impression\n{dialogue_id},r1,3\n", encoding="utf-8")
    return path


def test_the_public_export_is_pseudonymised_and_the_researchers_keeps_source_ids(store, tmp_path):
    public, research = tmp_path / "public.json", tmp_path / "research.json"
    export_json(store, public, salt="s")
    export_json(store, research, salt="s", source_ids=True)
    [pub] = json.loads(public.read_text())
    assert pub["conversation ID"] != SOURCE_ID and USER not in public.read_text()
    [res] = json.loads(research.read_text())
    assert res["conversation ID"] == res["conversation_id"] == SOURCE_ID
    assert [u["utterance ID"] for u in res["conversation"]] == [f"{SOURCE_ID}_0", f"{SOURCE_ID}_1"]
    assert res["metadata"]["public_id"] == pub["conversation ID"]
    assert res["user"]["id"] == pub["user"]["id"] != USER  # the user field stays a pseudonym
    # The folder export: the dialogues and the score rows name the dialogue the same way.
    bundle = export_bundle(store, tmp_path / "bundle", salt="s", source_ids=True)
    assert json.loads(bundle.files["dialogues_json"].read_text())[0]["conversation ID"] == SOURCE_ID
    assert "researchers' export, not for publication" in bundle.files["card"].read_text()
    public_bundle = export_bundle(store, tmp_path / "public-bundle", salt="s")
    assert USER not in public_bundle.files["scores_csv"].read_text()
    assert USER not in public_bundle.files["dialogues"].read_text()


def test_ratings_on_an_export_join_by_either_id(store, tmp_path):
    public, research = tmp_path / "public.json", tmp_path / "research.json"
    export_json(store, public, salt="s")
    export_json(store, research, salt="s", source_ids=True)
    public_id = json.loads(public.read_text())[0]["conversation ID"]
    by_source = read_rating_file(_ratings(tmp_path, SOURCE_ID))
    by_public = read_rating_file(_ratings(tmp_path, public_id, "public.csv"))
    # The public export cannot be joined with ratings keyed by the source's ids...
    with pytest.raises(RatingImportError, match="unknown dialogue id"):
        attach_ratings(load_dialogues(public), by_source)
    # ...the researchers' export can, by either id.
    for rows in (by_source, by_public):
        [rated] = attach_ratings(load_dialogues(research), rows)
        assert rated.dialogue_id == SOURCE_ID and rated.ratings[0].values == {"overall_impression": 3.0}


def test_ratings_import_into_the_store_by_either_id(store, tmp_path):
    export_json(store, tmp_path / "public.json", salt="s")
    public_id = json.loads((tmp_path / "public.json").read_text())[0]["conversation ID"]
    [changed] = import_into_store(store, _ratings(tmp_path, public_id), salt="s")
    assert changed.dialogue_id == SOURCE_ID
    [changed] = import_into_store(store, _ratings(tmp_path, SOURCE_ID, "again.csv"), salt="s")
    assert changed.dialogue_id == SOURCE_ID
    assert len(store.get_dialogue(SOURCE_ID).ratings) == 1  # the same rater's rating, replaced
    with pytest.raises(RatingImportError, match="unknown dialogue id 'nothing'"):
        import_into_store(store, _ratings(tmp_path, "nothing", "none.csv"), salt="s")


def test_the_export_command_takes_source_ids(store, tmp_path, capsys):
    out = tmp_path / "cli.json"
    assert corpus_main(["export", "--db", str(store.path), "--out", str(out), "--salt", "s", "--source-ids"]) == 0
    assert json.loads(out.read_text())[0]["conversation ID"] == SOURCE_ID


def test_source_ids_keeps_utterance_ids_holding_the_user_id_when_the_conversation_id_does_not(tmp_path):
    """A source whose conversation id has no user id in it but some utterance ids do (9 utterances, the
    user's id in 2 of them): the researchers' export writes all 9 as the source did."""
    ids = [f"run-7-{i}" for i in range(9)]
    ids[3], ids[6] = f"{USER}-3", f"turn-6-{USER}"
    record = {"conversation ID": "run-7", "agent": {"id": "barcor_redial", "type": "AGENT"},
              "user": {"id": USER, "type": "USER"},
              "conversation": [{"participant": "USER" if i % 2 == 0 else "AGENT", "utterance": f"line {i}",
                                "utterance ID": uid} for i, uid in enumerate(ids)]}
    source = tmp_path / "source.json"
    source.write_text(json.dumps([record]), encoding="utf-8")
    with Store(tmp_path / "arena.sqlite3") as s:
        import_dialogues(s, source)
        research, public = tmp_path / "research.json", tmp_path / "public.json"
        export_json(s, research, salt="s", source_ids=True)
        export_json(s, public, salt="s")
    [res] = json.loads(research.read_text())
    assert res["conversation ID"] == "run-7" and "public_id" not in res["metadata"]
    assert [u["utterance ID"] for u in res["conversation"]] == ids
    assert [u["utterance_id"] for u in res["conversation"]] == ids
    # The public export still keeps the user's id out of every utterance id.
    assert USER not in public.read_text()
