import random

import pytest
from sim_fakes import AttributeCRS, ScriptedCRS, fake_llm, rec, simulator_responder

from arena.dialogue import Dialogue
from arena.conversation.runner import DialogueRunner
from simulators import build_simulator
from arena.runtime.config import Settings
from simulators.movielens import FILES, MovieLensUnavailable, fetch_movielens, load_movielens, movielens_dir
from simulators.pepper import PepperSimulator, _parse_opinions
from simulators.preferences import LIKED_RATING, build_profile
from arena.titles.names import mentions_title


@pytest.fixture(scope="module")
def movielens_cache():
    """The developer's cache folder, so the wheel is downloaded once per machine, not per run."""
    return Settings.from_env().cache_dir


@pytest.fixture(scope="module")
def movielens(movielens_cache):
    return load_movielens(movielens_cache)


def test_movielens_100k_is_read_from_recboles_wheel(movielens, movielens_cache):
    assert all((movielens_dir(movielens_cache) / name).is_file() for name in FILES)
    assert len(movielens.movies) == 1682 and len(movielens.ratings) == 943
    assert sum(len(r) for r in movielens.ratings.values()) == 100_000
    assert movielens.movies["1"].title == "Toy Story" and movielens.movies["1"].year == 1995


def test_profiles_hold_out_liked_catalog_movies_as_targets(view, movielens):
    for seed in range(5):
        profile = build_profile(view, random.Random(seed), movielens=movielens)
        ratings = {movielens.movies[r.movie_id].title: r.rating for r in movielens.ratings[profile.user_id]}
        assert len(ratings) >= 10 and profile.targets
        seen_ids = {m.item_id for m in profile.seen if m.item_id}
        for target in profile.targets:
            facts = view.get(target["item_id"])
            assert facts is not None and target["item_id"] not in seen_ids
            rating = next(r for t, r in ratings.items() if view.find(t, facts.year) == facts)
            assert rating >= LIKED_RATING
        narrative = profile.narrative()
        assert narrative and not any(mentions_title(narrative, t["title"]) for t in profile.targets)


def test_reflects_seen_items_from_history_and_unseen_from_preferences(view, movielens):
    profile = build_profile(view, random.Random(1), movielens=movielens)
    seen = next(m for m in profile.seen if m.item_id and m.rating >= LIKED_RATING)
    unseen = next(f for f in view.all() if profile.seen_movie(f, f.title) is None)
    llm = fake_llm(simulator_responder())
    sim = PepperSimulator(view, seed=1, llm=llm, profile=profile)
    crs = ScriptedCRS([("Here you go.", [rec(view.get(seen.item_id)), rec(unseen)])])
    d = DialogueRunner(crs, max_turns=2).run_simulated(Dialogue(crs_id="s"), sim)
    sim.finalize(d)
    items = d.metadata["reflections"][0]["items"]
    assert items[0]["seen"] and items[0]["opinion"] == "like" and items[0]["source"] == "history"
    assert not items[1]["seen"] and items[1]["source"] == "llm" and items[1]["opinion"] == "like"
    respond_prompt = llm.provider.requests[-1].messages[-1][1]
    assert "(seen it)" in respond_prompt and unseen.display_title in respond_prompt
    assert d.feedback.sentiment == "satisfied"  # found an unseen movie it likes
    # the fake LLM's reply names none of the shown movies, so the reflected opinions are sent instead
    assert "sounds good to me" in d.user_turns()[1].text and sim.fallbacks >= 1


def test_unreadable_reflections_fall_back_to_genre_affinity(view, movielens):
    profile = build_profile(view, random.Random(2), movielens=movielens)
    liked = profile.liked_genres[0].lower()
    match = next(f for f in view.all() if liked in [g.lower() for g in f.genres]
                 and profile.seen_movie(f, f.title) is None and profile.genre_affinity(f.genres) > 0)
    sim = PepperSimulator(view, seed=2, llm=fake_llm(simulator_responder(opinions="junk")), profile=profile)
    d = DialogueRunner(ScriptedCRS([("Try it.", [rec(match)])]), max_turns=2).run_simulated(Dialogue(crs_id="s"), sim)
    entry = d.metadata["reflections"][0]["items"][0]
    assert entry["source"] == "genres" and entry["opinion"] == "like"


def test_records_preference_coverage_per_turn(view, movielens):
    profile = build_profile(view, random.Random(4), movielens=movielens)
    target = view.get(profile.targets[0]["item_id"])
    filler = next(f for f in view.all() if f.item_id not in {t["item_id"] for t in profile.targets})
    crs = ScriptedCRS([("Hi!", []), ("This?", [rec(filler)]), ("Or this?", [rec(target)]), ("Again?", [rec(target)])])
    sim = build_simulator("pepper", catalog=view, seed=4, llm=fake_llm(simulator_responder()), profile=profile)
    d = DialogueRunner(crs, max_turns=4).run_simulated(Dialogue(crs_id="s"), sim)
    sim.finalize(d)
    pc = d.metadata["preference_coverage"]
    share = 1 / len(profile.targets)
    assert [round(r["pc"], 6) for r in pc] == [0.0, 0.0, round(share, 6), round(share, 6)]
    assert [round(r["increase"], 6) for r in pc] == [0.0, 0.0, round(share, 6), 0.0]
    assert d.user.details["profile"]["targets"] == d.metadata["target_items"] == profile.targets
    assert d.metadata["targets"] == [t["item_id"] for t in profile.targets]


def test_parse_opinions_matches_titles_loosely():
    raw = 'Sure! {"opinions": [{"title": "heat", "opinion": "LIKE", "reason": "tense"}, {"title": "X", "opinion": "meh"}]}'
    assert _parse_opinions(raw, ["Heat (1995)", "X"]) == {"heat (1995)": {"opinion": "like", "reason": "tense"}}
    assert _parse_opinions("no json here", ["Heat"]) == {}


def test_runs_against_a_simple_recommender(view, movielens_cache):
    sim = build_simulator("pepper", catalog=view, seed=9, llm=fake_llm(simulator_responder()),
                          movielens_cache_dir=movielens_cache)
    d = DialogueRunner(AttributeCRS(view), max_turns=4).run_simulated(Dialogue(crs_id="a"), sim)
    sim.finalize(d)
    assert d.end_reason == "max_turns" and d.num_turns == 4 and d.feedback is not None
    assert len(d.metadata["preference_coverage"]) == 4


def test_without_movielens_the_simulator_says_what_it_needs(view):
    with pytest.raises(ValueError, match="MovieLens"):
        build_simulator("pepper", catalog=view, seed=1, llm=fake_llm(simulator_responder()))


def test_a_failed_download_is_one_clear_line_and_leaves_nothing(tmp_path, monkeypatch):
    from arena.runtime import wheel_files
    monkeypatch.setattr(wheel_files.sys, "executable", str(tmp_path / "no-python"))
    with pytest.raises(MovieLensUnavailable) as caught:
        fetch_movielens(tmp_path / "cache")
    assert "\n" not in str(caught.value) and "recbole==1.2.1" in str(caught.value)
    assert not (tmp_path / "cache").exists()
