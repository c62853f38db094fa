"""Aspect ratings on the Dialogue model: the form file, JSON round trips, exports."""

import json

import pandas as pd
import pytest

from arena.crowd.aspects import FormError, load_form, mean_values, parse_form
from arena.dialogue import Dialogue, Feedback, Rating, UserInfo, UserKind, replace_rating
from arena.corpus.dialoguekit import from_record, to_dialoguekit
from arena.corpus.bundle import export_bundle
from arena.store import Store

RAW_ID = "session-secret-person-42"


def rated_dialogue() -> Dialogue:
    d = Dialogue(crs_id="alpha", user=UserInfo(kind=UserKind.HUMAN, id=RAW_ID))
    d.add_user("a comedy please", utterance_id="u1")
    d.add_agent("How about Airplane!?", utterance_id="a1")
    d.feedback = Feedback(sentiment="satisfied")
    d.ratings.append(Rating(values={"understanding": 2, "overall_impression": 3}, rater_id=RAW_ID,
                            form_version="aspects_v1"))
    d.utterances[1].ratings.append(Rating(values={"relevance": 3}, rater_id=RAW_ID, form_version="aspects_v1"))
    d.end("feedback")
    return d


def test_shipped_form_has_the_issue_aspects_and_scales():
    form = load_form()
    assert form.version == "aspects_v1"
    scales = {a.name: (a.low, a.high, a.level) for a in form.aspects}
    assert scales == {
        "understanding": (0, 2, "dialogue"), "task_completion": (0, 2, "dialogue"),
        "interest_arousal": (0, 2, "dialogue"), "efficiency": (0, 1, "dialogue"),
        "overall_impression": (0, 4, "dialogue"), "relevance": (0, 3, "utterance"),
    }
    assert all(a.definition for a in form.aspects)
    assert form.clean({"understanding": "2", "efficiency": ""}, "dialogue") == {"understanding": 2.0}
    with pytest.raises(ValueError, match="outside the scale 0-1"):
        form.clean({"efficiency": 2}, "dialogue")
    with pytest.raises(ValueError, match="unknown dialogue aspect 'relevance'"):
        form.clean({"relevance": 2}, "dialogue")


def test_a_broken_form_is_refused():
    with pytest.raises(FormError, match="min 2 must be below max 1"):
        parse_form({"version": "x", "dialogue": [{"name": "a", "min": 2, "max": 1}]})
    with pytest.raises(FormError, match="unique"):
        parse_form({"version": "x", "dialogue": [{"name": "a", "min": 0, "max": 1}],
                    "utterance": [{"name": "a", "min": 0, "max": 1}]})


def test_ratings_round_trip_in_json_and_dialoguekit_layout():
    d = rated_dialogue()
    assert Dialogue.from_json(d.to_json()) == d
    assert from_record(json.loads(json.dumps(to_dialoguekit(d)))) == d


def test_same_rater_replaces_and_means_ignore_skipped_aspects():
    ratings: list[Rating] = []
    replace_rating(ratings, Rating(values={"understanding": 0}, rater_id="r", form_version="v"))
    replace_rating(ratings, Rating(values={"understanding": 2}, rater_id="r", form_version="v"))
    replace_rating(ratings, Rating(values={"understanding": 1, "efficiency": 1}, rater_id="s", form_version="v"))
    replace_rating(ratings, Rating(values={"understanding": 0}, rater_id="sim", rater_kind=UserKind.SIMULATOR,
                                   form_version="v"))
    assert len(ratings) == 3
    assert mean_values(ratings, "human") == {"understanding": 1.5, "efficiency": 1.0}
    assert mean_values(ratings, "simulator") == {"understanding": 0.0}


def test_exports_carry_pseudonymised_ratings_in_jsonl_csv_and_parquet(tmp_path):
    store = Store(tmp_path / "a.sqlite3")
    store.save_dialogue(rated_dialogue())
    result = export_bundle(store, tmp_path / "out", salt="s")
    text = "".join(p.read_text(errors="ignore") for p in (tmp_path / "out").iterdir() if p.is_file())
    assert RAW_ID not in text
    rec = json.loads(result.files["dialogues"].read_text().splitlines()[0])
    assert rec["metadata"]["ratings"][0]["values"] == {"understanding": 2, "overall_impression": 3}
    assert rec["metadata"]["ratings"][0]["rater_id"] == rec["user"]["id"]  # the same pseudonym
    assert rec["conversation"][1]["ratings"][0]["values"] == {"relevance": 3}
    for table in (pd.read_csv(result.files["scores_csv"]), pd.read_parquet(result.files["scores_parquet"])):
        rows = table.set_index("metric")
        assert rows.loc["rating.understanding", "value"] == 2
        assert rows.loc["rating.relevance", "utterance_id"] == "a1"
        assert rows.loc["rating.overall_impression", "rater_kind"] == "human"
        assert "rating.task_completion" not in rows.index  # skipped: no row, never 0
    assert "`metadata.ratings`" in result.files["card"].read_text()
