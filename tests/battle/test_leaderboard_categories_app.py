"""The public Leaderboard's category picker and its snapshots (issue 26): a board per audience and category,
the minimum vote count applied per category, and a board published from a snapshot at intervals."""

from __future__ import annotations

import pytest

from arena.dialogue import Dialogue, Feedback, UserInfo, UserKind, Vote
from battle_support import FakeCatalogCRS, make_services
from webapp.leaderboard import categories as leaderboard_categories
from webapp.leaderboard.categories import Category, register, select
from webapp.ui.leaderboard_tab import LeaderboardCache, published_note

SYSTEMS = ("kbrd_redial", "unicrs_redial", "barcor_opendialkg")


def store_battle(store, a, b, choice, turns=1, kind=UserKind.HUMAN):
    pair = []
    for name in (a, b):
        d = Dialogue(crs_id=name, user=UserInfo(kind=kind, id="rater"))
        for i in range(turns):
            d.add_user(f"a film please {i}")
            d.add_agent("Try Up (2009).")
        d.feedback = Feedback(sentiment="satisfied")
        pair.append(d)
    vote = Vote(battle_id=f"b-{pair[0].dialogue_id}", dialogue_a=pair[0].dialogue_id,
                dialogue_b=pair[1].dialogue_id, crs_a=a, crs_b=b, choice=choice, user_id="rater", user_kind=kind)
    store.save_battle(pair[0], pair[1], vote)


def services_with(tmp_path, **settings):
    return make_services(tmp_path, [FakeCatalogCRS(n) for n in SYSTEMS], **settings)


def row(table, system):
    return table.set_index("system").loc[system]


def test_each_category_is_its_own_board_with_its_own_minimum(tmp_path):
    services = services_with(tmp_path, leaderboard_min_votes=3)
    store = services.store
    for choice in ("A", "B", "A"):  # three short redial battles
        store_battle(store, "kbrd_redial", "unicrs_redial", choice, turns=1)
    store_battle(store, "kbrd_redial", "unicrs_redial", "A", turns=5)  # one long one
    store_battle(store, "kbrd_redial", "barcor_opendialkg", "A", turns=5)  # across datasets
    cache = LeaderboardCache(services)
    everything, _ = cache.get("human")
    assert row(everything, "kbrd_redial")["battles"] == 5 and row(everything, "kbrd_redial")["bt"] == \
        row(everything, "kbrd_redial")["bt"]  # rated: not NaN
    redial, _ = cache.get("human", category="redial")
    assert set(redial["system"]) == {"kbrd_redial", "unicrs_redial"}
    assert row(redial, "unicrs_redial")["battles"] == 4 and not pd_isna(row(redial, "unicrs_redial")["bt"])
    long, _ = cache.get("human", category="long")
    # two long battles for kbrd, one each for the others: below the minimum on this board only
    assert row(long, "kbrd_redial")["battles"] == 2
    assert long["bt"].isna().all() and long["rank"].isna().all()
    assert long.attrs["below_min_votes"] == sorted(SYSTEMS)
    short, _ = cache.get("human", category="short")
    assert row(short, "kbrd_redial")["battles"] == 3 and not pd_isna(row(short, "kbrd_redial")["bt"])
    assert cache.get("simulator", category="short")[0].empty  # audiences stay apart in every category


def pd_isna(value):
    import pandas as pd

    return pd.isna(value)


def test_a_new_category_is_one_registration_and_shows_in_the_picker(tmp_path):
    key = "test_opening_words"
    try:
        register(Category(key, "Conversations opened with a greeting",
                          lambda d: d.user_turns()[0].text.startswith("hello"), "Opening"))
        assert ("Opening: Conversations opened with a greeting", key) in leaderboard_categories.choices()
        with pytest.raises(ValueError, match="already registered"):
            register(Category(key, "again", lambda d: True))
        services = services_with(tmp_path)
        store_battle(services.store, "kbrd_redial", "unicrs_redial", "A")
        table, _ = LeaderboardCache(services).get("human", category=key)
        assert table.empty  # nobody said hello
        assert select(key, [], []) == ([], [])
    finally:
        leaderboard_categories.CATEGORIES.pop(key, None)


def test_a_snapshot_board_moves_only_once_per_interval(tmp_path):
    services = services_with(tmp_path, leaderboard_snapshot_every_s=3600, leaderboard_min_votes=1)
    now = [1_800_000_000.0]
    cache = LeaderboardCache(services, clock=lambda: now[0])
    store_battle(services.store, "kbrd_redial", "unicrs_redial", "A")
    first, _, read = cache.board("human")
    assert int(first["battles"].sum()) == 2
    store_battle(services.store, "kbrd_redial", "unicrs_redial", "B")
    now[0] += 3000
    for fresh in (False, True):  # Refresh shows the snapshot too: nobody can force a recomputation
        again, _, same = cache.board("human", fresh=fresh)
        assert int(again["battles"].sum()) == 2 and same.taken_at == read.taken_at
    # another category asked for later still comes from the same snapshot
    assert int(cache.get("human", category="redial")[0]["battles"].sum()) == 2
    note = published_note(read, 3600)
    assert "snapshot of **2027-01-15 08:00 UTC**" in note and "every 1 hour" in note
    now[0] += 601
    later, _, newer = cache.board("human")
    assert int(later["battles"].sum()) == 4 and newer.taken_at == now[0]


