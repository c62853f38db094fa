import json

from evaluators.core import CoreConfig, score_core

from core_fakes import Script, debate_requests, make_client, role_of, round_of, sample_dialogue, user_text

BASE = {"common_user": 30, "domain_expert": 50, "linguist": 70, "hci_expert": 90}


def answer(role, score, statement=None):
    statement = statement or f"{role} argues for {score}"
    return json.dumps({"evaluator": role, "statement": statement, "score": score})


def test_consensus_in_the_first_round_stops_the_debate():
    client = make_client(Script(debate=lambda role, rnd, model: answer(role, 65)))
    overall = score_core(sample_dialogue(), client, config=CoreConfig())["core.overall"]
    assert overall.value == 65.0
    assert overall.details["rounds"] == 1
    assert overall.details["stopped"] == "consensus"
    assert len(debate_requests(client)) == 4
    assert overall.details["calls"] == 12 + 4
    assert [e["role"] for e in overall.details["transcript"][0]] == [
        "common_user", "domain_expert", "linguist", "hci_expert"]


def test_no_agreement_runs_four_rounds_at_most_and_averages_the_last_scores():
    # Each role drifts by one point per round and never agrees.
    client = make_client(Script(debate=lambda role, rnd, model: answer(role, BASE[role] + rnd)))
    overall = score_core(sample_dialogue(), client, config=CoreConfig())["core.overall"]
    assert overall.details["rounds"] == 4
    assert overall.details["stopped"] == "max_rounds"
    assert len(debate_requests(client)) == 16
    assert overall.details["final_scores"] == {k: v + 4.0 for k, v in BASE.items()}
    assert overall.value == sum(v + 4 for v in BASE.values()) / 4


def test_debate_stops_in_the_round_where_all_agree():
    def debate(role, rnd, model):
        return answer(role, 55 if rnd >= 3 else BASE[role])

    client = make_client(Script(debate=debate))
    overall = score_core(sample_dialogue(), client, config=CoreConfig())["core.overall"]
    assert overall.details["rounds"] == 3
    assert overall.details["stopped"] == "consensus"
    assert overall.value == 55.0
    assert sorted(round_of(r) for r in debate_requests(client)) == [1] * 4 + [2] * 4 + [3] * 4


def test_max_rounds_is_configurable():
    client = make_client(Script(debate=lambda role, rnd, model: answer(role, BASE[role])))
    overall = score_core(sample_dialogue(), client, config=CoreConfig(max_rounds=2))["core.overall"]
    assert overall.details["rounds"] == 2
    assert overall.value == 60.0


def test_later_rounds_see_the_discussion_so_far():
    client = make_client(Script(debate=lambda role, rnd, model: answer(role, BASE[role] + rnd)))
    score_core(sample_dialogue(), client, config=CoreConfig(max_rounds=3))
    requests = debate_requests(client)
    first = [r for r in requests if round_of(r) == 1]
    third = [r for r in requests if round_of(r) == 3 and role_of(r) == "linguist"][0]
    assert all("<discussion>" not in user_text(r) for r in first)
    discussion = user_text(third).split("<discussion>")[1].split("</discussion>")[0]
    assert "Round 1:" in discussion and "Round 2:" in discussion and "Round 3:" not in discussion
    assert "Common User (score 32): common_user argues for 32" in discussion
    assert "HCI Expert (score 91)" in discussion


def test_each_role_sees_only_its_own_factor_results():
    def judge(factor, model, retry):
        return f"Reason about {factor}. <rating>{2 if factor == 'novelty' else 3}</rating>"

    client = make_client(Script(judge=judge))
    score_core(sample_dialogue(), client, config=CoreConfig())
    seen = {}
    for request in debate_requests(client):
        block = user_text(request).split("<evaluation_result>")[1].split("</evaluation_result>")[0]
        seen[role_of(request)] = block
    assert "Effectiveness: 3 / 4" in seen["common_user"]
    assert "Reason: Reason about recoverability." in seen["common_user"]
    assert "Coherence" in seen["common_user"] and "Novelty" not in seen["common_user"]
    assert "Novelty: 2 / 4" in seen["domain_expert"]
    assert {"Naturalness", "Grammatical Correctness", "Appropriateness"} <= set(
        line.split(":")[0] for line in seen["linguist"].splitlines())
    assert "Semantic Relevance" in seen["hci_expert"] and "Groundness" not in seen["hci_expert"]


def test_unreadable_debater_is_retried_and_left_out_of_the_mean():
    def debate(role, rnd, model):
        return "I refuse to use JSON." if role == "linguist" else answer(role, 40)

    client = make_client(Script(debate=debate))
    overall = score_core(sample_dialogue(), client, config=CoreConfig(max_rounds=2))["core.overall"]
    # Without the linguist's score there is no full agreement, so both rounds run.
    assert overall.details["rounds"] == 2
    linguist = [e for e in overall.details["transcript"][0] if e["role"] == "linguist"][0]
    assert linguist["score"] is None and linguist["attempts"] == 2 and "raw" in linguist
    assert len([r for r in debate_requests(client) if role_of(r) == "linguist"]) == 4
    assert overall.details["final_scores"]["linguist"] is None
    assert overall.value == 40.0


def test_a_debater_keeps_its_last_readable_score():
    def debate(role, rnd, model):
        if role == "hci_expert" and rnd == 2:
            return "no json"
        return answer(role, BASE[role])

    client = make_client(Script(debate=debate))
    overall = score_core(sample_dialogue(), client, config=CoreConfig(max_rounds=2))["core.overall"]
    assert overall.details["final_scores"]["hci_expert"] == 90.0
    assert overall.value == 60.0


def test_no_readable_debater_leaves_the_overall_unscored():
    client = make_client(Script(debate=lambda role, rnd, model: "..."))
    scores = score_core(sample_dialogue(), client, config=CoreConfig(max_rounds=1))
    assert scores["core.overall"].value is None
    assert scores["core.overall"].error
    assert scores["core.coherence"].value == 3.0
