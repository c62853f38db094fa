"""The public app against an adversarial visitor: two audiences, blind battles, honest votes, moderation."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pytest

pytest.importorskip("gradio")
sys.path.insert(0, str(Path(__file__).parent.parent / "battle"))

from battle_support import FakeCatalogCRS, launch, make_services  # noqa: E402
from gradio_client import Client  # noqa: E402

from arena.corpus.bundle import export_bundle  # noqa: E402
from arena.corpus.records import export_records, pseudonymiser, resolve_salt  # noqa: E402
from arena.dialogue import RecommendedItem  # noqa: E402
from arena.store import BattleAlreadyVoted  # noqa: E402
from webapp.serve import build_admin_demo, build_demo, main as serve_main  # noqa: E402
from webapp.ui.parts.render import items_markdown  # noqa: E402
from webapp.ui.leaderboard_tab import LeaderboardCache  # noqa: E402
from webapp.protection import moderation  # noqa: E402

NAMES = ("alpha", "beta", "gamma")


@pytest.fixture
def demos():
    running = []

    def serve(services, **kwargs):
        demo, url = launch(services, **kwargs)
        running.append(demo)
        return url

    yield serve
    for demo in running:
        demo.close()


def make(tmp_path, **settings):
    return make_services(tmp_path, [FakeCatalogCRS(n) for n in NAMES], max_turns=3, **settings)


def battle_until_vote(client: Client) -> list:
    seen = [client.predict(api_name="/battle_start"),
            client.predict("a space adventure please", api_name="/battle_send_a"),
            client.predict("something scary", api_name="/battle_send_b"),
            client.predict(api_name="/battle_satisfied_a"),
            client.predict(api_name="/battle_frustrated_b")]
    return seen


# -- 1. two audiences ------------------------------------------------------------------


def _endpoints(url: str, **auth) -> set[str]:
    return set(Client(url, verbose=False, **auth).view_api(print_info=False, return_format="dict")["named_endpoints"])


def test_public_app_offers_no_researcher_controls(tmp_path, demos):
    services = make(tmp_path)
    public = _endpoints(demos(services))
    assert "/battle_start" in public and "/chat_send" in public and "/leaderboard" in public
    assert not [e for e in public if e.startswith(("/evaluate", "/download", "/moderation"))]
    researcher = _endpoints(demos(services, admin=True))
    assert {"/evaluate_start", "/download", "/moderation_delete"} <= researcher


def test_researcher_app_needs_a_login(tmp_path):
    from webapp.protection.admin_auth import admin_checker, hash_password
    from webapp.protection.vote_limits import origin_key  # noqa: F401 (the module imports cleanly)

    services = make(tmp_path, admin_users=("ada",), admin_password_hash=hash_password("correct horse"))
    demo = build_admin_demo(services)
    demo.queue()
    from battle_support import free_port

    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True,
                auth=admin_checker(services.settings))
    url = f"http://127.0.0.1:{port}/"
    try:
        with pytest.raises(Exception):
            Client(url, verbose=False)
        with pytest.raises(Exception):
            Client(url, verbose=False, auth=("ada", "wrong"))
        assert "/download" in _endpoints(url, auth=("ada", "correct horse"))
    finally:
        demo.close()


def test_admin_without_credentials_refuses_to_start(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("ARENA_ADMIN_USERS", raising=False)
    assert serve_main(["--admin", "--db", str(tmp_path / "a.sqlite3")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "ARENA_ADMIN_USERS" in err and len(err.splitlines()) == 1


def test_gradio_file_cache_is_bounded(tmp_path):
    services = make(tmp_path, file_cache_max_age_s=600)
    for build in (build_demo, build_admin_demo):
        assert build(services).delete_cache == (600, 600)


# -- 2. blind until the vote ---------------------------------------------------------------


def test_nothing_fetchable_names_a_battle_before_its_vote(tmp_path, demos):
    services = make(tmp_path)
    url = demos(services)
    client = Client(url, verbose=False)
    seen = battle_until_vote(client)
    board = Client(url, verbose=False).predict("human", api_name="/leaderboard")
    exported = list(export_records(services.store))
    bundle = export_bundle(services.store, tmp_path / "bundle")
    text = json.dumps([seen, board[0], exported], default=str) + (tmp_path / "bundle" / "dialogues.jsonl").read_text()
    assert not any(name in text for name in NAMES)
    assert bundle.counts["dialogues"] == 0 and "No conversations" in board[0]

    client.predict("", api_name="/battle_vote_a")
    assert len(list(export_records(services.store))) == 2  # after the vote the battle is published


def test_items_look_the_same_whichever_system_named_them():
    with_year = items_markdown([RecommendedItem(item_id="1", title="The Matrix (1999)")])
    bare = items_markdown([RecommendedItem(item_id="2", title="The Matrix")])
    qualified = items_markdown([RecommendedItem(item_id="3", title="The Hunger Games (Science Fiction Film)")])
    assert with_year == bare and "The Matrix \\(1999\\)" in bare
    assert "Science Fiction Film" not in qualified and "The Hunger Games \\(" in qualified


# -- 3. honest votes ------------------------------------------------------------------------


def test_votes_per_session_are_limited(tmp_path, demos):
    services = make(tmp_path, max_votes_per_user=2, max_votes_per_ip=100)
    client = Client(demos(services), verbose=False)
    for _ in range(2):
        battle_until_vote(client)
        client.predict("", api_name="/battle_vote_a")
    battle_until_vote(client)
    assert "limit of 2 votes" in client.predict("", api_name="/battle_vote_a")[0]
    assert len(services.store.list_votes()) == 2


def test_battles_per_address_are_limited(tmp_path, demos):
    services = make(tmp_path, max_battles_per_ip=2)
    url = demos(services)
    for _ in range(2):
        Client(url, verbose=False).predict(api_name="/battle_start")  # fresh sessions, one address
    assert "limit of 2 battles" in Client(url, verbose=False).predict(api_name="/battle_start")[0]


def test_one_vote_per_battle_in_the_store(tmp_path):
    from tests.battle.test_battle_exports import make as make_dialogue
    from arena.dialogue import Vote

    services = make(tmp_path)
    a, b = make_dialogue("alpha"), make_dialogue("beta")
    kwargs = dict(user_key="u", ip_key="i", started_at=None, burst_votes=100, burst_window_s=60, min_battle_s=0)
    first = Vote(battle_id="b1", dialogue_a=a.dialogue_id, dialogue_b=b.dialogue_id, crs_a="alpha", crs_b="beta",
                 choice="A")
    services.store.save_battle_once(a, b, first, **kwargs)
    second = first.model_copy(update={"vote_id": "another", "choice": "B"})
    with pytest.raises(BattleAlreadyVoted):
        services.store.save_battle_once(a, b, second, **kwargs)
    assert [v.choice for v in services.store.list_votes()] == ["A"]


def test_bursts_are_flagged_and_left_out_of_the_leaderboard(tmp_path, demos):
    services = make(tmp_path, burst_votes=2, burst_window_s=600)
    url = demos(services)
    for _ in range(4):  # a script with fresh sessions from one address
        client = Client(url, verbose=False)
        battle_until_vote(client)
        client.predict("", api_name="/battle_vote_a")
    flags = services.store.flagged_votes()
    assert len(flags) == 2 and all("burst" in reason for reason in flags.values())
    summary = Client(url, verbose=False).predict("human", api_name="/leaderboard")[0]
    assert "count 2 votes" in summary and "2 flagged votes" in summary
    table, _ = LeaderboardCache(services).get("human")
    assert int(table["battles"].sum()) // 2 == 2
    bundle = export_bundle(services.store, tmp_path / "raw")  # researchers still get them, marked
    rows = (tmp_path / "raw" / "votes.csv").read_text().splitlines()
    assert bundle.counts["votes"] == 4 and sum("burst" in row for row in rows) == 2


def test_a_vote_seconds_after_the_start_is_flagged(tmp_path, demos):
    services = make(tmp_path, min_battle_s=60)
    client = Client(demos(services), verbose=False)
    battle_until_vote(client)
    client.predict("", api_name="/battle_vote_b")
    assert list(services.store.flagged_votes().values())[0].startswith("fast")


# -- 5. moderation ---------------------------------------------------------------------------


def test_hide_delete_and_user_deletion_are_logged(tmp_path, demos, caplog):
    services = make(tmp_path)
    url = demos(services)
    for _ in range(2):
        client = Client(url, verbose=False)
        battle_until_vote(client)
        client.predict("", api_name="/battle_vote_tie")
    first, second = services.store.list_votes()
    with caplog.at_level(logging.INFO, logger="webapp.protection.moderation"):
        moderation.hide(services.store, [first.dialogue_a], actor="ada", reason="abusive text")
        assert first.dialogue_a not in {r["conversation ID"] for r in export_records(services.store)}
        table, _ = LeaderboardCache(services).get("human", fresh=True)
        assert int(table["conversations"].sum()) == 3 and int(table["battles"].sum()) // 2 == 1

        researcher = Client(demos(services, admin=True), verbose=False)
        researcher.predict(second.dialogue_b, "spam", "", api_name="/moderation_delete")
        assert services.store.get_dialogue(second.dialogue_b) is None
        assert len(services.store.list_votes()) == 1

        # A deletion request names the person by the pseudonym they found in the published corpus.
        alias = pseudonymiser(resolve_salt(services.store))(first.user_id)
        counts = moderation.delete_user(services.store, alias, actor="ada", reason="deletion request")
    assert counts["dialogues"] == 2
    assert [d.dialogue_id for d in services.store.list_dialogues()] == [second.dialogue_a]
    actions = [e["action"] for e in services.store.moderation_entries()]
    assert actions == ["delete", "delete", "hide"]
    assert len([r for r in caplog.records if r.name == "webapp.protection.moderation"]) == 3


def test_moderation_needs_a_reason(tmp_path):
    services = make(tmp_path)
    with pytest.raises(moderation.ModerationError, match="reason"):
        moderation.hide(services.store, ["x"], actor="ada", reason="  ")


def test_a_refused_message_is_one_log_line_not_a_traceback(tmp_path, demos, capfd, caplog):
    services = make(tmp_path)
    client = Client(demos(services), verbose=False)
    client.predict(api_name="/battle_start")
    capfd.readouterr()
    with caplog.at_level(logging.INFO, logger="webapp.refused"):
        assert "type a message" in client.predict("   ", api_name="/battle_send_a")[2]
    assert "Traceback" not in capfd.readouterr().err
    refused = [r.getMessage() for r in caplog.records if r.name == "webapp.refused"]
    assert refused == ["refused: Please type a message first."]
