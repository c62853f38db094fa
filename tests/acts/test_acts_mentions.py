"""The two exact corrections to title mentions (evaluators/acts/offers.py)."""

from evaluators.acts.offers import cut_short, echoed_mentions
from arena.titles.linking import Mention


def test_echoed_titles_in_any_case():
    offers = [Mention("District 9 (2009)", 0, 17), Mention("Up", 20, 22)]
    assert [m.title for m in echoed_mentions("ok district 9 then", offers)] == ["District 9 (2009)"]
    assert [m.title for m in echoed_mentions("we'll do Up, thanks", offers)] == ["Up"]
    assert echoed_mentions("what's up with that", offers) == []  # short titles only as written
    taken = [Mention("District 9 (2009)", 3, 13, "catalog")]
    assert echoed_mentions("ok district 9 then", offers, taken) == []  # already found


def test_the_start_of_a_longer_name_is_not_a_title():
    assert cut_short("No, Ted Lasso streams on Apple TV+.", Mention("Ted (2012)", 4, 7, "catalog"))
    assert not cut_short("Ted (2012) is silly.", Mention("Ted (2012)", 0, 10, "catalog"))
    assert not cut_short("No, Ted Lasso streams on Apple TV+.", Mention("Ted (2012)", 4, 7, "year"))
