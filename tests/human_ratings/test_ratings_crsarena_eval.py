"""CRSArena-Eval's labels as published (FACE paper), and CSVs with their names: imported at dialogue and
turn level, through aliases, declared and inferred extra aspects; bad files refused whole.

The files are built by hand (tests/human_ratings/crsarena_eval_files.py), never read from the published labels.
"""

import json

import pytest

from arena.corpus.cli import main as corpus_main
from arena.store import Store
from evaluators.cli import main
from tests.human_ratings.crsarena_eval_files import DIAL_KEYS, DIAL_LABELS, TURN_LABELS, eval_records, \
    write, write_corpus


@pytest.fixture
def corpus(tmp_path):
    return write_corpus(tmp_path)


def import_into(corpus, ratings, *extra):
    out = corpus.with_name("rated.jsonl")
    code = main(["ratings", "import", str(ratings), "--corpus", str(corpus), "--out", str(out), *extra])
    return code, ({json.loads(line)["conversation ID"]: json.loads(line) for line in out.read_text().splitlines()}
                  if code == 0 else None)


def check_rated(rated):
    kbrd = rated["kbrd_redial_7c1f"]
    [rating] = kbrd["metadata"]["ratings"]
    assert rating["values"] == {"understanding": 2, "task_completion": 2, "interest_arousal": 1.67,
                                "efficiency": 1, "overall_impression": 3.33, "preference_elicitation": 1,
                                "explanation": 2}
    assert (rating["rater_id"], rating["rater_kind"], rating["source"]) == ("aggregated", "human", "import")
    assert rating["extra_scales"] == {"preference_elicitation": [0, 2], "explanation": [0, 2]}
    turns = {(cid, i): [r["values"] for r in u.get("ratings", [])]
             for cid, rec in rated.items() for i, u in enumerate(rec["conversation"])}
    for key, value in turns.items():  # every label on its own reply, nothing anywhere else
        expected = TURN_LABELS.get(key)
        assert value == ([{"relevance": expected[0], "interestingness": expected[1]}] if expected else []), key
    assert rated["barcor_redial_2a9e"]["conversation"][3]["ratings"][0]["extra_scales"] == {"interestingness": [0, 2]}


def test_a_json_list_of_records_attaches_at_dialogue_and_turn_level(tmp_path, corpus, capsys):
    ratings = write(tmp_path, "crsarena_eval.json", json.dumps(eval_records()))
    code, rated = import_into(corpus, ratings)
    assert code == 0
    check_rated(rated)
    out = capsys.readouterr().out
    assert "attached ratings to 4 dialogues" in out
    assert ("kept aspects the form aspects_v1 does not ask: explanation (dialogue, 0-2, declared); "
            "interestingness (utterance, 0-2, declared); preference_elicitation (dialogue, 0-2, declared)") in out


def test_jsonl_into_a_database_and_again_changes_nothing(tmp_path, corpus):
    ratings = write(tmp_path, "crsarena_eval.jsonl", "".join(json.dumps(r) + "\n" for r in eval_records()))
    db = tmp_path / "arena.sqlite3"
    assert corpus_main(["import", str(corpus), "--db", str(db)]) == 0
    for _ in range(2):
        assert main(["ratings", "import", str(ratings), "--db", str(db)]) == 0
    barcor = Store(db).get_dialogue("barcor_redial_2a9e")
    assert [r.values["task_completion"] for r in barcor.ratings] == [1.5]
    assert [[r.values for r in u.ratings] for u in barcor.utterances] == [
        [], [{"relevance": 2, "interestingness": 1}], [], [{"relevance": 1, "interestingness": 0}], [], []]


def test_csv_with_their_column_names_is_read_at_both_levels(tmp_path, corpus, capsys):
    dial = write(tmp_path, "dial.csv", "conv_id," + ",".join(DIAL_KEYS) + "\n" + "".join(
        f"{cid}," + ",".join(str(v) for v in values) + "\n" for cid, values in DIAL_LABELS.items()))
    code, rated = import_into(corpus, dial)
    assert code == 0, capsys.readouterr().err
    assert rated["unicrs_opendialkg_0b3d"]["metadata"]["ratings"][0]["values"]["overall_impression"] == 1
    # Turn rows name the reply by turn_ind and role, with or without its text.
    turns = write(tmp_path, "turns.csv", "conv_id,turn_ind,role,utterance,relevance,interestingness\n"
                  "barcor_redial_2a9e,3,ASST,Try Airplane! (1980).,1,0\n"
                  "unicrs_opendialkg_0b3d,3,ASST,,0,0\n")
    code, rated = import_into(corpus, turns)
    assert code == 0, capsys.readouterr().err
    assert rated["barcor_redial_2a9e"]["conversation"][3]["ratings"][0]["values"] == {"relevance": 1,
                                                                                       "interestingness": 0}
    assert "ratings" not in rated["barcor_redial_2a9e"]["conversation"][1]
    assert rated["unicrs_opendialkg_0b3d"]["conversation"][3]["ratings"][0]["values"]["relevance"] == 0


def test_turn_ind_counted_in_exchanges_still_finds_repeated_replies(tmp_path, corpus):
    # Whether turn_ind counts utterances or exchanges, the record lists the whole dialogue: its order tells
    # the two equal replies apart.
    records = eval_records()
    for rec in records:
        for n, turn in enumerate(rec["dialogue"]):
            turn["turn_ind"] = n // 2
    code, rated = import_into(corpus, write(tmp_path, "by_exchange.json", json.dumps(records)))
    assert code == 0
    check_rated(rated)


