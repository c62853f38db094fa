"""Satisfaction protected like votes (issue 26): server-side session identity, limits on rated
conversations per session and address, bursts and short conversations flagged and left out of
satisfaction, flagged battles' labels left out, and a sequential test per rater."""

from __future__ import annotations

import random
import sys
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

import gradio as gr
import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "battle"))

from battle_support import FakeCatalogCRS, launch, make_services  # noqa: E402

from arena.dialogue import Dialogue, Feedback, UserInfo, UserKind, utc_now  # noqa: E402
from arena.crowd.rater_check import flagged_raters, rater_evidence  # noqa: E402
from arena.crowd.counting import LABEL_FLAG, Visibility, visibility  # noqa: E402
from webapp.leaderboard.table import compute_leaderboard  # noqa: E402
from webapp.protection.identity import SessionIdentities, server_session_id  # noqa: E402
from webapp.sessions import chat  # noqa: E402
from webapp.ui.parts.participant import session_user_id  # noqa: E402
from webapp.ui.battle_tab import rate, send, start_battle, vote  # noqa: E402


def request(session="s1", host="10.0.0.1"):
    return SimpleNamespace(session_hash=session, client=SimpleNamespace(host=host))


def chat_and_rate(services, req, sentiment="satisfied", turns=2):
    user = session_user_id(services, req)
    dialogue, _ = chat.start_conversation(services, "alpha", user)
    for i in range(turns):
        chat.send_message(services, dialogue, f"a comedy please {i}", session_key=user)
    return chat.give_feedback(services, dialogue, sentiment, "", session_key=user, request=req)[0]


def satisfaction(services):
    store = services.store
    seen = visibility(store, store.list_votes())
    table = compute_leaderboard(seen.counted_labels(seen.dialogues(store.list_dialogues())), [])
    row = table.set_index("system").loc["alpha"]
    return int(row["satisfied"]), int(row["rated"])


def test_identity_is_issued_by_the_server_not_taken_from_the_client(tmp_path):
    ids = SessionIdentities("secret-of-one-database")
    first = ids.identity("client-chosen")
    assert first and first != "client-chosen" and "client-chosen" not in first
    assert ids.identity("client-chosen") == first  # stable for the session
    assert ids.identity("other") != first
    # Every process on the same database names the session alike; another database does not.
    assert SessionIdentities("secret-of-one-database").identity("client-chosen") == first
    assert SessionIdentities("another-database").identity("client-chosen") != first
    assert server_session_id(None, ids) is None
    services = make_services(tmp_path, [FakeCatalogCRS("alpha")])
    assert session_user_id(services, request("victim")) != "session-victim"
    replica = make_services(tmp_path, [FakeCatalogCRS("alpha")])  # a second process on the same store
    assert session_user_id(replica, request("victim")) == session_user_id(services, request("victim"))


def test_chat_labels_are_limited_per_session_and_flagged_in_bursts(tmp_path):
    services = make_services(tmp_path, [FakeCatalogCRS("alpha")], max_turns=5, burst_labels=3,
                             max_rated_per_user=5, max_rated_per_ip=8, min_user_turns=2)
    honest = chat_and_rate(services, request("honest", "10.0.0.9"), "frustrated")
    assert LABEL_FLAG not in honest.metadata
    before = satisfaction(services)
    assert before == (0, 1)
    attacker = request("bot", "10.0.0.2")
    stored = [chat_and_rate(services, attacker) for _ in range(5)]
    assert [LABEL_FLAG in d.metadata for d in stored] == [False, False, False, True, True]
    with pytest.raises(gr.Error, match="limit of 5 rated conversations"):
        chat_and_rate(services, attacker)
    # a fresh session from the same address runs into the address limit
    fresh = [chat_and_rate(services, request(f"bot{i}", "10.0.0.2")) for i in range(3)]
    assert all(LABEL_FLAG in d.metadata for d in fresh)  # the address is still bursting
    with pytest.raises(gr.Error, match="from this network"):
        chat_and_rate(services, request("bot-last", "10.0.0.2"))
    # the stored flags survive; the three unflagged labels count, the flagged ones do not
    assert satisfaction(services) == (3, 4)
    flagged = [d for d in services.store.list_dialogues() if d.metadata.get(LABEL_FLAG)]
    assert len(flagged) == 5 and all(d.feedback is not None for d in flagged)  # kept for researchers


def test_a_too_short_conversation_is_flagged_and_not_counted(tmp_path):
    services = make_services(tmp_path, [FakeCatalogCRS("alpha")], max_turns=5, min_user_turns=2)
    short = chat_and_rate(services, request("s", "10.0.0.3"), turns=1)
    assert short.metadata[LABEL_FLAG].startswith("short: 1 user turns")
    assert satisfaction(services) == (0, 0)


def test_labels_of_a_flagged_battle_leave_satisfaction(tmp_path):
    services = make_services(tmp_path, [FakeCatalogCRS("alpha"), FakeCatalogCRS("beta")], min_battle_s=3600)
    session = start_battle(services, "u1", request=request("b", "10.0.0.4"))
    for side in ("A", "B"):
        send(services, session, side, "a comedy please")
        rate(services, session, side, "satisfied")
    vote(services, session, "A", "", "u1")
    assert session.flagged.startswith("fast")
    store = services.store
    seen = visibility(store, store.list_votes())
    table = compute_leaderboard(seen.counted_labels(seen.dialogues(store.list_dialogues())), [])
    assert table["rated"].sum() == 0 and table["conversations"].sum() == 2


