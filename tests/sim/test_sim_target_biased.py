import random

from sim_fakes import AttributeCRS, ScriptedCRS, fake_llm, rec, simulator_responder

from arena.dialogue import Dialogue
from arena.conversation.runner import DialogueRunner
from simulators import build_simulator
from simulators.target_biased import (
    SeekerGoal,
    TargetBiasedSimulator,
    eval_file,
    load_eval_turns,
    sample_seeker_goal,
    seeker_messages,
)
from arena.titles.names import mentions_title


def test_seeker_messages_follow_the_alternation_ending_with_the_seeker():
    assert seeker_messages(["a"]) == ["a"]
    assert seeker_messages(["s1", "r1", "s2"]) == ["s1", "s2"]
    assert seeker_messages(["r0", "s1", "r1", "s2"]) == ["s1", "s2"]


def test_goals_come_from_ievalm_evaluation_turns(view):
    turns = load_eval_turns(str(eval_file("redial")))
    assert len(turns) == 3341
    for seed in range(15):
        goal = sample_seeker_goal(view, random.Random(seed))
        row = next(r for r in turns if f"{r['dialog_id']}/{r['turn_id']}" == goal.source)
        assert len(goal.targets) == len(set(row["rec"])) and goal.facts
        assert all(not mentions_title(goal.opening, t["title"]) for t in goal.targets)
        resolved = [t for t in goal.targets if t["item_id"]]
        assert all(view.get(t["item_id"]) is not None for t in resolved)


def test_never_names_a_target_and_records_recall_per_turn(view):
    goal = sample_seeker_goal(view, random.Random(7))
    target = goal.facts[0]
    llm = fake_llm(simulator_responder(leak=target.title))
    sim = TargetBiasedSimulator(view, seed=7, llm=llm, goal=goal)
    others = [f for f in view.all() if f.item_id not in {t["item_id"] for t in goal.targets}][:8]
    crs = ScriptedCRS([("What do you like?", [])] + [("Maybe this?", [rec(f)]) for f in others])
    d = DialogueRunner(crs, max_turns=5).run_simulated(Dialogue(crs_id="s"), sim)
    sim.finalize(d)
    for utt in d.user_turns():
        assert not any(mentions_title(utt.text, t["title"]) for t in goal.targets), utt.text
    texts = [u.text for u in d.user_turns()]
    assert any("police officers" in t for t in texts)  # the rest of the message survives
    # the fake LLM says the same thing every turn; repeats are replaced by descriptions of a target
    assert sum("police officers" in t for t in texts) == 1 and sim.fallbacks >= 3
    persona = llm.provider.requests[0].messages[0][1]
    assert target.plot[:30] in persona and target.display_title not in persona
    assert d.metadata["target_items"] == goal.targets
    assert d.metadata["targets"] == [t["item_id"] or t["title"] for t in goal.targets]
    assert [r["turn"] for r in d.metadata["recall"]] == list(range(1, d.num_turns + 1))
    assert all(r["recall@10"] == 0.0 for r in d.metadata["recall"])
    assert d.feedback.sentiment == "frustrated"


def test_accepts_as_soon_as_a_target_is_recommended(view):
    goal = sample_seeker_goal(view, random.Random(3))
    target = goal.facts[0]
    filler = [f for f in view.all() if f.item_id != target.item_id][:3]
    crs = ScriptedCRS([("Tell me more?", []), ("How about these?", [rec(f) for f in filler] + [rec(target)]),
                       ("Enjoy!", [])])
    sim = build_simulator("target_biased", catalog=view, seed=3, llm=fake_llm(simulator_responder()), goal=goal)
    d = DialogueRunner(crs, max_turns=10).run_simulated(Dialogue(crs_id="s"), sim)
    assert d.num_turns == 3  # opening, answer, acceptance
    assert d.end_reason == "simulator_stop: target recommended" and d.feedback.sentiment == "satisfied"
    recall = d.metadata["recall"]
    assert recall[1]["recall@1"] == 0.0
    assert recall[1]["recall@5"] == recall[1]["recall@10"] == 1 / len(goal.targets)


def test_opening_comes_from_the_dataset_dialogue(view):
    goal = SeekerGoal(source="x/1", targets=[{"item_id": None, "title": "Nothing Like It (1901)"}],
                      facts=[next(iter(view.all()))], opening="Hi! I want a film like Heat (1995).")
    llm = fake_llm(simulator_responder())
    sim = TargetBiasedSimulator(view, seed=1, llm=llm, goal=goal)
    d = DialogueRunner(AttributeCRS(view), max_turns=1).run_simulated(Dialogue(crs_id="a"), sim)
    assert d.user_turns()[0].text == goal.opening and not llm.provider.requests


def test_targets_are_recorded_in_the_form_the_scorers_read(view):
    from evaluators.scoring import score_dialogue

    goal = sample_seeker_goal(view, random.Random(3))
    target = goal.facts[0]
    filler = [f for f in view.all() if f.item_id != target.item_id][:3]
    crs = ScriptedCRS([("Tell me more?", [rec(f) for f in filler]), ("These?", [rec(target)]), ("Enjoy!", [])])
    sim = TargetBiasedSimulator(view, seed=3, llm=fake_llm(simulator_responder()), goal=goal)
    d = DialogueRunner(crs, max_turns=10).run_simulated(Dialogue(crs_id="s"), sim)
    sim.finalize(d)
    scores = score_dialogue(d, ["recall"])
    per_turn = [r["recall@10"] for r in d.metadata["recall"]]
    assert scores["recall"].error is None
    assert scores["recall"].details["per_turn"] == per_turn and per_turn[1] == 1 / len(goal.targets)
