"""Simulated users fill the aspect rating form at the end of a dialogue."""

from sim_fakes import ScriptedCRS, fake_llm, simulator_responder

from arena.crowd.aspects import load_form
from arena.dialogue import Dialogue, UserKind
from arena.llm import LLMError
from arena.conversation.runner import DialogueRunner
from simulators import build_simulator
from simulators.aspect_rating import load_rating_prompt, parse_answer

RATING_MARK = "just finished a chat"


def rating_llm(answer):
    base = simulator_responder()

    def respond(request):
        if RATING_MARK in request.messages[0][1]:
            if isinstance(answer, Exception):
                raise answer
            return answer
        return base(request)

    return fake_llm(respond, max_retries=0)


def simulate(view, llm, **options):
    sim = build_simulator("llm_us", catalog=view, seed=3, llm=llm, **options)
    d = DialogueRunner(ScriptedCRS([("What do you like?", [])]), max_turns=2).run_simulated(
        Dialogue(crs_id="scripted"), sim)
    return sim.finalize(d)


def test_the_simulator_rates_every_aspect_with_prompt_version_and_rater_kind(view):
    llm = rating_llm("understanding: 1\ntask_completion: 0\ninterest_arousal: 2\n**efficiency**: 0\n"
                     "overall_impression: 3")
    d = simulate(view, llm, rate_aspects=True)
    (rating,) = d.ratings
    assert rating.values == {"understanding": 1, "task_completion": 0, "interest_arousal": 2, "efficiency": 0,
                             "overall_impression": 3}
    assert rating.rater_kind == UserKind.SIMULATOR and rating.rater_id == d.user.id
    assert rating.prompt_version == "simulator_rating_v1" and rating.form_version == "aspects_v1"
    assert rating.model == "fake:fake" and rating.error is None
    prompt = next(r for r in llm.provider.requests if RATING_MARK in r.messages[0][1])
    user_prompt = prompt.messages[-1][1]
    assert "What do you like?" in user_prompt  # the transcript
    for aspect in load_form().dialogue:
        assert f"{aspect.name} ({aspect.low}-{aspect.high}): {aspect.definition}" in user_prompt


def test_unreadable_or_off_scale_aspects_stay_unrated(view):
    d = simulate(view, rating_llm("understanding: 5\ntask_completion: 1.5\nefficiency: 1\nI liked it."),
                 rate_aspects=True)
    (rating,) = d.ratings
    assert rating.values == {"efficiency": 1}
    assert "outside the scale 0-2" in rating.error and "not a whole number" in rating.error
    assert "no answer for interest_arousal, overall_impression" in rating.error


def test_a_failed_rating_call_leaves_everything_unrated_and_keeps_the_dialogue(view):
    d = simulate(view, rating_llm(LLMError("endpoint down")), rate_aspects=True)
    (rating,) = d.ratings
    assert rating.values == {} and "endpoint down" in rating.error
    assert d.feedback is not None and d.num_turns >= 1


def test_rating_is_off_unless_asked(view):
    llm = rating_llm("understanding: 1")
    d = simulate(view, llm)
    assert d.ratings == [] and not any(RATING_MARK in r.messages[0][1] for r in llm.provider.requests)


def test_parse_answer_ignores_unknown_names_and_keeps_the_first_answer():
    values, problems = parse_answer("relevance: 3\nUnderstanding: 2\nunderstanding: 0\nfoo: 1",
                                    load_form())
    assert values == {"understanding": 2}
    assert problems == ["no answer for task_completion, interest_arousal, efficiency, overall_impression"]
    assert load_rating_prompt().version == "simulator_rating_v1"
