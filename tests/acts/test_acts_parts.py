"""Title finding, the act model artifact, the IARD split, LLM answer parsing."""

import json

import pytest

from arena.dialogue import Role, Utterance
from evaluators.acts.base import AnnotationError
from evaluators.acts.data import (
    ARENA_DEV, ARENA_DEV3, ARENA_EVAL, ARENA_EVAL2, ARENA_TEST, ARENA_TEST3, ARENA_TEST4, ARENA_TEST5, ARENA_TEST6, ARENA_TEST7, ARENA_TEST8, ARENA_TEST9, ARENA_TEST10, SECOND_ANNOTATION, TRAIN_SECOND_ANNOTATION, iard_split,
    is_held_out, load_arena_style, load_iard, load_second_annotation, utterance_key, with_second_annotation,
)
from evaluators.acts.llm import build_messages, load_prompt, parse_answer
from evaluators.acts.offline import DEFAULT_ARTIFACT, ActModel
from evaluators.acts.schema import make_acts, normalise_intent
from arena.titles.linking import find_mentions, mask_titles
from tests.acts.acts_helpers import make_dialogue


def titles(text, role=Role.AGENT, items=()):
    from arena.dialogue import RecommendedItem

    utt = Utterance(role=role, text=text, items=[RecommendedItem(item_id=i, title=t) for i, t in items])
    return [m.title for m in find_mentions(utt)]


def test_list_style_replies():
    assert titles("I would recommend the following items: 1: The Conjuring (2013) 2: Insidious (2010) "
                  "3: Sinister (2012)") == ["The Conjuring (2013)", "Insidious (2010)", "Sinister (2012)"]
    assert titles("Options: 1. Crazy, Stupid, Love (2011) 2. 10 Things I Hate About You (1999). Enjoy!") == [
        "Crazy, Stupid, Love (2011)", "10 Things I Hate About You (1999)"]
    assert titles("Top picks:\n1) Alien\n2) Aliens\n") == ["Alien", "Aliens"]
    assert titles("I have 2. no list here") == []


def test_year_mentions():
    assert titles("Have you seen Blade Runner 2049 (2017)?") == ["Blade Runner 2049 (2017)"]
    assert titles("Try Heat (1995) or Ronin (1998) <Ronin (1998)> ...The Princess Diaries (2001) is fun") == [
        "Heat (1995)", "Ronin (1998)", "The Princess Diaries (2001)"]
    assert titles("how about the Lord of the Rings: The Two Towers (2002)?") == [
        "Lord of the Rings: The Two Towers (2002)"]


def test_items_come_first_and_mask():
    utt = Utterance(role=Role.AGENT, text="You will like Heat (1995).", items=[])
    ms = find_mentions(utt)
    assert mask_titles(utt.text, ms) == "You will like MOVIE."
    assert titles("Here you go", items=[("1", "Heat (1995)")]) == ["Heat (1995)"]


def test_shipped_artifact_fits_the_code():
    from evaluators.acts.network import LABELS

    model = ActModel.load(DEFAULT_ARTIFACT)
    assert model.meta["data"]["max_dialogues"] == 0  # trained on all the data, not a test subset
    assert "AGENT:REC" in LABELS and "USER:ACC" in LABELS and model.threshold.shape == (len(LABELS),)
    assert all(0 < t < 1 for t in model.threshold)
    assert model.meta["weights_sha256"] and model.meta["base_digest"]


def test_artifact_mismatch_is_explained(tmp_path):
    from evaluators.acts.offline import ArtifactError

    with pytest.raises(ArtifactError, match="train_act_classifier"):
        ActModel.load(tmp_path / "missing.safetensors")
    meta = json.loads(DEFAULT_ARTIFACT.with_suffix(".json").read_text())
    (tmp_path / "a.safetensors").write_bytes(DEFAULT_ARTIFACT.read_bytes())
    (tmp_path / "a.json").write_text(json.dumps({**meta, "input_layout": "pairs-v0"}))
    with pytest.raises(ArtifactError, match="input layout"):
        ActModel.load(tmp_path / "a.safetensors")
    (tmp_path / "a.json").write_text(json.dumps({**meta, "base_digest": "0" * 16}))
    with pytest.raises(ArtifactError, match="other base weights"):
        ActModel.load(tmp_path / "a.safetensors")


def test_iard_split_is_fixed():
    train, held = iard_split(load_iard())
    assert (len(train), len(held)) == (199, 60)
    assert sum(len(d.utterances) for d in held) == 782
    assert all(is_held_out(d.dialogue_id) for d in held) and not any(is_held_out(d.dialogue_id) for d in train)


