from arena.dialogue import Dialogue, RecommendedItem
from simulators.metrics import per_turn_recall, preference_coverage
from arena.titles.names import mentions_title, title_key, readable_title, strip_mentions, title_variants


def item(i, title):
    return RecommendedItem(item_id=str(i), title=title)


def test_titles_normalise_articles_years_and_alternatives():
    assert title_key("Usual Suspects, The (1995)") == title_key("The Usual Suspects")
    assert readable_title("Usual Suspects, The (1995)") == "The Usual Suspects (1995)"
    assert "se7en" in title_variants("Seven (Se7en)")
    assert mentions_title("I loved police academy!", "Police Academy (1984)")
    assert not mentions_title("I loved the academy awards", "Police Academy (1984)")


def test_strip_mentions_drops_only_sentences_naming_a_target():
    text = "I loved Super Troopers. Something funny with cops! Maybe from the 2000s?"
    assert strip_mentions(text, ["Super Troopers (2001)"]) == "Something funny with cops! Maybe from the 2000s?"
    assert strip_mentions("Super Troopers rocks.", ["Super Troopers (2001)"]) == ""


def test_recall_per_turn_counts_each_reply_separately():
    d = Dialogue(crs_id="x")
    targets = [{"item_id": "1", "title": "Alpha (2000)"}, {"item_id": "2", "title": "Beta (2001)"}]
    d.add_user("hi")
    d.add_agent("a", items=[item(9, "Other"), item(1, "Alpha (2000)")])
    d.add_user("more")
    d.add_agent("b", items=[item(7, "Beta (2001)")])  # found by title: ids can differ between sources
    rows = per_turn_recall(d, targets)
    assert [r["turn"] for r in rows] == [1, 2]
    assert rows[0]["recall@1"] == 0.0 and rows[0]["recall@5"] == 0.5
    assert rows[1]["recall@1"] == 0.5


def test_preference_coverage_is_cumulative_with_per_turn_increase():
    d = Dialogue(crs_id="x")
    targets = [{"item_id": str(i), "title": f"T{i}"} for i in range(1, 5)]
    for shown in ([1], [1], [2, 3], [], [9]):
        d.add_user("u")
        d.add_agent("a", items=[item(i, f"T{i}") for i in shown])
    rows = preference_coverage(d, targets, k=5)
    assert [r["pc"] for r in rows] == [0.25, 0.25, 0.75, 0.75, 0.75]
    assert [r["increase"] for r in rows] == [0.25, 0.0, 0.5, 0.0, 0.0]


def test_preference_coverage_only_counts_the_top_k():
    d = Dialogue(crs_id="x")
    d.add_user("u")
    d.add_agent("a", items=[item(i, f"T{i}") for i in range(10)])
    assert preference_coverage(d, [{"item_id": "7", "title": "T7"}], k=5)[0]["pc"] == 0.0
    assert preference_coverage(d, [{"item_id": "7", "title": "T7"}], k=8)[0]["pc"] == 1.0


def test_clean_generation_keeps_only_the_users_own_short_message():
    from simulators.base import clean_generation

    raw = '"User: (I want a comedy.) I want a comedy. Any ideas?\nRecommender: Try Airplane!"'
    assert clean_generation(raw) == "I want a comedy. Any ideas?"
    assert clean_generation("One. Two. Three. Four. Five.", max_sentences=3) == "One. Two. Three."


def test_unusable_generations_are_replaced_by_the_template():
    from arena.dialogue import Dialogue
    from simulators.llm_us import LLMUserSimulator

    sim = LLMUserSimulator.__new__(LLMUserSimulator)  # only the message checks are exercised
    sim.fallbacks, sim.rejected, sim.catalog = 0, {}, None
    d = Dialogue(crs_id="x")
    d.add_user("I want a comedy.")
    assert sim.say("I want a comedy.", "fallback", d).text == "fallback"  # a repeat
    assert sim.say("Something fun!", "fallback", d, ["1999"]).text == "fallback"  # the wish is missing
    assert sim.say("Who directed it?", "fallback", d, [("direct",)]).text == "Who directed it?"
    assert sim.say("", "fallback", d).text == "fallback" and sim.fallbacks == 3
