import json

import pytest

from arena.runtime.config import Settings
from arena.dialogue import Dialogue
from arena.llm import LLMError
from evaluators.core import FACTOR_KEYS, CoreConfig, load_assets, score_core
from evaluators.core.judge import judge_messages

from core_fakes import Script, factor_of, is_retry, judge_requests, make_client, sample_dialogue


def test_returns_every_factor_and_overall_with_provenance():
    client = make_client(Script())
    scores = score_core(sample_dialogue(), client, config=CoreConfig())
    assert set(scores) == {f"core.{k}" for k in FACTOR_KEYS} | {"core.overall"}
    assert "core.grammatical_correctness" in scores
    version = load_assets().version
    for name, score in scores.items():
        assert score.scorer == "core"
        assert score.version == version
        assert score.model == client.describe()  # "fake:fake"
    coherence = scores["core.coherence"]
    assert coherence.value == 3.0
    assert coherence.details["reason"] == "The coherence looks decent."
    assert coherence.details["judges"][0]["model"] == "fake:fake"
    assert scores["core.overall"].value == 60.0
    json.dumps({k: v.model_dump(mode="json") for k, v in scores.items()})  # storable as is


def test_judge_sees_every_turn_and_the_merged_recommendation_list():
    client = make_client(Script())
    score_core(sample_dialogue(), client, config=CoreConfig())
    user = judge_requests(client)[0].messages[1][1]
    for text in ("scary movie", "Seen it. Anything older?", "Try The Shining", "Great, thanks!"):
        assert text in user
    block = user.split("<recommendation_list>")[1].split("</recommendation_list>")[0]
    assert [line for line in block.strip().splitlines()] == [
        "1. Insidious (2010)", "2. Sinister (2012)", "3. The Shining (1980)"]


def test_unreadable_answer_is_retried_once_then_unscored():
    def judge(factor, model, retry):
        return "I am not sure." if factor == "novelty" else "ok <rating>4</rating>"

    client = make_client(Script(judge=judge))
    scores = score_core(sample_dialogue(), client, config=CoreConfig(seed=7))
    novelty = scores["core.novelty"]
    assert novelty.value is None  # unscored, never 0
    assert novelty.error and "unscored" in novelty.error
    assert novelty.details["judges"][0]["attempts"] == 2
    calls = [r for r in judge_requests(client) if factor_of(r) == "novelty"]
    assert len(calls) == 2
    first, second = calls
    assert first.seed == 7 and second.seed != 7  # the retry is not the same cached request
    assert second.messages[:2] == first.messages
    assert second.messages[2] == ("assistant", "I am not sure.")
    assert "<rating>N</rating>" in second.messages[3][1]
    assert all(scores[f"core.{k}"].value == 4.0 for k in FACTOR_KEYS if k != "novelty")
    overall = scores["core.overall"].details
    assert overall["unparsed"] == 2
    # The Domain Expert is told Novelty has no score rather than being shown a zero.
    assert overall["factor_values"]["novelty"] is None


def test_readable_answer_on_the_retry_is_used():
    client = make_client(Script(judge=lambda f, m, retry: "<rating>2</rating>" if retry else "hmm"))
    # A retry for each of the twelve judges: allowed by the per-dialogue cap here (ARENA_JUDGE_RETRIES).
    scores = score_core(sample_dialogue(), client, Settings(llm_provider="fake", judge_retries=12),
                        config=CoreConfig())
    assert all(scores[f"core.{k}"].value == 2.0 for k in FACTOR_KEYS)
    assert scores["core.coherence"].details["judges"][0]["attempts"] == 2
    assert scores["core.overall"].details["calls"] == 24 + 4


def test_failed_call_is_unscored_with_its_error():
    def judge(factor, model, retry):
        if factor == "groundness":
            return LLMError("request rejected (HTTP 400)")
        return "<rating>1</rating>"

    client = make_client(Script(judge=judge))
    scores = score_core(sample_dialogue(), client, config=CoreConfig())
    assert scores["core.groundness"].value is None
    assert "HTTP 400" in scores["core.groundness"].error
    assert len([r for r in judge_requests(client) if factor_of(r) == "groundness"]) == 1
    assert scores["core.overall"].details["failures"] == 1


def test_several_judges_are_averaged_and_each_is_kept():
    ratings = {"judge-a": "<rating>4</rating>", "judge-b": "<rating>1</rating>", "judge-c": "no idea"}
    client = make_client(Script(judge=lambda f, model, retry: ratings[model]))
    config = CoreConfig(judge_models=["judge-a", "judge-b"],
                        factor_models={"Groundness": ["judge-a", "judge-c"]})
    scores = score_core(sample_dialogue(), client, config=config)
    coherence = scores["core.coherence"]
    assert coherence.value == 2.5
    assert [(j["model"], j["value"]) for j in coherence.details["judges"]] == [
        ("fake:judge-a", 4.0), ("fake:judge-b", 1.0)]
    assert coherence.model == "fake:judge-a, fake:judge-b"
    # A judge without a readable rating is left out of the mean, not counted as 0.
    groundness = scores["core.groundness"]
    assert groundness.value == 4.0
    assert groundness.details["judges"][1]["value"] is None
    assert len(judge_requests(client)) == 11 * 2 + 1 + 2


