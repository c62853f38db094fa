"""A participant's scores in plain words: no metric ids, no versions, nothing for what has no value yet."""

from arena.runtime.config import Settings
from arena.dialogue import Dialogue, Feedback, Score, UserInfo
from webapp.ui.parts.score_words import NOT_FINISHED, PENDING, plain_scores

VERSION = "acts 1/offline-acts/13+pairs-v1"


def rated(**scores: Score) -> Dialogue:
    d = Dialogue(crs_id="alpha", user=UserInfo(id="p"), feedback=Feedback(sentiment="satisfied"))
    d.scores = dict(scores)
    return d


def test_scores_read_as_sentences_without_versions():
    words = plain_scores(rated(
        srrr=Score(value=0.5, scorer="srrr", version=VERSION, details={"rounds": 2, "successful_rounds": 1}),
        rdl=Score(value=0.25, scorer="rdl", version=VERSION, details={"accepted": 1, "length": 4}),
        **{"core.overall": Score(value=71.6, scorer="core", version="core-v2", model="gpt")},
    ))
    assert "1 of 2 rounds of recommendations" in words
    assert "1 accepted recommendation in 4 messages" in words
    assert "72 out of 100" in words
    for detail in (VERSION, "core-v2", "gpt", "srrr", "rdl"):
        assert detail not in words


def test_nothing_to_show_says_so():
    assert plain_scores(None) == NOT_FINISHED
    assert plain_scores(Dialogue(crs_id="alpha", user=UserInfo(id="p"))) == NOT_FINISHED
    assert plain_scores(rated()) == PENDING
    unscored = rated(rdl=Score(value=None, scorer="rdl", version=VERSION, error="no acts"))
    assert plain_scores(unscored) == PENDING
    none_taken = plain_scores(rated(sr=Score(value=0.0, scorer="sr", version=VERSION)))
    assert "none that we could tell" in none_taken


def test_a_setting_hides_the_scores_from_participants(tmp_path):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent.parent / "battle"))
    from battle_support import FakeCatalogCRS, make_services

    from webapp.serve import build_demo

    for shown in (True, False):
        services = make_services(tmp_path / str(shown), [FakeCatalogCRS("alpha")], show_scores=shown)
        demo = build_demo(services)
        (box,) = [b for b in demo.blocks.values() if getattr(b, "elem_id", None) == "chat-scores-box"]
        assert box.visible is shown
    assert Settings.from_env({"ARENA_SHOW_SCORES": "0"}).show_scores is False
