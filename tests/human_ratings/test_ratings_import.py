"""`python -m evaluators ratings import`: attaching rating files, and refusing bad ones whole."""

import json

import pytest

from arena.dialogue import Dialogue, UserInfo, UserKind
from arena.store import Store
from evaluators.cli import main, record_of

HEADER = "dialogue_id,utterance_id,rater_id,understanding,task_completion,efficiency,relevance\n"


def corpus() -> list[Dialogue]:
    out = []
    for n in (1, 2):
        d = Dialogue(dialogue_id=f"d{n}", crs_id="alpha", user=UserInfo(kind=UserKind.HUMAN, id=f"p{n}"))
        d.add_user("something funny", utterance_id=f"d{n}_0")
        d.add_agent("Try Airplane!", utterance_id=f"d{n}_1")
        d.end("feedback")
        out.append(d)
    return out


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "arena.sqlite3"
    Store(path).save_dialogues(corpus())
    return path


def write(tmp_path, text, name="ratings.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_csv_ratings_reach_the_store_and_reimport_changes_nothing(tmp_path, db, capsys):
    path = write(tmp_path, HEADER + "d1,,ann1,2,1,0,\nd1,d1_1,ann1,,,,3\nd2,,ann1,0,,1,\nd2,,ann2,1,,,\n")
    assert main(["ratings", "import", str(path), "--db", str(db)]) == 0
    assert "attached ratings to 2 dialogues" in capsys.readouterr().out
    assert main(["ratings", "import", str(path), "--db", str(db)]) == 0
    d1, d2 = (Store(db).get_dialogue(i) for i in ("d1", "d2"))
    assert [r.values for r in d1.ratings] == [{"understanding": 2, "task_completion": 1, "efficiency": 0}]
    assert d1.ratings[0].source == "import" and d1.ratings[0].form_version == "aspects_v1"
    assert d1.utterances[1].ratings[0].values == {"relevance": 3}
    assert [(r.rater_id, r.values) for r in d2.ratings] == [("ann1", {"understanding": 0, "efficiency": 1}),
                                                            ("ann2", {"understanding": 1})]


def test_json_ratings_with_turns_reach_a_scored_corpus(tmp_path):
    scored = tmp_path / "scored.jsonl"
    scored.write_text("".join(json.dumps(record_of(d)) + "\n" for d in corpus()))
    path = write(tmp_path, json.dumps([{"conversation ID": "d2", "rater_id": "a", "understanding": 1,
                                        "turns": [{"utterance_id": "d2_1", "relevance": 2}]}]), "r.json")
    out = tmp_path / "rated.jsonl"
    assert main(["ratings", "import", str(path), "--corpus", str(scored), "--out", str(out)]) == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert records[1]["metadata"]["ratings"][0]["values"] == {"understanding": 1}
    assert records[1]["conversation"][1]["ratings"][0]["values"] == {"relevance": 2}
    assert "ratings" not in records[0]["metadata"]


# The first data row (row 1) is good; the bad rows follow it, so nothing may be attached.
@pytest.mark.parametrize("rows, message", [
    ("d1,,a,2,,,\nd2,,a,,,,,\n", "row 3 (line 4): more cells than columns"),
    ("d1,,a,3,,,\n", "row 2 (line 3), column 'understanding': '3' is outside the scale 0-2"),
    ("d1,,a,,,-1,\n", "row 2 (line 3), column 'efficiency': '-1' is outside the scale 0-1"),
    ("d1,,a,good,,,\n", "row 2 (line 3), column 'understanding': 'good' is not a number"),
    ("d9,,a,1,,,\n", "row 2 (line 3), column 'dialogue_id': unknown dialogue id 'd9'"),
    ("d1,,a,1,,,\nd1,,a,2,,,\n", "row 3 (line 4), column 'rater_id': duplicate of row 2 (line 3)"),
    ("d1,d1_7,a,,,,2\n", "row 2 (line 3), column 'utterance_id': dialogue 'd1' has no utterance 'd1_7'"),
    ("d1,d1_0,a,,,,2\n", "row 2 (line 3), column 'utterance_id': 'd1_0' is a user message"),
    ("d1,,a,,,,2\n", "row 2 (line 3), column 'relevance': a utterance-level aspect belongs on a row with"),
    ("d1,,a,,,,\n", "row 2 (line 3): no aspect values"),
])
def test_bad_csv_is_refused_whole_naming_row_and_column(tmp_path, db, capsys, rows, message):
    path = write(tmp_path, HEADER + "d2,,ok,1,1,1,\n" + rows)
    assert main(["ratings", "import", str(path), "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert message in err, err
    assert "nothing was imported" in err and len(err.strip().splitlines()) == 2
    assert Store(db).get_dialogue("d2").ratings == []  # the good row was not attached either


def test_unknown_aspect_column_is_named(tmp_path, db, capsys):
    path = write(tmp_path, "dialogue_id,understandnig\nd1,1\n")
    assert main(["ratings", "import", str(path), "--db", str(db)]) == 2
    assert "row 1 (line 2), column 'understandnig': unknown aspect" in capsys.readouterr().err
