import re

import pytest

from evaluators.core import FACTOR_KEYS, ROLES, load_assets
from evaluators.core.factors import factor_key, role_key
from evaluators.core.judge import judge_messages
from evaluators.core.rubric import ASSETS, _read_yaml, parse_assets

from core_fakes import sample_dialogue


def test_rubric_covers_the_twelve_factors_with_full_scales():
    assets = load_assets()
    assert assets.version == "rubric-1/prompts-1" and len(assets.sha) == 12
    assert list(assets.factors) == list(FACTOR_KEYS)
    for key, rubric in assets.factors.items():
        assert rubric.definition and len(rubric.steps) >= 3
        text = " ".join(rubric.standard)
        assert re.search(r"\b4\b", text) and re.search(r"\b0\b", text), key
    assert assets.factors["effectiveness"].uses_targets
    assert not any(r.uses_targets for k, r in assets.factors.items() if k != "effectiveness")


def test_every_prompt_renders_without_leftover_placeholders():
    assets = load_assets()
    for factor in FACTOR_KEYS:
        for message in judge_messages(assets, factor, sample_dialogue(targets=["Annabelle"])):
            assert "${" not in message["content"]
    for role in ROLES:
        assert role.key in assets.roles


def test_malformed_assets_are_rejected():
    rubric = _read_yaml(ASSETS / "rubric_v1.yaml")
    prompts = _read_yaml(ASSETS / "prompts_v1.yaml")
    del rubric["factors"]["novelty"]
    with pytest.raises(ValueError, match="novelty"):
        parse_assets(rubric, prompts)
    rubric = _read_yaml(ASSETS / "rubric_v1.yaml")
    del prompts["judge_repair"]
    with pytest.raises(ValueError, match="judge_repair"):
        parse_assets(rubric, prompts)
    with pytest.raises(FileNotFoundError):
        load_assets("v999")


def test_name_normalisation():
    assert factor_key("Grammatical Correctness") == "grammatical_correctness"
    assert factor_key("grammar") == "grammatical_correctness"
    assert factor_key("Groundedness") == "groundness"
    assert role_key("HCI Expert") == "hci_expert"
    assert role_key("General User") == "common_user"
    with pytest.raises(ValueError):
        factor_key("charm")