def test_arena_style_sets_are_well_formed():
    from evaluators.acts.schema import AGENT_INTENTS, USER_INTENTS

    texts = {}
    for path, minimum in ((ARENA_TEST10, 90), (ARENA_TEST9, 90), (ARENA_TEST8, 95), (ARENA_TEST7, 100), (ARENA_TEST6, 100), (ARENA_TEST5, 100), (ARENA_TEST4, 120), (ARENA_TEST3, 140), (ARENA_TEST, 120), (ARENA_EVAL2, 120), (ARENA_EVAL, 60), (ARENA_DEV, 40), (ARENA_DEV3, 30)):
        rows = load_arena_style(path)
        assert len(rows) >= minimum
        assert len({r.id for r in rows}) == len(rows)
        for row in rows:
            allowed = USER_INTENTS if row.role == Role.USER else AGENT_INTENTS
            assert row.intents and row.intents <= set(allowed), row.id
        texts[path] = {(r.dialogue.utterances[-2].text if len(r.dialogue.utterances) > 1 else "",
                        r.dialogue.utterances[-1].text) for r in rows}
    # The test set shares no (context, utterance) pair with the sets the cues were tuned on.
    assert not texts[ARENA_TEST] & (texts[ARENA_EVAL2] | texts[ARENA_EVAL] | texts[ARENA_DEV] | texts[ARENA_DEV3])
    assert not texts[ARENA_EVAL] & texts[ARENA_DEV]
    earlier = texts[ARENA_TEST] | texts[ARENA_EVAL2] | texts[ARENA_EVAL] | texts[ARENA_DEV] | texts[ARENA_DEV3]
    later = [texts[ARENA_TEST3], texts[ARENA_TEST4], texts[ARENA_TEST5], texts[ARENA_TEST6], texts[ARENA_TEST7],
             texts[ARENA_TEST8], texts[ARENA_TEST9],
             texts[ARENA_TEST10]]
    for k, fresh in enumerate(later):
        assert not fresh & earlier.union(*later[:k])


def test_second_annotation_covers_every_iard_user_utterance():
    train, held = iard_split(load_iard())
    for dialogues, path in ((held, SECOND_ANNOTATION), (train, TRAIN_SECOND_ANNOTATION)):
        labels = load_second_annotation(path)
        keys = {utterance_key(d.dialogue_id, i) for d in dialogues for i, u in enumerate(d.utterances)
                if u.role == Role.USER}
        assert set(labels) == keys, path
    labels = load_second_annotation()
    relabelled = with_second_annotation(held[:5], labels)
    for d in relabelled:
        for i, u in enumerate(d.utterances):
            if u.role == Role.USER:
                acc, rej = labels[utterance_key(d.dialogue_id, i)]
                names = {a.intent for a in u.dialogue_acts}
                assert ("ACC" in names, "REJ" in names) == (acc, rej)
    fresh = iard_split(load_iard())[1][0]
    assert [u.dialogue_acts for u in held[0].utterances] == [u.dialogue_acts for u in fresh.utterances]


def test_second_annotation_file_errors_are_explained(tmp_path):
    bad = tmp_path / "labels.jsonl"
    bad.write_text('{"id": "1:1", "acc": true, "rej": false}\n{"id": "1:3", "acc": "yes", "rej": false}\n')
    with pytest.raises(ValueError, match="labels.jsonl:2"):
        load_second_annotation(bad)


def test_parse_llm_answers():
    assert parse_answer('{"intents": ["REC-S", "EXP-I"], "titles": ["Heat"]}', Role.AGENT) == (
        ["REC-S", "EXP-I"], ["Heat"])
    assert parse_answer('Sure! ```json\n{"intents": ["acc", "OTH", "XYZ"]}\n```', Role.USER) == (["ACC", "OTH"], [])
    assert parse_answer("Intents: REJ, CRI-F", Role.USER) == (["REJ", "CRI-F"], [])
    assert parse_answer('{"intents": ["ANS"]}', Role.AGENT) == (["R-ANS"], [])  # system answers are R-ANS
    with pytest.raises(AnnotationError):
        parse_answer('{"intents": ["REC-S"]}', Role.USER)
    with pytest.raises(AnnotationError):
        parse_answer("no idea", Role.USER)


def test_prompt_is_versioned_and_messages_carry_context():
    version, prompt = load_prompt()
    assert version == "2" and "REC-S" in prompt and "SEE, not ACC" in prompt
    d = make_dialogue([("U", "hi", None), ("A", "Have you seen Heat (1995)?", None), ("U", "nah", None)])
    msgs = build_messages(prompt, d, 2, context_size=1)
    assert msgs[0]["content"] == prompt
    assert msgs[1]["content"].startswith("Conversation:\nSYSTEM: Have you seen Heat (1995)?\nUSER (to label): nah")
    assert "SYSTEM: hi" not in msgs[1]["content"]


def test_make_acts_puts_titles_on_item_intents():
    acts = make_acts(["REC-S", "EXP-I"], [["TITLE", "Heat (1995)", 4, 15]])
    assert acts[0].slot_values == [["TITLE", "Heat (1995)", 4, 15]] and acts[1].slot_values == [["TITLE", "Heat (1995)", 4, 15]]
    assert make_acts(["OTH"], [["TITLE", "X"]])[0].slot_values == [["TITLE", "X"]]
    assert normalise_intent("cla") == "CLQ"