def test_unknown_names_are_kept_with_an_inferred_scale_and_typos_refused(tmp_path, corpus, capsys):
    extra = write(tmp_path, "extra.csv", "conv_id,warmth,dialogue_overall\nkbrd_redial_7c1f,4,3\n"
                  "chatcrs_redial_e4d2,2,1\nbarcor_redial_2a9e,4.5,\n")
    code, rated = import_into(corpus, extra)
    assert code == 0
    rating = rated["barcor_redial_2a9e"]["metadata"]["ratings"][0]
    assert rating["values"] == {"warmth": 4.5} and rating["extra_scales"] == {"warmth": [2, 5]}
    assert "warmth (dialogue, 2-5, inferred)" in capsys.readouterr().out
    typo = write(tmp_path, "typo.csv", "conv_id,dialog_overall\nkbrd_redial_7c1f,3\n")
    assert import_into(corpus, typo)[0] == 2
    err = capsys.readouterr().err
    assert "row 1 (line 2), column 'dialog_overall': unknown aspect" in err
    assert "too close to 'dialogue_overall'" in err


def test_a_mapping_file_names_aliases_and_declares_scales(tmp_path, corpus, capsys):
    mapping = write(tmp_path, "mapping.yaml", "version: study_x\nform: aspects_v1\n"
                    "aliases: {overall: overall_impression, completed: task_completion}\n"
                    "extra: {dialogue: [{name: warmth, min: 1, max: 5}]}\n")
    ratings = write(tmp_path, "x.csv", "dialogue_id,overall,completed,warmth\nkbrd_redial_7c1f,4,2,5\n")
    code, rated = import_into(corpus, ratings, "--mapping", str(mapping))
    assert code == 0
    rating = rated["kbrd_redial_7c1f"]["metadata"]["ratings"][0]
    assert rating["values"] == {"overall_impression": 4, "task_completion": 2, "warmth": 5}
    assert rating["extra_scales"] == {"warmth": [1, 5]}
    off_scale = write(tmp_path, "y.csv", "dialogue_id,warmth\nkbrd_redial_7c1f,6\n")
    assert import_into(corpus, off_scale, "--mapping", str(mapping))[0] == 2
    assert "column 'warmth': 6 is outside the scale 1-5 of 'warmth'" in capsys.readouterr().err.replace("'6'", "6")
    # A file without CRSArena-Eval's names in its mapping treats dialogue_overall as a new aspect.
    other = write(tmp_path, "z.csv", "dialogue_id,dialogue_overall\nkbrd_redial_7c1f,3\n")
    code, rated = import_into(corpus, other, "--mapping", str(mapping))
    assert code == 0 and rated["kbrd_redial_7c1f"]["metadata"]["ratings"][0]["values"] == {"dialogue_overall": 3}


@pytest.mark.parametrize("change, message", [
    (lambda r: r[1]["dialogue"][3].update(utterance="Try Airplane 2 (1982)."),
     "row 2 (conv_id 'barcor_redial_2a9e') turns[1], column 'turn_ind': turn_ind 3 (ASST): no system utterance "
     "of dialogue 'barcor_redial_2a9e' has the text 'Try Airplane 2 (1982).'"),
    (lambda r: r[2]["dialogue"][3]["turn_level_aggregated"].update(relevance=4),
     "row 3 (conv_id 'unicrs_opendialkg_0b3d') turns[1], column 'relevance': 4 is outside the scale 0-3"),
    (lambda r: r[0]["dial_level_aggregated"].update(explanation=3),
     "row 1 (conv_id 'kbrd_redial_7c1f'), column 'explanation': 3 is outside the scale 0-2 of 'explanation'"),
    (lambda r: r[0]["dialogue"][2].update(turn_level_aggregated={"relevance": 2}),
     "row 1 (conv_id 'kbrd_redial_7c1f') turns[1], column 'turn_ind': turn_ind 2 (USER) is a user message"),
    (lambda r: r[3].update(conv_id="kbrd_redial_0000"),
     "row 4 (conv_id 'kbrd_redial_0000'), column 'dialogue_id': unknown dialogue id 'kbrd_redial_0000'"),
    (lambda r: r[0]["dialogue"][1].update(role="BOT"),
     "row 1 (conv_id 'kbrd_redial_7c1f') turns[0], column 'role': 'BOT' is not USER or ASST"),
    (lambda r: r[0]["dial_level_aggregated"].update(satisfaction=1),
     "column 'satisfaction': 'satisfaction' is reserved for the users' own satisfied/frustrated feedback"),
])
def test_bad_records_are_refused_whole_with_one_line_each(tmp_path, corpus, capsys, change, message):
    records = eval_records()
    change(records)
    code, _ = import_into(corpus, write(tmp_path, "bad.json", json.dumps(records)))
    assert code == 2
    err = capsys.readouterr().err
    assert message.replace("'", "") in err.replace("'", ""), err
    assert "nothing was imported" in err and len(err.strip().splitlines()) == 2
    assert not corpus.with_name("rated.jsonl").exists()


def test_a_mapping_for_another_form_is_refused_in_one_line(tmp_path, corpus, capsys):
    mapping = write(tmp_path, "m.yaml", "version: m1\nform: aspects_v9\naliases: {overall: overall_impression}\n")
    assert import_into(corpus, write(tmp_path, "r.json", json.dumps(eval_records())), "--mapping", str(mapping))[0] == 2
    assert capsys.readouterr().err.strip() == f"error: {mapping.resolve()}: maps onto form aspects_v9, but the form " \
                                               "in use is aspects_v1"
