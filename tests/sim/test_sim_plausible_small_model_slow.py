"""The plausibility checks over real generations: the local SmolLM2-135M writes for every simulator,
a few turns each against CRB-CRS offline; no turn may carry a role label or prompt text, copy a
system sentence or state a preference outside the user's profile."""

from __future__ import annotations

import pytest

from arena.runtime.config import Settings
from arena.dialogue import Dialogue
from arena.llm import LLMClient, LocalProvider
from arena.conversation.runner import DialogueRunner
from crs.registry import CRSRegistry
from crs.systems import system_specs
from evaluators.acts.intent_readers import intent_reader
from simulators import build_simulator
from simulators.plausibility import check_dialogue, verdict_consistent

pytestmark = pytest.mark.slow

TURNS = 4


@pytest.fixture(scope="module")
def small_model():
    return LLMClient(LocalProvider())


@pytest.fixture(scope="module")
def crb_crs(small_model):
    settings = Settings.from_env()
    return CRSRegistry(system_specs(settings, small_model)).get("crb_crs_redial")


@pytest.mark.parametrize("kind", ["abus", "llm_us", "target_biased", "pepper"])
def test_small_model_turns_pass_every_check(view, small_model, crb_crs, kind):
    options = {"nlu": "offline", "intent_readers": intent_reader} if kind == "abus" else {}
    turns = 0
    for seed in range(3 if kind == "llm_us" else 1):  # LLM-US writes every message itself: three dialogues
        sim = build_simulator(kind, catalog=view, seed=seed, llm=small_model, max_tokens=60,
                              movielens_cache_dir=Settings.from_env().cache_dir, **options)
        d = DialogueRunner(crb_crs, max_turns=TURNS).run_simulated(Dialogue(crs_id=crb_crs.name), sim)
        sim.finalize(d)
        assert d.end_reason != "simulator_error", d.metadata.get("errors")
        said = [u.text for u in d.user_turns()]
        for text, checks in zip(said, check_dialogue(d, sim.profile_facts(), view)):
            turns += 1
            assert all(checks.values()), (seed, text, checks)
        assert verdict_consistent(d)
        assert d.feedback is not None
    assert turns >= 2
