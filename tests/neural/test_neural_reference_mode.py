"""Reference mode's outputs are the original's: recommendation turn, reply steps, no reply
filter, fp32 and the original reply bounds; every dialogue records the mode it ran in."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from arena.catalogs.catalog import load_catalog
from arena.runtime.config import Settings
from arena.dialogue import Dialogue, Role
from arena.conversation.runner import DialogueRunner
from crs.neural import VARIANTS, neural_specs
from crs.neural.reference import barcor_reply, fill_placeholders, reference_context
from crs.neural.system import Turn
from crs.neural.variants import RuntimeOptions
from tests.neural import reference_inputs as oracle


@pytest.fixture(scope="module")
def reference_registry(tiny_settings, hf_cache, test_options):
    from crs.registry import CRSRegistry

    return CRSRegistry(neural_specs(tiny_settings, options=replace(test_options, mode="reference"),
                                    hf_cache_dir=hf_cache))


def test_the_mode_is_a_setting_that_overrides_precision_and_bounds():
    options = RuntimeOptions.from_settings(Settings.from_env({"ARENA_NEURAL_MODE": "reference",
                                                              "ARENA_NEURAL_QUANTIZE": "1"}))
    assert options.reference and not options.half_precision
    assert not any(options.quantizes(family) for family in ("kbrd", "barcor", "unicrs"))
    assert options.response_limit(127) == 127 and options.max_new_tokens == 64  # the originals' bound wins
    arena = RuntimeOptions.from_settings(Settings.from_env({}))
    assert arena.mode == "arena" and arena.half_precision and arena.response_limit(127) == 64
    with pytest.raises(ValueError, match="neural mode"):
        RuntimeOptions(mode="replica")


def test_reference_systems_run_fp32_with_the_original_bounds(reference_registry):
    crs = reference_registry.get("barcor_redial")
    assert all(type(m) is torch.nn.Linear for m in crs.generator.modules() if "Linear" in type(m).__name__)
    assert crs.runtime.response_limit(crs.variant.resp_max_length - 1) == 127
    assert reference_registry.get("unicrs_redial").gpt2.transformer.wte.weight.dtype == torch.float32


def test_the_context_repeats_the_last_message_and_labels_by_position():
    turns = [Turn(Role.USER, "hi"), Turn(Role.AGENT, "I would recommend the following items:  \n1: A  \n2: B  \n3: C"),
             Turn(Role.USER, "more")]
    context = reference_context(turns)
    assert [text for _, text in context] == ["hi", "I would recommend the following items:  \n1: A  \n2: B  \n3: C  \n",
                                             "more", "more"]
    assert [role for role, _ in context] == [Role.USER, Role.AGENT, Role.USER, Role.AGENT]


@pytest.mark.parametrize("name", ["kbrd_redial", "barcor_opendialkg", "unicrs_redial"])
def test_recommendation_turn_names_three_graph_items(reference_registry, name, monkeypatch):
    crs = reference_registry.get(name)
    monkeypatch.setattr(crs, "_choose", lambda inputs, state: (crs.options[-1], state))
    dialogue = Dialogue(crs_id=name)
    dialogue.add_user("I loved Super Troopers (2001)")
    reply = crs.reply(dialogue)
    with torch.inference_mode():
        ranked = crs.rank(crs.inputs(crs._turns(dialogue)[0]), 3)
    assert reply.action == "recommend" and len(reply.items) == 3
    assert reply.text == oracle.recommendation([crs.kg.id2entity[e] for e in ranked])
    assert reply.text.startswith("I would recommend the following items:  \n1: ")


@pytest.mark.parametrize("name", ["kbrd_redial", "unicrs_opendialkg"])
def test_chat_replies_pass_unfiltered(reference_registry, name, monkeypatch):
    crs = reference_registry.get(name)
    title = next(item.label for item in load_catalog(VARIANTS[name].dataset).items if len(item.label.split()) >= 4)
    monkeypatch.setattr(crs, "_choose", lambda inputs, state: (crs.options[0], state))
    dialogue = Dialogue(crs_id=name)
    dialogue.add_user("Any ideas?")
    monkeypatch.setattr(crs, "generate", lambda inputs: f" You should watch {title}. ")
    assert crs.reply(dialogue).text == f" You should watch {title}. "  # as made: no title filter, not stripped
    monkeypatch.setattr(crs, "generate", lambda inputs: "")
    assert crs.reply(dialogue).text == ""  # no fallback question either


def test_earlier_replies_are_read_as_they_were_made(reference_registry, monkeypatch):
    crs = reference_registry.get("kbrd_redial")
    monkeypatch.setattr(crs, "_choose", lambda inputs, state: (crs.options[0], state))
    monkeypatch.setattr(crs, "generate", lambda inputs: " Have you seen it ?")
    dialogue = Dialogue(crs_id="kbrd_redial")
    dialogue.add_user("Hello")
    dialogue.add_agent(crs.reply(dialogue).text.strip())  # the runner stores replies stripped
    dialogue.add_user("No")
    context = crs.context_turns(crs._turns(dialogue)[0])
    assert [t.text for t in context] == ["Hello", " Have you seen it ?", "No", "No"]


def test_barcor_and_unicrs_final_steps_are_the_originals():
    assert barcor_reply("System: Sure, try this one ") == "Sure, try this one"
    assert barcor_reply("Sure thing") == "ure thing"  # the original stripped characters, not a prefix
    assert fill_placeholders("Try <pad> or <pad>, like <movie>", ["A (2001)", "B (2002)"]) == \
        "Try A (2001) or B (2002), like <movie>"
    assert fill_placeholders("<pad> and <pad>", ["A"]) == "A and "


def test_unicrs_fills_pad_with_ranked_graph_names(reference_registry):
    crs = reference_registry.get("unicrs_redial")
    dialogue = Dialogue(crs_id="unicrs_redial")
    dialogue.add_user("Something like Super Troopers (2001)")
    with torch.inference_mode():
        inputs = crs.inputs(crs._turns(dialogue)[0])
        names = [crs.kg.id2entity[e] for e in crs.rank(inputs, 2)]
        filled = crs._fill_items(inputs, "Try <pad> or <pad> <movie>")
    assert filled == f"Try {names[0]} or {names[1]} <movie>"


def test_every_dialogue_records_the_mode(reference_registry, registry):
    for systems, mode in ((reference_registry, "reference"), (registry, "arena")):
        dialogue = Dialogue(crs_id="kbrd_redial")
        DialogueRunner(systems.get("kbrd_redial"), turn_timeout_s=120).user_turn(dialogue, "Hello")
        assert dialogue.metadata["neural_mode"] == mode
