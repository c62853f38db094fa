import random

import pytest
from sim_fakes import AttributeCRS, ScriptedCRS, fake_llm, rec, simulator_responder

from arena.dialogue import Dialogue, UserKind
from arena.llm import TransientLLMError
from arena.conversation.runner import DialogueRunner
from simulators import build_simulator
from simulators.goals import Goal, sample_goal
from simulators.llm_us import LLMUserSimulator


def fitting_and_not(view, goal):
    fitting = next(f for f in view.all() if goal.satisfied_by(f))
    other = next(f for f in view.all() if not goal.satisfied_by(f) and f.genres)
    return fitting, other


def test_goals_are_sampled_from_the_catalog_and_reproducible(view):
    a = [sample_goal(view, random.Random(s)).to_dict() for s in range(20)]
    b = [sample_goal(view, random.Random(s)).to_dict() for s in range(20)]
    assert a == b
    for seed in range(20):
        goal = sample_goal(view, random.Random(seed))
        assert 1 <= len(goal.constraints) <= 2 and set(goal.constraints) <= {"genre", "year", "actor", "director"}
        assert 1 <= len(goal.requests) and set(goal.requests) <= {"plot", "director", "rating"}
        assert goal.satisfied_by(view.get(goal.anchor))  # the goal is achievable


def test_accepts_a_fitting_recommendation_asks_its_requests_then_stops_satisfied(view):
    goal = Goal(constraints={"genre": "comedy", "year": "2011"}, requests=["plot", "rating"])
    fitting, other = fitting_and_not(view, goal)
    crs = ScriptedCRS([("What do you like?", []), ("Try this.", [rec(other)]),
                       ("Try this one.", [rec(other), rec(fitting)]), ("It is about...", [])])
    llm = fake_llm(simulator_responder())
    sim = LLMUserSimulator(view, seed=4, llm=llm, goal=goal)
    d = DialogueRunner(crs, max_turns=10).run_simulated(Dialogue(crs_id="scripted"), sim)
    assert d.user.kind == UserKind.SIMULATOR and d.user.simulator == "llm_us"
    assert d.user.details == {"profile": {"goal": goal.to_dict(), "catalog": "redial"}, "seed": 4,
                              "model": "fake:fake"}
    assert d.end_reason == "simulator_stop: goal reached"
    assert d.feedback.sentiment == "satisfied"
    assert sim.accepted.item_id == fitting.item_id and sim.asked == ["plot", "rating"]
    assert d.num_turns == 5  # opening, answer, turn down, accept + plot, rating
    prompts = [r.messages[-1][1] for r in llm.provider.requests]
    assert any("but you want" in p for p in prompts)  # the non-fitting movie was turned down
    assert any(fitting.display_title in p and "ask what it is about" in p for p in prompts)


def test_decides_before_writing_and_gives_up_when_the_llm_says_quit(view):
    llm = fake_llm(simulator_responder(quit_after=1))
    sim = build_simulator("llm_us", catalog=view, seed=2, llm=llm)
    crs = ScriptedCRS([("I like turtles.", [])])
    d = DialogueRunner(crs, max_turns=10).run_simulated(Dialogue(crs_id="scripted"), sim)
    assert d.end_reason == "simulator_stop: gave up: no progress towards the goal"
    assert d.feedback.sentiment == "frustrated"
    assert sim.decisions == ["continue", "quit"]
    kinds = ["decide" if "judge" in r.messages[0][1] else "write" for r in llm.provider.requests]
    # first turn writes; each later turn decides first, and writes only if it goes on
    assert kinds == ["write", "decide", "write", "decide"]
    assert d.num_turns == 2


def test_reaches_goals_with_a_simple_recommender(view):
    llm = fake_llm(simulator_responder())
    reached = 0
    for seed in range(6):
        sim = build_simulator("llm_us", catalog=view, seed=seed, llm=llm)
        d = DialogueRunner(AttributeCRS(view), max_turns=8).run_simulated(Dialogue(crs_id="a"), sim)
        sim.finalize(d)
        assert d.feedback is not None  # a verdict even when turns ran out
        reached += d.feedback.sentiment == "satisfied"
    assert reached >= 2


def test_an_llm_failure_is_recorded_on_the_dialogue(view):
    llm = fake_llm([TransientLLMError("HTTP 503")] * 5, max_retries=2)
    sim = build_simulator("llm_us", catalog=view, seed=1, llm=llm)
    d = DialogueRunner(ScriptedCRS([("hi", [])]), max_turns=5).run_simulated(Dialogue(crs_id="s"), sim)
    assert d.end_reason == "simulator_error"
    assert "failed after 3 attempts" in d.metadata["errors"][0]
    assert llm.stats()["retries"] == 2


def test_needs_an_llm(view):
    with pytest.raises(ValueError, match="needs an LLM"):
        build_simulator("llm_us", catalog=view, seed=1, llm=None)
