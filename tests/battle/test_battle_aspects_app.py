"""Aspect ratings through the app: the Chat/Battle handlers and the Leaderboard's correlation panel."""

import gradio as gr
import pytest
from gradio_client import Client

from arena.dialogue import Dialogue, Feedback, Rating, Score, UserInfo, UserKind
from webapp.sessions import aspect_ratings
from webapp.ui.parts.meta_view import correlation_heatmap, correlation_table


def finished(services, crs="alpha", kind=UserKind.HUMAN):
    d = Dialogue(crs_id=crs, user=UserInfo(kind=kind, id="session-abc"))
    d.add_user("a comedy")
    d.add_agent("Airplane!")
    services.store.save_dialogue(d)
    return d


def test_reply_ratings_only_on_system_messages_and_the_same_rater_replaces(services):
    d = finished(services)
    options = aspect_ratings.reply_options(aspect_ratings.form_for(services))
    assert list(options)[0] == "Relevance 0: off topic" and options["Relevance 3: exactly"] == ("relevance", 3)
    assert aspect_ratings.rate_reply(services, d, 0, "Relevance 2: mostly", "r") == ""  # the user's message
    assert aspect_ratings.rate_reply(services, d, 1, "Like", "r") == ""  # not an option of the form
    assert aspect_ratings.rate_reply(services, d, 1, "Relevance 2: mostly", "r").startswith("Saved")
    aspect_ratings.rate_reply(services, d, [1, 0], "Relevance 3: exactly", "r")
    stored = services.store.get_dialogue(d.dialogue_id)
    assert [r.values for r in stored.utterances[1].ratings] == [{"relevance": 3}]
    assert stored.utterances[0].ratings == []


def test_the_form_needs_a_verdict_first_and_an_empty_form_stores_nothing(services):
    d = finished(services)
    with pytest.raises(gr.Error, match="satisfied or frustrated first"):
        aspect_ratings.rate_dialogue(services, d, [2, None, None, None, None], "r")
    d.feedback = Feedback(sentiment="satisfied")
    assert aspect_ratings.rate_dialogue(services, d, [None] * 5, "r") == aspect_ratings.SKIPPED
    assert services.store.get_dialogue(d.dialogue_id).ratings == []
    note = aspect_ratings.rate_dialogue(services, d, [2, None, 1, None, 4], "r")
    assert note == "Thank you: 3 of 5 aspects rated and saved."
    (rating,) = services.store.get_dialogue(d.dialogue_id).ratings
    assert rating.values == {"understanding": 2, "interest_arousal": 1, "overall_impression": 4}
    with pytest.raises(gr.Error, match="outside the scale"):
        aspect_ratings.rate_dialogue(services, d, [3, None, None, None, None], "r")


def rated(services, crs, rdl, overall, kind):
    d = finished(services, crs, kind)
    d.scores["rdl"] = Score(value=rdl, scorer="rdl", version="1")
    d.ratings.append(Rating(values={"overall_impression": overall}, rater_id="x", rater_kind=kind,
                            form_version="aspects_v1"))
    d.feedback = Feedback(sentiment="satisfied" if overall > 2 else "frustrated")
    services.store.save_dialogue(d)


def test_leaderboard_shows_correlations_and_a_heat_map_never_pooling_people_and_simulators(services, served):
    for i, (rdl, overall) in enumerate([(0.1, 1), (0.2, 3), (0.3, 2), (0.4, 4)]):
        rated(services, "alpha" if i % 2 else "beta", rdl, overall, UserKind.HUMAN)
    for rdl, overall in [(0.1, 4), (0.2, 3), (0.3, 0)]:
        rated(services, "gamma", rdl, overall, UserKind.SIMULATOR)
    client = Client(served(services), verbose=False)
    outputs = client.predict("all", api_name="/leaderboard")
    corr, heat_map = outputs[4], outputs[5]  # after summary, table, plot, metric table (accordions: no value)
    assert heat_map["type"] == "matplotlib"
    rows = [dict(zip(corr["headers"], row, strict=True)) for row in corr["data"]]
    by_users = {(r["Users"], r["Judgement"]): r for r in rows if r["Metric"] == "rdl"}
    # people: ranks of overall 1 3 2 4 against 1 2 3 4 -> rho = 0.8; simulators: 4 3 0 -> rho = -1
    assert by_users[("people", "overall_impression")]["Spearman [95% CI]"].startswith("+0.80")
    assert by_users[("people", "overall_impression")]["Dialogues"] == 4
    assert by_users[("simulators", "overall_impression")]["Spearman [95% CI]"].startswith("-1.00")
    assert by_users[("simulators", "overall_impression")]["Dialogues"] == 3
    human_only = client.predict("human", api_name="/leaderboard")[4]
    assert {row[0] for row in human_only["data"]} == {"people"}


def test_heat_map_panels_and_empty_state():
    records = [
        {"metric": "rdl", "aspect": "satisfaction", "level": "dialogue", "users": u, "group": None,
         "spearman": s, "pearson": s, "ci_low": None, "ci_high": None, "spearman_ci_low": None,
         "spearman_ci_high": None, "pearson_ci_low": None, "pearson_ci_high": None, "kendall_tau": None, "n": 5}
        for u, s in (("human", 0.5), ("simulator", None))
    ]
    fig = correlation_heatmap(records)
    assert [ax.get_title() for ax in fig.axes[:2]] == ["Dialogues with people: Spearman rho",
                                                        "Dialogues with simulators: Spearman rho"]
    assert correlation_table(records)["Spearman [95% CI]"].tolist() == ["+0.50", "–"]
    assert correlation_heatmap([]).axes[0].texts[0].get_text() == "no rated and scored dialogues yet"


def test_correlations_are_recomputed_only_when_ratings_or_scores_change():
    from arena.crowd.aspects import load_form
    from webapp.ui.parts.meta_view import CorrelationMemo

    ds = []
    for i, (rdl, overall) in enumerate([(0.1, 1), (0.2, 2), (0.3, 4)]):
        d = Dialogue(crs_id="alpha", user=UserInfo(kind=UserKind.HUMAN, id="p"))
        d.scores["rdl"] = Score(value=rdl, scorer="rdl", version="1")
        d.ratings.append(Rating(values={"overall_impression": overall}, rater_id="p", form_version="aspects_v1"))
        ds.append(d)
    memo, form = CorrelationMemo(), load_form()
    first = memo.get("human", ds, form)
    assert memo.get("human", ds, form) is first
    ds[2].ratings[0].values["overall_impression"] = 0  # 1 2 4 becomes 1 2 0: rho 1 -> -0.5
    again = memo.get("human", ds, form)
    rho = next(r["spearman"] for r in again if r["level"] == "dialogue" and r["aspect"] == "overall_impression")
    assert again is not first and rho == pytest.approx(-0.5)


def test_chat_tab_form_after_the_verdict_over_http(services, served):
    client = Client(served(services), verbose=False)
    client.predict("alpha", api_name="/chat_start")
    client.predict("a space adventure please", api_name="/chat_send")
    out = client.predict("", api_name="/chat_satisfied")
    assert "satisfied" in out[2]  # the status line; the form opens next to it
    column, *_, note = client.predict(1, 2, None, 0, 3, api_name="/chat_aspects")
    assert note == "Thank you: 4 of 5 aspects rated and saved."
    (d,) = services.store.list_dialogues()
    (rating,) = d.ratings
    assert rating.values == {"understanding": 1, "task_completion": 2, "efficiency": 0, "overall_impression": 3}
    assert rating.rater_id == d.user.id and rating.source == "arena"
