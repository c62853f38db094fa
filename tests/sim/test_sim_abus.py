import random

import pytest

from sim_fakes import AttributeCRS, ScriptedCRS, fake_llm, question_nlu, rec, simulator_responder

from arena.dialogue import Dialogue, DialogueAct
from arena.conversation.runner import DialogueRunner
from evaluators.acts.intent_readers import intent_reader
from simulators import build_simulator
from simulators.abus import AgendaBasedSimulator
from simulators.goals import Goal
from simulators.interaction_model import AFTER_FITTING, AFTER_NON_FITTING, InteractionModel, count_transitions


def test_interaction_model_is_derived_from_iard():
    model = InteractionModel.from_iard()
    # IARD: after a shown recommendation, seekers say "seen" or "accept" far more often than "critique-compare".
    assert model.weight(["REC-S"], "SEE") > 100 and model.weight(["REC-S"], "ACC") > 100
    assert model.weight(["REC-S"], "ACC") > 10 * model.weight(["REC-S"], "CRI-C")
    probs = model.probabilities(["REC-S"], AFTER_NON_FITTING)
    assert set(probs) == set(AFTER_NON_FITTING) and abs(sum(probs.values()) - 1) < 1e-9
    rng = random.Random(0)
    picks = [model.react_to_recommendation(["REC-S"], True, rng) for _ in range(200)]
    assert set(picks) <= set(AFTER_FITTING) and picks.count("ACC") > 40
    assert all(model.react_to_recommendation(["REC-E"], False, rng) != "ACC" for _ in range(200))


def test_count_transitions_pairs_each_user_turn_with_the_preceding_system_acts():
    data = [{"conversation": [
        {"participant": "USER", "dialogue_acts": [{"intent": "IQU"}]},
        {"participant": "AGENT", "dialogue_acts": [{"intent": "REQ"}]},
        {"participant": "USER", "dialogue_acts": [{"intent": "ANS"}, {"intent": "PRO"}]},
        {"participant": "AGENT", "dialogue_acts": [{"intent": "REC-S"}]},
        {"participant": "USER", "dialogue_acts": [{"intent": "ACC"}]},
    ]}]
    counts = count_transitions(data)
    assert counts["START"] == {"IQU": 1}
    assert counts["REQ"] == {"ANS": 1, "PRO": 1}
    assert counts["REC-S"] == {"ACC": 1}


def test_runs_without_any_llm_and_follows_its_agenda(view):
    goal = Goal(constraints={"genre": "horror", "year": "2011"}, requests=["plot", "director"])
    fitting = next(f for f in view.all() if goal.satisfied_by(f))
    crs = ScriptedCRS([("Any year in mind?", []), ("Here is one.", [rec(fitting)]),
                       ("It is about ghosts.", []), ("Someone.", [])])
    sim = AgendaBasedSimulator(view, seed=0, nlu=question_nlu, goal=goal,
                               model=InteractionModel(transitions={"REC-S": {"ACC": 1000, "SEE": 0}}))
    d = DialogueRunner(crs, max_turns=10).run_simulated(Dialogue(crs_id="s"), sim)
    sim.finalize(d)
    assert d.user.details["model"] == "template" and d.user.simulator == "abus"
    texts = [u.text for u in d.user_turns()]
    assert "horror" in texts[0]  # initial query with the first constraint
    assert "2011" in texts[1]  # answers the question with the next constraint
    assert fitting.display_title in texts[2]  # accepts and asks the first request
    assert "about" in texts[2] or "plot" in texts[2]
    assert [t["user"] for t in d.metadata["user_acts"]] == [["IQU", "PRO"], ["ANS"], ["ACC", "INQ"], ["INQ"]]
    assert "direct" in texts[3]
    assert d.end_reason == "simulator_stop: goal reached" and d.feedback.sentiment == "satisfied"


def test_turns_down_non_fitting_items_and_gives_up_when_patience_runs_out(view):
    goal = Goal(constraints={"genre": "western"}, requests=["plot"])
    wrong = [f for f in view.all() if f.genres and "western" not in f.genres][:10]
    crs = ScriptedCRS([("Try these.", [rec(f)]) for f in wrong])
    sim = AgendaBasedSimulator(view, seed=1, nlu=question_nlu, goal=goal, patience=3,
                               model=InteractionModel(transitions={"REC-S": {"REJ": 1000}}))
    d = DialogueRunner(crs, max_turns=10).run_simulated(Dialogue(crs_id="s"), sim)
    assert d.end_reason == "simulator_stop: gave up: patience exhausted"
    assert d.feedback.sentiment == "frustrated"
    assert all("western" in u.text for u in d.user_turns()[1:])  # each rejection restates the unmet wish


