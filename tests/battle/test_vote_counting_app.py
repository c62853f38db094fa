"""The Leaderboard tab's counting options, the line saying what a board rests on and the position-bias table,
through the running app."""

from __future__ import annotations

import pytest

from arena.dialogue import Dialogue, Feedback, UserInfo, UserKind, Vote
from battle_support import FakeCatalogCRS, make_services

SYSTEMS = ("kbrd_redial", "unicrs_redial")


def store_battle(store, user: str, choice: str) -> None:
    pair = []
    for name in SYSTEMS:
        d = Dialogue(crs_id=name, user=UserInfo(kind=UserKind.HUMAN, id=user))
        d.add_user("a film please")
        d.add_agent("Try Up (2009).")
        d.feedback = Feedback(sentiment="satisfied")
        pair.append(d)
    store.save_battle(pair[0], pair[1], Vote(
        battle_id=f"b-{pair[0].dialogue_id}", dialogue_a=pair[0].dialogue_id, dialogue_b=pair[1].dialogue_id,
        crs_a=SYSTEMS[0], crs_b=SYSTEMS[1], choice=choice, user_id=user))


def test_counting_options_and_position_bias_through_the_running_app(tmp_path, served, capfd):
    from gradio_client import Client

    services = make_services(tmp_path, [FakeCatalogCRS(n) for n in SYSTEMS], leaderboard_min_votes=1)
    for person in ("rater-1", "rater-2"):
        store_battle(services.store, person, "A")  # each first vote: the left system
        store_battle(services.store, person, "B")
        store_battle(services.store, person, "tie")
    client = Client(served(services), verbose=False)
    outputs = client.predict("human", "all", [], api_name="/leaderboard")
    rests_on, bias = outputs[-2], outputs[-1]
    assert rests_on == "This board's ratings rest on 6 votes from 2 participants."
    assert [r[:2] for r in bias["data"]] == [["Left (A) won", 2], ["Right (B) won", 2], ["Tie", 2],
                                             ["Both bad", 0]]
    first = client.predict("human", "all", ["first"], api_name="/leaderboard")
    assert first[-2] == ("This board's ratings rest on 2 votes from 2 participants; counting first vote of "
                         "each session only.")
    both = client.predict("human", "all", ["first", "drop_ties"], api_name="/leaderboard")
    assert both[-2].endswith("counting first vote of each session only and ties left out.")
    # Another category offers the options too: its board is computed when first asked for, the page saying
    # so meanwhile (and showing no board's figures), then the board itself.
    job = client.submit("human", "redial", ["first"], api_name="/leaderboard")
    steps = list(job)
    assert steps[0][0].startswith("Computing the board of Systems trained on ReDial, counting first vote of "
                                  "each session only") and steps[0][-2] == ""
    other = job.result()
    assert other[-2] == ("This board's ratings rest on 2 votes from 2 participants; counting first vote of "
                         "each session only.") and "Computing" not in other[0]
    again = client.submit("human", "redial", ["first"], api_name="/leaderboard")
    assert len(list(again)) == 1 and again.result()[-2] == other[-2]  # kept: no computing line the second time
    capfd.readouterr()
    with pytest.raises(Exception, match="no counting option"):
        client.predict("human", "all", ["everything"], api_name="/leaderboard")
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err