def labelled(rater, crs, sentiment, minute):
    d = Dialogue(crs_id=crs, user=UserInfo(kind=UserKind.HUMAN, id=rater))
    d.add_user("hi")
    d.add_agent("hello")
    d.feedback = Feedback(sentiment=sentiment, timestamp=utc_now() + timedelta(minutes=minute))
    return d


def test_sequential_test_flags_a_stuffer_and_spares_honest_raters():
    rng = random.Random(4)
    rates = {"alpha": 0.4, "beta": 0.7, "gamma": 0.55}
    dialogues = []
    for r in range(60):  # honest raters: labels follow each system's rate
        for k in range(rng.randrange(2, 15)):
            crs = rng.choice(list(rates))
            dialogues.append(labelled(f"honest-{r}", crs, "satisfied" if rng.random() < rates[crs] else "frustrated",
                                      k))
    assert flagged_raters(dialogues) == set()
    stuffer = [labelled("stuffer", "alpha", "satisfied", k) for k in range(30)]
    flagged = flagged_raters(dialogues + stuffer)
    assert flagged == {"stuffer"}
    assert rater_evidence(dialogues + stuffer)["stuffer"] > 6
    # a short honest streak is not enough
    assert flagged_raters(dialogues + stuffer[:4]) == set()


def test_flagged_raters_leave_the_satisfaction_rate(tmp_path):
    rng = random.Random(1)
    dialogues = [labelled(f"p{r}", "alpha", "satisfied" if rng.random() < 0.4 else "frustrated", 0)
                 for r in range(40)]
    dialogues += [labelled("stuffer", "alpha", "satisfied", k) for k in range(30)]
    counted = Visibility().counted_labels(dialogues)
    assert sum(d.feedback is not None for d in counted) == 40
    assert all(d.feedback is not None for d in dialogues)  # the stored labels themselves are untouched


def test_stuffing_chat_labels_through_the_api_is_stopped(tmp_path):
    """The probe: 30 chats rated "satisfied" in seconds from one session. Through gradio_client against
    the running app, the session runs into its limit, the labels past the burst are flagged, and the
    public satisfaction moves by the unflagged ones only."""
    from gradio_client import Client

    services = make_services(tmp_path, [FakeCatalogCRS("alpha")], max_turns=5, burst_labels=2,
                             max_rated_per_user=4, max_rated_per_ip=100, min_user_turns=1)
    demo, url = launch(services)
    try:
        client = Client(url, verbose=False)
        outcomes = []
        for i in range(6):  # bounded
            client.predict("alpha", api_name="/chat_start")
            client.predict(f"a comedy please {i}", api_name="/chat_send")
            # a refusal is a status line on the page (never an error), returned with the outputs
            answer = client.predict("", api_name="/chat_satisfied")
            outcomes.append("refused" if "limit of 4 rated" in str(answer) else "stored")
        assert outcomes == ["stored"] * 4 + ["refused"] * 2
        rated = [d for d in services.store.list_dialogues() if d.feedback is not None]
        assert len(rated) == 4
        assert sum(bool(d.metadata.get(LABEL_FLAG)) for d in rated) == 2
        assert satisfaction(services) == (2, 2)
        assert not any(d.user.id.startswith(f"session-{client.session_hash}") for d in rated)
    finally:
        demo.close()


def test_public_leaderboard_counts_only_unflagged_labels(tmp_path):
    from webapp.ui.leaderboard_tab import LeaderboardCache

    services = make_services(tmp_path, [FakeCatalogCRS("alpha")], max_turns=5, burst_labels=1, min_user_turns=1,
                             leaderboard_min_votes=3)
    chat_and_rate(services, request("a", "10.0.0.5"), "frustrated")
    for _ in range(3):  # the second and third are a burst from one session and address
        chat_and_rate(services, request("b", "10.0.0.6"), "satisfied")
    table, _ = LeaderboardCache(services).get("human", fresh=True)
    row = table.set_index("system").loc["alpha"]
    assert (row["satisfied"], row["rated"], row["conversations"]) == (1, 2, 4)
    assert table.attrs["min_votes"] == 3


def test_researchers_see_every_flagged_label_and_why(tmp_path):
    from webapp.protection.label_limits import flagged_labels

    services = make_services(tmp_path, [FakeCatalogCRS("alpha")], max_turns=5, burst_labels=1, min_user_turns=2)
    chat_and_rate(services, request("a", "10.0.0.7"))  # fine
    short = chat_and_rate(services, request("b", "10.0.0.8"), turns=1)
    burst = chat_and_rate(services, request("b", "10.0.0.8"))
    rows = {r["dialogue_id"]: r["reason"] for r in flagged_labels(services.store)}
    assert set(rows) == {short.dialogue_id, burst.dialogue_id}
    assert rows[short.dialogue_id].startswith("short") and rows[burst.dialogue_id].startswith("burst")