def test_models_per_factor_and_per_role():
    client = make_client(Script())
    config = CoreConfig(judge_models=["j1"], factor_models={"grammar": "j2"}, debate_model="d1",
                        role_models={"HCI Expert": "d2"})
    scores = score_core(sample_dialogue(), client, config=config)
    by_factor = {factor_of(r): r.model for r in judge_requests(client)}
    assert by_factor["grammatical_correctness"] == "j2"
    assert {m for f, m in by_factor.items() if f != "grammatical_correctness"} == {"j1"}
    roles = scores["core.overall"].details["roles"]
    assert roles["hci_expert"]["model"] == "fake:d2"
    assert {roles[k]["model"] for k in ("common_user", "domain_expert", "linguist")} == {"fake:d1"}


def test_effectiveness_uses_targets_when_the_dialogue_has_them():
    assets = load_assets()
    with_targets = sample_dialogue(
        targets=[{"item_id": "m9", "title": "The Conjuring 2 (2016)"}, "Annabelle"])
    system, user = (m["content"] for m in judge_messages(assets, "effectiveness", with_targets))
    assert "<target_items>" in user and "The Conjuring 2 (2016)" in user and "2. Annabelle" in user
    assert "Target items are given" in system
    # Other factors never see the targets.
    _, novelty_user = (m["content"] for m in judge_messages(assets, "novelty", with_targets))
    assert "target_items" not in novelty_user

    system, user = (m["content"] for m in judge_messages(assets, "effectiveness", sample_dialogue()))
    assert "target_items" not in user
    assert "preferences the user expressed" in system

    client = make_client(Script())
    scores = score_core(with_targets, client, config=CoreConfig())
    assert scores["core.effectiveness"].details["reference"] == "targets"
    scores = score_core(sample_dialogue(), client, config=CoreConfig())
    assert scores["core.effectiveness"].details["reference"] == "expressed preferences"


def test_dialogue_without_system_turns_costs_nothing():
    client = make_client(Script())
    dialogue = Dialogue(crs_id="kbrd_redial")
    dialogue.add_user("hello?")
    scores = score_core(dialogue, client, config=CoreConfig())
    assert all(s.value is None and s.error and s.model == "fake:fake" for s in scores.values())
    assert len(scores) == 13
    assert client.provider.requests == []


def test_config_from_json_yaml_and_env(tmp_path):
    data = {"judge_models": ["a", "b"], "factor_models": {"Semantic Relevance": "c"},
            "role_models": {"general user": "d"}, "max_rounds": 2}
    json_path = tmp_path / "core.json"
    json_path.write_text(json.dumps(data))
    yaml_path = tmp_path / "core.yaml"
    yaml_path.write_text("judge_models: [a, b]\nfactor_models:\n  semantic_relevance: [c]\n"
                         "role_models:\n  common_user: d\nmax_rounds: 2\n")
    expected = CoreConfig(judge_models=["a", "b"], factor_models={"semantic_relevance": ["c"]},
                          role_models={"common_user": "d"}, max_rounds=2)
    assert CoreConfig.from_file(json_path) == expected
    assert CoreConfig.from_file(yaml_path) == expected
    assert CoreConfig.from_setting(Settings.from_env({"ARENA_CORE_CONFIG": str(yaml_path)}).core_config) == expected
    assert CoreConfig.from_setting(Settings.from_env({"ARENA_CORE_CONFIG": json.dumps(data)}).core_config) == expected
    assert CoreConfig.from_setting(Settings.from_env({}).core_config) == CoreConfig()
    assert expected.judges_for("semantic_relevance", "x") == ["c"]
    assert expected.judges_for("coherence", "x") == ["a", "b"]
    assert CoreConfig().judges_for("coherence", "x") == ["x"]
    assert expected.model_for_role("common_user", "x") == "d"
    assert expected.model_for_role("linguist", "x") == "a"


def test_the_example_config_file_is_valid():
    from evaluators.core.rubric import ASSETS

    config = CoreConfig.from_file(ASSETS / "config.example.yaml")
    assert config.judges_for("groundness", "x") == ["gpt-4o"]


@pytest.mark.parametrize("bad", [{"factor_models": {"charm": ["a"]}}, {"role_models": {"critic": "a"}},
                                 {"judge_model": ["a"]}, {"max_rounds": 0}])
def test_config_rejects_unknown_names(bad):
    with pytest.raises(ValueError):
        CoreConfig.from_mapping(bad)


def test_score_core_reads_the_config_from_the_settings():
    settings = Settings.from_env({"ARENA_CORE_CONFIG": json.dumps({"judge_models": ["env-judge"]})})
    client = make_client(Script())
    score_core(sample_dialogue(), client, settings=settings)
    assert {r.model for r in client.provider.requests} == {"env-judge"}


def test_retry_requests_are_marked_as_retries():
    client = make_client(Script(judge=lambda f, m, retry: "<rating>2</rating>" if retry else "?"))
    score_core(sample_dialogue(), client, Settings(llm_provider="fake", judge_retries=12), config=CoreConfig())
    assert sum(is_retry(r) for r in judge_requests(client)) == 12
