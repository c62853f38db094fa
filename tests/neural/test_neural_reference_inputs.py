"""Reference mode builds the inputs the code CRS Arena ran built: token ids and entity ids
for fixed contexts, checked against `reference_inputs`, a step-by-step oracle, on the
fabricated checkpoints' tokenizers and the real knowledge graphs."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from arena.runtime.config import ASSETS_DIR
from arena.dialogue import Dialogue
from crs.checkpoints import base_dir
from crs.neural import VARIANTS, neural_specs
from crs.neural.unicrs import gpt2_special_tokens, roberta_special_tokens
from crs.neural.variants import BART_BASE, DIALOGPT_SMALL, ROBERTA_BASE
from tests.neural import reference_inputs as oracle

IARD_DIALOGUES = ASSETS_DIR / "iard" / "formatted_IARD_annotated_partially.json"

# Messages written for these tests: greetings, titles with and without years, people,
# lower case, typos, and text that names nothing.
OWN_MESSAGES = [
    "hi", "Hello there!", "hey", "Good evening, can you help me find a film?",
    "I loved Super Troopers (2001) and anything with Tom Hanks",
    "have you seen the shining? it scared me so much",
    "Something with Brad Pitt would be great", "I like scary movies",
    "Can you recommend a comedy for tonight?", "My kids liked Frozen and Toy Story",
    "no, I've seen that one already", "What about Pulp Fiction (1994)?",
    "i want something like the matrix but newer", "Anything by Christopher Nolan?",
    "I'm into sci-fi, space operas mostly", "thanks!", "That sounds good, I'll watch it",
    "Not a fan of horror. Romance maybe?", "Leonardo DiCaprio is my favourite actor",
    "Is Inception (2010) any good?", "I want a book by Stephen King",
    "Give me something with Meryl Streep and a bit of drama",
    "Do you know Harry Potter and the Sorcerer's Stone?", "ok", "Sure, what else do you have?",
    "Star Wars, Star Trek, anything in space", "quentin tarantino films please",
    "I watched Jumanji (1995) with my family", "A western like The Good, the Bad and the Ugly",
    "Nothing too long, under two hours please", "Thanks, anything with Tom Hanks?",
    "Do you like musicals? I loved La La Land", "What's a good thriller from the 90s?",
    "Something funny with Will Ferrell", "I need a movie for date night",
    "The Godfather is a classic", "any anime movies?", "Tell me about Titanic (1997)",
    "Who directed Jaws?", "bye",
]


def redial_user_messages(limit: int) -> list[str]:
    """Seekers' turns of real ReDial dialogues, titles written out: the user turns of the IARD file the
    project ships (assets/iard/; a seeker's messages in a row are joined with "...")."""
    messages = []
    for dialogue in json.loads(IARD_DIALOGUES.read_text(encoding="utf-8")):
        for utterance in dialogue["conversation"]:
            if utterance["participant"] != "USER":
                continue
            messages.append(utterance["utterance"])
            if len(messages) >= limit:
                return messages
    return messages


@pytest.fixture(scope="module")
def reference_registry(tiny_settings, hf_cache, test_options):
    from crs.registry import CRSRegistry

    options = replace(test_options, mode="reference")
    return CRSRegistry(neural_specs(tiny_settings, options=options, hf_cache_dir=hf_cache))


def _agree(link, names, entity2id, messages):
    differ = []
    for text in messages:
        expected = [entity2id[name] for name in oracle.linked_names(text, names)]
        if link(text) != expected:
            differ.append(text)
    return differ


# The literal rule scores every name (about 0.4 s a message on ReDial's graph): the fast
# tests take a sample, the slow one 400 recorded messages.
@pytest.mark.parametrize("name, recorded", [("kbrd_redial", 25), ("unicrs_opendialkg", 50)])
def test_linker_follows_the_reference_rule(reference_registry, name, recorded):
    crs = reference_registry.get(name)
    names, entity2id = list(crs.kg.entity2id), crs.kg.entity2id
    messages = OWN_MESSAGES + redial_user_messages(recorded)
    assert len(messages) == len(OWN_MESSAGES) + recorded
    assert _agree(crs._linker, names, entity2id, messages) == []
    assert len(crs._linker("hi")) == 20  # the reference's rule links a greeting to 20 names


@pytest.mark.slow
def test_linker_follows_the_reference_rule_on_many_recorded_messages(reference_registry):
    crs = reference_registry.get("kbrd_redial")
    messages = redial_user_messages(400)
    assert _agree(crs._linker, list(crs.kg.entity2id), crs.kg.entity2id, messages) == []


# Fixed contexts: (the page's history as it kept it, the new message).
CONTEXTS = [
    ([], "hi"),
    (["I loved Super Troopers (2001) and The Shining", "What did you like about it?"],
     "Anything with Brad Pitt or Tom Hanks please"),
    (
        [
            "hi", "Hello!", "ok", "sure",  # short texts link many names: the entity windows fill up
            "Hello! I'm looking for a comedy like Super Troopers (2001)",
            oracle.recommendation(["Police Academy (1984)", "Airplane! (1980)", "Hot Fuzz (2007)"]),
            "Seen them all. Something with Tom Hanks or Meryl Streep, maybe a drama?",
            "Have you seen Forrest Gump (1994)? It is a great one.",
            "Yes, and The Shining, Jaws, Titanic (1997), Inception (2010), The Matrix and Pulp Fiction (1994)",
            "You might like something by Christopher Nolan or Quentin Tarantino then.",
            ("I like Leonardo DiCaprio, Brad Pitt, Will Ferrell, Jim Carrey and Robin Williams a lot. " * 3).strip(),
            "What genres do you like?",
        ],
        "Horror, thriller, science fiction and some animation like Toy Story or Frozen",
    ),
]


def _dialogue(name: str, history: list[str], message: str) -> Dialogue:
    """The project's dialogue of the same conversation: replies stored stripped, as the runner stores them."""
    dialogue = Dialogue(crs_id=name)
    for position, text in enumerate(history):
        if position % 2 == 0:
            dialogue.add_user(text)
        else:
            dialogue.add_agent(text.strip())
    dialogue.add_user(message)
    return dialogue


def _project_inputs(crs, history, message):
    turns, _ = crs._turns(_dialogue(crs.name, history, message))
    return crs.inputs(turns)


@pytest.mark.parametrize("history, message", CONTEXTS)
@pytest.mark.parametrize("dataset", ["redial", "opendialkg"])
def test_kbrd_and_barcor_inputs_equal_the_references(reference_registry, tiny_models, history, message, dataset):
    kbrd = reference_registry.get(f"kbrd_{dataset}")
    names, entity2id, pad_id = list(kbrd.kg.entity2id), kbrd.kg.entity2id, kbrd.kg.pad_id
    conv = oracle.conversation(history, message, names)
    tokenizer = oracle.load(base_dir(tiny_models, BART_BASE))

    expected = oracle.kbrd_inputs(conv, tokenizer, entity2id, pad_id,
                                  entity_max_length=VARIANTS[f"kbrd_{dataset}"].entity_max_length)
    got = _project_inputs(kbrd, history, message)
    assert (got.context_ids, got.padded_ids, got.entity_ids) == (
        expected["context_ids"], expected["padded_ids"], expected["entity_ids"])

    expected = oracle.barcor_inputs(conv, tokenizer)
    got = _project_inputs(reference_registry.get(f"barcor_{dataset}"), history, message)
    assert (got.context_ids, got.padded_ids) == (expected["context_ids"], expected["padded_ids"])


@pytest.mark.parametrize("history, message", CONTEXTS)
@pytest.mark.parametrize("dataset", ["redial", "opendialkg"])
def test_unicrs_inputs_equal_the_references(reference_registry, tiny_models, history, message, dataset):
    name = f"unicrs_{dataset}"
    crs, variant = reference_registry.get(name), VARIANTS[name]
    conv = oracle.conversation(history, message, list(crs.kg.entity2id))
    expected = oracle.unicrs_inputs(
        conv, oracle.load(base_dir(tiny_models, DIALOGPT_SMALL), gpt2_special_tokens(dataset)),
        oracle.load(base_dir(tiny_models, ROBERTA_BASE), roberta_special_tokens(dataset)),
        crs.kg.entity2id, crs.kg.pad_id, variant.context_max_length, variant.entity_max_length,
    )
    got = _project_inputs(crs, history, message)
    assert got.context_ids == expected["context_ids"]
    assert got.entity_ids[0].tolist() == expected["entity_ids"]
    assert got.prompt_ids == expected["prompt_ids"]
    ids, offset = crs.generation_layout(got)
    assert [crs.encoder.pad_token_id] * offset + ids == expected["generation_ids"]
    assert expected["generation_mask"] == [0] * offset + [1] * len(ids)


def test_the_contexts_exercise_truncation_and_entity_windows(reference_registry):
    history, message = CONTEXTS[2]
    conv = oracle.conversation(history, message, list(reference_registry.get("kbrd_redial").kg.entity2id))
    assert conv["context"][-1] == conv["context"][-2] == message  # the page's repeated message
    assert len(conv["entity"]) > VARIANTS["unicrs_redial"].entity_max_length
    got = _project_inputs(reference_registry.get("barcor_redial"), history, message)
    assert len(got.context_ids) == VARIANTS["barcor_redial"].context_max_length  # cut from the left
