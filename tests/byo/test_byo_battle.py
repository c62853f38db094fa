"""A battle between an external system and a built-in-like one, through the Battle tab's own
functions and the store: a fault gives the participant a clear notice and voids the battle on
the leaderboard, without counting against the failing system's satisfaction."""

from __future__ import annotations

import sys
from pathlib import Path

from byo_support import write_systems

sys.path.insert(0, str(Path(__file__).parent.parent / "battle"))

from battle_support import FakeCatalogCRS, fake_spec  # noqa: E402

from arena.runtime.config import Settings  # noqa: E402
from arena.llm import FakeProvider, LLMClient  # noqa: E402
from arena.store import Store  # noqa: E402
from crs.external.specs import external_specs  # noqa: E402
from crs.registry import CRSRegistry  # noqa: E402
from webapp.leaderboard.table import compute_leaderboard  # noqa: E402
from webapp.services import Services  # noqa: E402
from webapp.ui import battle_tab  # noqa: E402


def _services(tmp_path, url, small_redial) -> Services:
    path = write_systems(tmp_path / "systems.yaml", {
        "name": "remote", "display_name": "Remote", "dataset": "redial", "kind": "http", "url": url,
        "timeout_s": 2})
    settings = Settings(db_path=tmp_path / "arena.sqlite3", cache_dir=tmp_path / "cache", llm_provider="fake",
                        systems_file=path, min_battle_s=0.0, burst_votes=10_000)
    specs = [fake_spec(FakeCatalogCRS("builtin"))] + external_specs(settings, catalog_loader=lambda _: small_redial)
    return Services(settings=settings, store=Store(settings.db_path), llm=LLMClient(FakeProvider(default="ok")),
                    registry=CRSRegistry(specs))


def _battle(services, fail_remote: bool, faulty_server) -> None:
    session = battle_tab.start_battle(services, "tester")
    assert {d.crs_id for d in session.dialogues.values()} == {"remote", "builtin"}
    for side, dialogue in session.dialogues.items():
        faulty_server.mode = "5xx" if (fail_remote and dialogue.crs_id == "remote") else "ok"
        status = battle_tab.send(services, session, side, "a scary space film please")
        if fail_remote and dialogue.crs_id == "remote":
            assert status.startswith(f"System {side} had a problem answering, so this battle will not count")
        else:
            assert status == ""
        battle_tab.rate(services, session, side, "frustrated" if dialogue.crs_id == "remote" else "satisfied")
    battle_tab.vote(services, session, "A" if session.dialogues["A"].crs_id == "builtin" else "B", "", "tester")


def test_a_fault_voids_the_battle_and_a_clean_battle_counts(tmp_path, faulty_server, small_redial):
    services = _services(tmp_path, faulty_server.url, small_redial)
    try:
        _battle(services, fail_remote=True, faulty_server=faulty_server)
        table = compute_leaderboard(services.store.list_dialogues(), services.store.list_votes(),
                                  systems=services.registry.names).set_index("system")
        assert table.loc["remote", "battles"] == 0 and table.loc["builtin", "battles"] == 0
        assert table.loc["remote", "rated"] == 0  # its frustrated rating after the fault is not counted
        assert table.loc["builtin", "satisfied"] == 1
        stored = [d for d in services.store.list_dialogues() if d.crs_id == "remote"][0]
        assert "ExternalCRSError" in stored.errors()[0]  # kept in the record, and in exports
        from arena.corpus.bundle import VOID_FLAG, take_snapshot

        (voided,) = services.store.list_votes()
        assert take_snapshot(services.store).flags == {voided.vote_id: VOID_FLAG}  # marked in votes.csv
        _battle(services, fail_remote=False, faulty_server=faulty_server)
        table = compute_leaderboard(services.store.list_dialogues(), services.store.list_votes(),
                                  systems=services.registry.names).set_index("system")
        assert table.loc["remote", "battles"] == 1 and table.loc["remote", "losses"] == 1
        assert table.loc["remote", "rated"] == 1
    finally:
        services.store.close()