def test_uses_system_acts_attached_to_the_reply(view):
    goal = Goal(constraints={"actor": "Tom Hanks", "genre": "drama"}, requests=["rating"])
    seen = []

    def nlu(dialogue):
        seen.append(dialogue.utterances[-1].text)
        return ["OTH"]

    sim = AgendaBasedSimulator(view, seed=1, nlu=nlu, goal=goal)
    d = Dialogue(crs_id="s")
    d.add_user("hi")
    d.add_agent("Who is your favourite actor?",
                dialogue_acts=[DialogueAct(intent="REQ", slot_values=[["ACTOR", ""]])])
    sim.agenda.pop()  # the greeting was already said
    turn = sim.next_turn(d)
    assert "Tom Hanks" in turn.text and not seen  # answered the asked slot, no NLU call needed


def test_llm_nlg_paraphrases_the_template_draft(view):
    llm = fake_llm(simulator_responder())
    sim = build_simulator("abus", catalog=view, seed=3, llm=llm, nlu=question_nlu)
    d = DialogueRunner(AttributeCRS(view), max_turns=4).run_simulated(Dialogue(crs_id="a"), sim)
    assert d.user.details["model"] == "fake:fake"
    assert all(u.text.startswith("Sure thing!") for u in d.user_turns())
    assert len(llm.provider.requests) == d.num_turns


def test_template_option_ignores_the_llm(view):
    llm = fake_llm(simulator_responder())
    sim = build_simulator("abus", catalog=view, seed=3, llm=llm, nlu=question_nlu, nlg="template")
    d = DialogueRunner(AttributeCRS(view), max_turns=4).run_simulated(Dialogue(crs_id="a"), sim)
    assert d.num_turns >= 2 and not llm.provider.requests


def test_with_an_llm_both_nlu_and_nlg_go_through_it(view):
    llm = fake_llm(simulator_responder())
    goal = Goal(constraints={"genre": "comedy", "year": "1999"}, requests=["plot"])
    sim = build_simulator("abus", catalog=view, seed=3, llm=llm, goal=goal, intent_readers=intent_reader)
    crs = ScriptedCRS([("Which year do you prefer?", []), ("Okay.", [])])
    d = DialogueRunner(crs, max_turns=3).run_simulated(Dialogue(crs_id="s"), sim)
    sim.finalize(d)
    profile = d.user.details["profile"]
    assert profile["nlu"] == "LLM act annotator (fake:fake)" and profile["nlg"] == "llm"
    systems = [r.messages[-1][1] for r in llm.provider.requests if "Allowed intents:" in r.messages[-1][1]]
    assert len(systems) == 2 and "Which year do you prefer?" in systems[0]
    assert d.metadata["user_acts"][1] == {"system": ["REQ"], "user": ["ANS"]}
    assert "1999" in d.user_turns()[1].text


@pytest.mark.slow
def test_offline_annotator_reads_the_system_acts(view):
    from evaluators.acts.offline import DEFAULT_ARTIFACT

    if not DEFAULT_ARTIFACT.exists():
        pytest.skip(f"the act classifier is not built yet ({DEFAULT_ARTIFACT})")
    goal = Goal(constraints={"genre": "comedy", "year": "1999"}, requests=["plot"])
    fitting = next(f for f in view.all() if goal.satisfied_by(f))
    crs = ScriptedCRS([("What kind of movies do you like?", []),
                       (f"You should watch {fitting.display_title}, it is hilarious.", [rec(fitting)]),
                       ("It is about a wedding.", [])])
    sim = build_simulator("abus", catalog=view, seed=0, nlg="template", intent_readers=intent_reader,
                          model=InteractionModel(transitions={"REC-S": {"ACC": 1000}}), goal=goal)
    d = DialogueRunner(crs, max_turns=5).run_simulated(Dialogue(crs_id="s"), sim)
    sim.finalize(d)
    assert d.user.details["profile"]["nlu"] == "offline act annotator"
    system_acts = [t["system"] for t in d.metadata["user_acts"]]
    assert "REQ" in system_acts[1] or "CLQ" in system_acts[1]
    assert "REC-S" in system_acts[2] or "REC-E" in system_acts[2]
    assert d.feedback.sentiment == "satisfied"


def test_an_unusable_llm_act_answer_falls_back_instead_of_failing_the_dialogue(view):
    from evaluators.acts.intent_readers import LLMIntentReader

    def junk(request):
        if "Allowed intents:" in request.messages[-1][1]:
            return "I think this is a nice movie."  # no intent at all: AnnotationError before
        return simulator_responder()(request)

    llm = fake_llm(junk)
    reader = LLMIntentReader(llm, fallback=question_nlu)
    sim = build_simulator("abus", catalog=view, seed=3, llm=llm, nlu=reader)
    d = DialogueRunner(AttributeCRS(view), max_turns=3).run_simulated(Dialogue(crs_id="a"), sim)
    sim.finalize(d)
    assert d.end_reason != "simulator_error" and reader.fallbacks >= 1
