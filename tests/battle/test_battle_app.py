"""The Battle, Leaderboard and Download tabs over HTTP, as a browser session would use them."""

import json
from pathlib import Path

from gradio_client import Client



def test_battle_hides_names_until_the_vote_then_everything_is_stored(services, served, fakes):
    client = Client(served(services), verbose=False)
    names = [f.name for f in fakes]
    seen = [client.predict(api_name="/battle_start")]
    seen.append(client.predict("I want a space adventure", api_name="/battle_send_a"))
    seen.append(client.predict("Something scary, please", api_name="/battle_send_b"))
    history_a = seen[1][0]
    assert [m["role"] for m in history_a] == ["user", "assistant"]
    assert "Recommended" in seen[1][1]
    seen.append(client.predict(api_name="/battle_satisfied_a"))
    seen.append(client.predict(api_name="/battle_frustrated_b"))
    assert "Now vote" in seen[-1][0]
    assert not any(name in json.dumps(out, default=str) for out in seen for name in names)

    reveal, title_a, title_b, *_ = client.predict("A was funnier", api_name="/battle_vote_a")
    (vote,) = services.store.list_votes()
    assert vote.crs_a in title_a and vote.crs_b in title_b and vote.crs_a in reveal
    assert vote.comment == "A was funnier" and vote.choice == "A"
    stored = {d.dialogue_id: d for d in services.store.list_dialogues()}
    assert set(stored) == {vote.dialogue_a, vote.dialogue_b}
    assert stored[vote.dialogue_a].feedback.sentiment == "satisfied"
    assert stored[vote.dialogue_b].feedback.sentiment == "frustrated"
    assert stored[vote.dialogue_a].user.id == vote.user_id
    assert services.pair_scheduler.pending() == 0


def test_refusals_come_back_as_status_lines_not_errors(services, served):
    """A refusal is the text of the pane's (or the vote's) status line; the call itself succeeds."""
    client = Client(served(services), verbose=False)
    assert "New battle" in client.predict("hi", api_name="/battle_send_a")[2]
    client.predict(api_name="/battle_start")
    assert "limit is 200" in client.predict("y" * 201, api_name="/battle_send_b")[2]
    assert "type a message" in client.predict("   ", api_name="/battle_send_b")[2]
    assert "before rating it" in client.predict(api_name="/battle_satisfied_b")[0]
    client.predict("hi", api_name="/battle_send_a")
    client.predict(api_name="/battle_satisfied_a")
    assert "already rated System A (satisfied)" in client.predict(api_name="/battle_frustrated_a")[0]
    assert "has ended" in client.predict("more", api_name="/battle_send_a")[2]
    assert "end both conversations" in client.predict("", api_name="/battle_vote_tie")[0]
    assert services.store.list_votes() == []
    (a,) = [d for d in services.store.list_dialogues() if d.metadata["side"] == "A"]
    assert a.feedback.sentiment == "satisfied" and a.num_turns == 1


def test_leaderboard_and_download_after_battles(services, served, tmp_path):
    url = served(services)
    for choice in ("a", "both_bad"):
        client = Client(url, verbose=False)
        client.predict(api_name="/battle_start")
        client.predict("hello there", api_name="/battle_send_a")
        client.predict("hello there", api_name="/battle_send_b")
        client.predict(api_name="/battle_satisfied_a")
        client.predict(api_name="/battle_satisfied_b")
        client.predict("", api_name=f"/battle_vote_{choice}")

    summary, table, *_ = client.predict("human", api_name="/leaderboard")
    assert "4 conversations and 2 battles" in summary and "count 2 votes" in summary
    rows = [dict(zip(table["headers"], row, strict=True)) for row in table["data"]]
    assert sum(int(r["Battles"]) for r in rows) == 4
    assert all(r["Satisfaction"] == "100%" for r in rows)
    empty_summary, *_ = client.predict("simulator", api_name="/leaderboard")
    assert "No conversations" in empty_summary

    researcher = Client(served(services, admin=True), verbose=False)  # raw data: researcher app only
    files, card = researcher.predict([], "human", api_name="/download")
    names = {Path(f).name: Path(f) for f in files}
    assert {"dialogues.jsonl", "votes.csv", "scores.csv", "scores.parquet", "README.md"} <= set(names)
    records = [json.loads(line) for line in names["dialogues.jsonl"].read_text().splitlines()]
    votes = {r["metadata"]["vote"]["choice"] for r in records}
    assert len(records) == 4 and votes == {"A", "both_bad"}
    assert "battle votes: 2" in card
    raw_ids = {v.user_id for v in services.store.list_votes()}
    assert not any(raw in names["dialogues.jsonl"].read_text() for raw in raw_ids)
