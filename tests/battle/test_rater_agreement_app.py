"""The Leaderboard's rater agreement panel, over HTTP as a visitor sees it."""

import time

from gradio_client import Client

from arena.dialogue import Dialogue, Feedback, Rating, UserInfo, UserKind


def rated_twice(services, first, second):
    d = Dialogue(crs_id="alpha", user=UserInfo(kind=UserKind.HUMAN, id="session-p1"))
    d.add_user("a comedy")
    d.add_agent("Airplane!")
    d.feedback = Feedback(sentiment="satisfied")
    for rater, value in (("session-p1", first), ("session-p2", second)):
        d.ratings.append(Rating(values={"overall_impression": value}, rater_id=rater, form_version="aspects_v1"))
    d.end("feedback")
    services.store.save_dialogue(d)


def agreement_rows(client, units=1):
    """The panel's rows once the tables beside the board (made after it, off the request) count `units`."""
    deadline = time.monotonic() + 60
    while True:
        table = client.predict("human", api_name="/leaderboard")[6]  # after summary, board, plot, meta, corr.
        rows = {row[0]: dict(zip(table["headers"], row, strict=True)) for row in table["data"]}
        if rows.get("overall_impression", {}).get("Units") == units or time.monotonic() > deadline:
            return rows
        time.sleep(0.5)


def test_the_meta_view_shows_alpha_with_its_units_and_raters(services, served):
    rated_twice(services, 1, 1)
    client = Client(served(services), verbose=False)
    rows = agreement_rows(client)
    # one dialogue rated by two people: no alpha yet, and the form's other aspects are listed too
    assert rows["overall_impression"]["Krippendorff's alpha [95% CI]"] == "not enough overlap"
    assert (rows["overall_impression"]["Units"], rows["overall_impression"]["Raters"]) == (1, 2)
    assert rows["understanding"]["Units"] == 0
    for pair in [(1, 2), (3, 3)]:
        rated_twice(services, *pair)
    rows = agreement_rows(client, units=3)
    overall = rows["overall_impression"]
    # (1, 1), (1, 2), (3, 3) as ordinal data: alpha = 7/9 (worked out in tests/human_ratings)
    assert overall["Krippendorff's alpha [95% CI]"].startswith("0.78 [") and overall["Scale"] == "ordinal"
    assert (overall["Units"], overall["Raters"]) == (3, 2)