def test_a_live_board_follows_the_store(tmp_path):
    services = services_with(tmp_path, leaderboard_min_votes=1)
    cache = LeaderboardCache(services)
    store_battle(services.store, "kbrd_redial", "unicrs_redial", "A")
    assert int(cache.get("human")[0]["battles"].sum()) == 2
    store_battle(services.store, "kbrd_redial", "unicrs_redial", "B")
    assert int(cache.get("human", fresh=True)[0]["battles"].sum()) == 4
    assert published_note(cache.board("human")[2], 0).startswith("Live board")


def test_the_picker_through_the_running_app(tmp_path, served):
    from gradio_client import Client

    services = services_with(tmp_path, leaderboard_min_votes=1, leaderboard_snapshot_every_s=600)
    store_battle(services.store, "kbrd_redial", "unicrs_redial", "A")
    store_battle(services.store, "kbrd_redial", "barcor_opendialkg", "B")
    client = Client(served(services), verbose=False)
    summary, table, *_ = client.predict("human", "redial", api_name="/leaderboard")  # layout blocks carry no value
    assert "snapshot of" in summary and "every 10 minutes" in summary and "1 battle." in summary
    shown = {r[table["headers"].index("System")] for r in table["data"]}
    assert shown == {services.registry.title("kbrd_redial"), services.registry.title("unicrs_redial")}
    summary, *_ = client.predict("human", "opendialkg", api_name="/leaderboard")
    assert "0 battles" in summary  # one OpenDialKG system alone: its battle is across datasets
    assert "2 battles" in client.predict("human", api_name="/leaderboard")[0]  # the category defaults to all



def test_a_category_or_audience_the_picker_does_not_offer_is_one_line_without_a_traceback(tmp_path, served,
                                                                                           capfd):
    from gradio_client import Client

    services = services_with(tmp_path, leaderboard_min_votes=1)
    store_battle(services.store, "kbrd_redial", "unicrs_redial", "A")
    client = Client(served(services), verbose=False)
    capfd.readouterr()
    with pytest.raises(Exception, match="no category 'no_such_slice'") as caught:
        client.predict("human", "no_such_slice", api_name="/leaderboard")
    assert "\n" not in str(caught.value).strip()
    with pytest.raises(Exception, match="no audience 'robots'"):
        client.predict("robots", "all", api_name="/leaderboard")
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err
    assert "1 battle." in client.predict("human", "all", api_name="/leaderboard")[0]  # the board still serves


def test_the_public_board_counts_only_the_open_arena(tmp_path):
    """A study's battles (flagged or not) and its scored dialogues stay out of the vote figures and the
    correlation panel: they belong to the study's own results."""
    from arena.dialogue import Score
    from arena.crowd.study import STUDY_KEY

    services = services_with(tmp_path, leaderboard_min_votes=1)
    store = services.store
    store_battle(store, "kbrd_redial", "unicrs_redial", "A")  # the open arena: one vote
    for i, fast in enumerate((False, True)):  # a study: one counted vote, one flagged as too fast
        pair = []
        for name in ("kbrd_redial", "barcor_opendialkg"):
            d = Dialogue(crs_id=name, user=UserInfo(kind=UserKind.HUMAN, id=f"pseudonym:w{i}"),
                         metadata={STUDY_KEY: "pilot", "study_version": 1})
            d.add_user("a film please")
            d.add_agent("Try Up (2009).")
            d.feedback = Feedback(sentiment="frustrated" if name == "kbrd_redial" else "satisfied")
            pair.append(d)
        vote = Vote(battle_id=f"s-{i}", dialogue_a=pair[0].dialogue_id, dialogue_b=pair[1].dialogue_id,
                    crs_a="kbrd_redial", crs_b="barcor_opendialkg", choice="B", user_id=f"pseudonym:w{i}",
                    study="pilot", study_version=1)
        store.save_battle_once(pair[0], pair[1], vote, user_key=f"u{i}", ip_key="i",
                         started_at=vote.timestamp if fast else None, burst_votes=100, burst_window_s=60,
                         min_battle_s=10)
    for n, d in enumerate(store.list_dialogues()):
        store.save_scores(d.dialogue_id, {"rdl": Score(value=0.1 * n, scorer="rdl", version="1")})
    cache = LeaderboardCache(services)
    table, _ = cache.get("human")
    assert (table.attrs["votes_counted"], table.attrs["votes_flagged"]) == (1, 0)
    assert set(table["system"]) == {"kbrd_redial", "unicrs_redial"}
    records = cache.records[("human", "all")]
    satisfaction = [r for r in records if r["metric"] == "rdl" and r["aspect"] == "satisfaction"
                    and r["level"] == "dialogue"]
    assert satisfaction and all(r["n"] == 2 for r in satisfaction)  # the two open dialogues only
