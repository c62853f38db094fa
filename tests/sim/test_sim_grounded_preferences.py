"""Simulated users state preferences from their own profile: every genre, title, year or decade
a user names when it says what it wants is in its goal or profile, whatever the model invents."""

from __future__ import annotations

import itertools

import pytest
from sim_fakes import AttributeCRS, fake_llm, question_nlu, rec, simulator_responder

from arena.runtime.config import Settings
from arena.dialogue import Dialogue, Role
from arena.llm import LLMRequest
from arena.conversation.runner import DialogueRunner
from simulators import build_simulator
from simulators.grounding import ProfileFacts, named_facts, ungrounded
from simulators.movielens import load_movielens

# A small model's inventions: tastes nobody gave it, titles out of nowhere, a decade at random.
INVENTED = [
    "I'd love a western like The Godfather.",
    "I'm in the mood for a horror movie from the 80s.",
    "Honestly I really enjoy musicals and documentaries.",
    "I want something like Forrest Gump, maybe from 1972.",
]


def test_invented_tastes_are_ungrounded_and_profile_ones_are_not(view):
    facts = ProfileFacts.of(genres=["Comedy"], titles=["Toy Story (1995)"], years=[1995])
    for text in INVENTED:
        assert ungrounded(text, facts, view), text
    for text in ["I'd like a comedy from the 90s.", "I love Toy Story, something like it?",
                 "I'm looking for comedies released in 1995.", "What is it about?"]:
        assert ungrounded(text, facts, view) == [], text


def test_a_reaction_to_a_shown_title_is_no_preference_statement(view):
    film = next(f for f in view.all() if "Horror" in f.genres or "horror" in f.genres)
    d = Dialogue(crs_id="s")
    d.add_user("hi")
    d.add_agent("Try this.", items=[rec(film)])
    text = f"I like the sound of {film.title}, I'll watch it."
    assert ungrounded(text, ProfileFacts.of(genres=["Comedy"]), view, d) == []


def inventing_responder():
    """Messages are in turn each invention above, then a plausible reply of the simulator's kind."""
    invented = itertools.cycle(INVENTED)
    plausible = simulator_responder()
    turn = itertools.count()

    def respond(request: LLMRequest) -> str:
        system, user = request.messages[0][1], request.messages[-1][1]
        if "judge conversations" in system or "Answer in JSON" in user or "Allowed intents:" in user:
            return plausible(request)
        return next(invented) if next(turn) % 2 == 0 else plausible(request)

    return respond


def facts_from_profile(kind: str, profile: dict, view) -> ProfileFacts:
    """The profile as the dialogue stores it (not the simulator's own reading of it)."""
    if kind in ("abus", "llm_us"):
        constraints = profile["goal"]["constraints"]
        return ProfileFacts.of(genres=[constraints.get("genre", "")],
                               years=[int(constraints["year"])] if "year" in constraints else [])
    if kind == "target_biased":
        targets = [view.get(t["item_id"]) for t in profile["targets"] if t["item_id"]]
        return ProfileFacts.of(genres=[g for f in targets if f for g in f.genres],
                               years=[f.year for f in targets if f]).merged(named_facts(profile["opening"], view))
    raise ValueError(kind)


@pytest.mark.parametrize("kind", ["abus", "llm_us", "target_biased"])
def test_preferences_named_over_many_dialogues_come_from_the_profile(view, kind):
    llm = fake_llm(inventing_responder())
    checked = rejected = 0
    for seed in range(12):
        options = {"nlu": question_nlu} if kind == "abus" else {}
        sim = build_simulator(kind, catalog=view, seed=seed, llm=llm, **options)
        d = DialogueRunner(AttributeCRS(view), max_turns=6).run_simulated(Dialogue(crs_id="a"), sim)
        sim.finalize(d)
        facts = facts_from_profile(kind, d.user.details["profile"], view)
        rejected += sum(d.metadata["simulator_rejected"].values())
        for n, turn in enumerate(d.utterances):
            if turn.role == Role.USER:
                checked += 1
                before = Dialogue(crs_id="a", utterances=d.utterances[:n])
                assert ungrounded(turn.text, facts, view, before) == [], (seed, turn.text)
    assert checked >= 36
    assert rejected >= 12  # the inventions were generated, and replaced


def test_template_users_state_only_their_goal(view):
    for seed in range(20):
        sim = build_simulator("abus", catalog=view, seed=seed, nlu=question_nlu, nlg="template")
        d = DialogueRunner(AttributeCRS(view), max_turns=8).run_simulated(Dialogue(crs_id="a"), sim)
        facts = facts_from_profile("abus", sim.profile(), view)
        for n, turn in enumerate(d.utterances):
            if turn.role == Role.USER:
                before = Dialogue(crs_id="a", utterances=d.utterances[:n])
                assert ungrounded(turn.text, facts, view, before) == [], (seed, turn.text)


def test_pepper_users_name_only_their_own_tastes(view):
    movielens = load_movielens(Settings.from_env().cache_dir)
    llm = fake_llm(inventing_responder())
    for seed in range(6):
        sim = build_simulator("pepper", catalog=view, seed=seed, llm=llm, movielens=movielens)
        d = DialogueRunner(AttributeCRS(view), max_turns=5).run_simulated(Dialogue(crs_id="a"), sim)
        p = sim.preferences
        facts = ProfileFacts.of(genres=p.liked_genres + p.disliked_genres,
                                titles=p.favourites + p.disliked_titles + [m.title for m in p.seen],
                                years=[m.year for m in p.seen], decades=[p.era])
        for n, turn in enumerate(d.utterances):
            if turn.role == Role.USER:
                before = Dialogue(crs_id="a", utterances=d.utterances[:n])
                assert ungrounded(turn.text, facts, view, before) == [], (seed, turn.text)
