"""Each signal on the hand-made catalog: which films it favours, and negations."""

from __future__ import annotations

import numpy as np

from arena.reading.scope import has_request_content, negated_phrases
from crs.recommender.context import read_context
from crs.recommender.signals import (
    CatalogPriorSignal,
    CoMentionSignal,
    GraphSignal,
    LexicalSignal,
    MentionSignal,
    PopularitySignal,
)
from crs.recommender.statistics import ItemStatistics


def ctx_of(catalog, *texts):
    return read_context(catalog, list(texts), [i % 2 == 0 for i in range(len(texts))])


def best(catalog, vector, n=1):
    return [catalog.items[i].title for i in np.argsort(-vector, kind="stable")[:n]]


def rows(catalog):
    return {item.item_id: i for i, item in enumerate(catalog.items)}


def test_bm25_matches_words_not_word_pieces(films):
    catalog, _ = films
    lexical = LexicalSignal(catalog)
    last, dialogue, negated = lexical.scores(ctx_of(catalog, "Can you recommend a classic mob movie?"))
    assert best(catalog, last) == ["Goodfellas"]  # "mob" is in its plot; "Moby Dick" does not count
    assert last[catalog.items.index(catalog.get("7"))] == 0
    assert not negated.any()
    heist = lexical.scores(ctx_of(catalog, "any good heist movies with a clever twist?"))[0]
    assert best(catalog, heist) == ["Ocean's Eleven"]


def test_bm25_of_older_turns_weighs_less(films):
    catalog, _ = films
    lexical = LexicalSignal(catalog)
    ctx = ctx_of(catalog, "I want a whale story at sea", "Sure!", "or maybe a haunted house")
    last, dialogue, _ = lexical.scores(ctx)
    assert best(catalog, last) == ["The Others"]
    assert dialogue[catalog.items.index(catalog.get("6"))] > dialogue[catalog.items.index(catalog.get("7"))] > 0


def test_negated_words_score_separately(films):
    catalog, _ = films
    assert negated_phrases("I like horror but nothing too gory please") == ["gory"]
    ctx = ctx_of(catalog, "I like horror but nothing too gory please")
    _, _, negated = LexicalSignal(catalog).scores(ctx)
    assert best(catalog, negated) == ["Saw"]


def test_mentions_by_side_and_feedback(films):
    catalog, _ = films
    ctx = ctx_of(catalog, "I loved Heat but I hated Saw", "Then try Goodfellas", "I've already seen that one")
    named_user, named_system, rejected = MentionSignal(rows(catalog), len(catalog.items)).scores(ctx)
    r = rows(catalog)
    assert named_user[r["1"]] > 0 and named_user[r["5"]] == 0
    assert named_system[r["3"]] > 0
    assert rejected[r["5"]] > 0 and rejected[r["3"]] > 0  # hated, and seen after it was offered
    assert ctx.rejected_ids() == {"5", "3"}


def test_graph_neighbours_of_people_and_liked_titles(films):
    catalog, kg_path = films
    graph = GraphSignal.from_kg_file(catalog, kg_path)
    named, negated, liked = graph.scores(ctx_of(catalog, "anything with Al Pacino?"))
    assert set(best(catalog, named, 2)) == {"Heat", "The Godfather"}
    assert not negated.any() and not liked.any()
    _, negated, _ = graph.scores(ctx_of(catalog, "I want a comedy, no horror"))
    assert set(best(catalog, negated, 2)) == {"Saw", "The Others"}
    _, _, liked = graph.scores(ctx_of(catalog, "I really liked Goodfellas"))
    r = rows(catalog)
    assert liked[r["1"]] > liked[r["4"]]  # shares De Niro and crime with Heat, nothing with Toy Story


def test_comention_and_popularity_from_counts(films):
    catalog, _ = films
    stats = ItemStatistics.from_dialogues([["1", "8"], ["1", "8", "3"], ["4"], ["4"], ["4"]], ["8", "8", "3"])
    assert stats.popularity == {"1": 2, "8": 2, "3": 1, "4": 3}
    assert stats.recommended == {"8": 2, "3": 1}
    assert stats.comention[("1", "8")] == 2
    r = rows(catalog)
    liked, _ = CoMentionSignal(stats, r, len(catalog.items)).scores(ctx_of(catalog, "I liked Heat"))
    assert best(catalog, liked) == ["Ocean's Eleven"] and liked[r["4"]] == 0
    popularity, recommended = PopularitySignal(stats, r, len(catalog.items)).scores(ctx_of(catalog, "hi"))
    assert best(catalog, popularity) == ["Toy Story"] and popularity[r["5"]] == 0
    assert best(catalog, recommended) == ["Ocean's Eleven"] and recommended[r["4"]] == 0


def test_catalog_prior_favours_recent_well_linked_items(films):
    catalog, kg_path = films
    graph = GraphSignal.from_kg_file(catalog, kg_path)
    recent, degree = CatalogPriorSignal(catalog, graph).scores(ctx_of(catalog, "hi"))
    r = rows(catalog)
    assert recent[r["5"]] > recent[r["1"]] > recent[r["2"]]  # 2004 > 1995 > 1972
    assert degree[r["1"]] > degree[r["5"]]  # two stars, two genres vs one star, one genre


def test_statistics_round_trip(tmp_path):
    stats = ItemStatistics.from_dialogues([["a", "b"], ["b", "c"]])
    stats.save(tmp_path / "s.json")
    assert ItemStatistics.load(tmp_path / "s.json") == stats


def test_request_content():
    for text in ("hi", "Hello there!", "thanks", "how are you doing today?"):
        assert not has_request_content(text), text
    for text in ("a classic mob movie", "something like Titanic", "recommend something"):
        assert has_request_content(text), text


def test_bm25_leaves_out_the_words_of_titles_named(films):
    # "Story" of "Toy Story" is a word of The Others' plot: matched as a word it made a lookalike pick
    catalog, _ = films
    ctx = ctx_of(catalog, "I loved Toy Story")
    assert [m.item.title for m in ctx.items] == ["Toy Story"]  # the title still counts, as an item
    offline = LexicalSignal(catalog).scores(ctx)[0]  # the offline protocol keeps the words of titles
    assert offline[catalog.items.index(catalog.get("6"))] > 0
    ctx.titles_as_words = False  # live: what was named is left out, its words bring only lookalikes
    last, dialogue, _ = LexicalSignal(catalog).scores(ctx)
    assert not last.any() and not dialogue.any()
    ghost_ctx = ctx_of(catalog, "I loved Toy Story, now a haunted one")
    ghost_ctx.titles_as_words = False
    ghost = LexicalSignal(catalog).scores(ghost_ctx)[0]
    assert best(catalog, ghost) == ["The Others"] and ghost[catalog.items.index(catalog.get("4"))] == 0


def test_the_words_that_frame_a_ranked_request_match_no_title():
    # "Top 10 best Star Wars movies" with its title named leaves "Top 10": matched as words they brought
    # Woman on Top and 10 Things I Hate About You; "a list of" brought Schindler's List
    from arena.catalogs.catalog import load_catalog

    lexical = LexicalSignal(load_catalog("opendialkg"))
    for frame in ("Top 10 best", "a list of the greatest ever", "top five highest ranked"):
        assert not lexical.query(frame).any(), frame
    assert lexical.query("top gun").any()  # a content word beside them still counts
