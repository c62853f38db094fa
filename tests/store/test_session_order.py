"""Each vote and each label carries its order within the participant's session (arena/store/session_order.py),
assigned when stored, safe when two app processes store at once, and carried over by revision 0014."""

from __future__ import annotations

import threading
from datetime import timedelta

import sqlalchemy as sa

from arena.dialogue import Feedback, utc_now
from arena.store import Store
from arena.store import schema as t
from arena.store.board_rows import label_orders_of
from arena.store.engine import alembic_config, migration_scripts
from tests.store.store_strategies import battle, rich_dialogue


def _vote_of(user_id: str, when=None) -> tuple:
    a, b, vote = battle(user_id=user_id)
    if when is not None:
        vote = vote.model_copy(update={"timestamp": when})
    return a, b, vote


def test_votes_are_numbered_per_participant_and_a_resave_keeps_the_number(store):
    first, second, other, pooled = (_vote_of("user-a"), _vote_of("user-a"), _vote_of("user-b"),
                                    _vote_of("anonymous"))
    for a, b, vote in (first, second, other, pooled):
        store.save_battle(a, b, vote)
    store.save_battle(*first)  # stored again: the same number, not a third
    orders = store.vote_orders()
    assert orders == {first[2].vote_id: 1, second[2].vote_id: 2, other[2].vote_id: 1}
    rows = store.board_rows()
    assert {r[0]: r[-1] for r in rows.votes} == {**orders, pooled[2].vote_id: None}


def test_labels_are_numbered_when_first_given(store):
    unlabelled = rich_dialogue(user_id="user-a", sentiment=None)
    store.save_dialogue(unlabelled)
    labelled = rich_dialogue(user_id="user-a")
    store.save_dialogue(labelled)
    assert label_orders_of(store.board_rows()) == {labelled.dialogue_id: 1}
    unlabelled.feedback = Feedback(sentiment="frustrated")
    store.save_dialogue(unlabelled)
    store.save_dialogue(labelled)  # saved again: keeps its number
    assert label_orders_of(store.board_rows()) == {labelled.dialogue_id: 1, unlabelled.dialogue_id: 2}


def test_two_processes_storing_one_participants_votes_at_once_never_share_a_number(db_location):
    replicas = [Store(db_location), Store(db_location)]
    battles = [_vote_of("user-busy") for _ in range(16)]
    errors: list[BaseException] = []

    def store_half(replica: Store, part: list) -> None:
        try:
            for a, b, vote in part:
                replica.save_battle(a, b, vote)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=store_half, args=(r, battles[i::2])) for i, r in enumerate(replicas)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert sorted(replicas[0].vote_orders().values()) == list(range(1, 17))
    for replica in replicas:
        replica.close()


def test_revision_0014_numbers_stored_rows_by_their_timestamps(db_location):
    now = utc_now()
    late, early = _vote_of("user-a", now), _vote_of("user-a", now - timedelta(minutes=5))
    with Store(db_location) as store:
        store.save_battle(*late)  # stored first, cast last
        store.save_battle(*early)
        assert store.vote_orders() == {late[2].vote_id: 1, early[2].vote_id: 2}
        from alembic import command

        before = migration_scripts().get_revision("0014").down_revision
        with store.sql_engine().connect() as conn, conn.begin():
            command.downgrade(alembic_config(conn), before)
            assert "session_order" not in {c["name"] for c in sa.inspect(conn).get_columns("votes")}
    with Store(db_location) as store:  # upgraded again on open: numbered from the cast times
        assert store.vote_orders() == {early[2].vote_id: 1, late[2].vote_id: 2}
        labels = label_orders_of(store.board_rows())
        dialogues = sorted(((d.feedback.timestamp, d.dialogue_id) for d in store.list_dialogues()))
        assert sorted(labels.values()) == [1, 2, 3, 4]
        assert [labels[i] for _, i in dialogues] == [1, 2, 3, 4]
        with store.read() as conn:
            assert conn.execute(sa.select(sa.func.count()).select_from(t.votes)).scalar_one() == 2



def test_the_votes_export_carries_each_votes_session_order(store, tmp_path):
    import csv

    from arena.corpus.bundle import export_bundle

    first, second, pooled = _vote_of("user-a"), _vote_of("user-a"), _vote_of("anonymous")
    for a, b, vote in (first, second, pooled):
        store.save_battle(a, b, vote)
    export_bundle(store, tmp_path / "out")
    with open(tmp_path / "out" / "votes.csv", newline="") as fh:
        orders = {r["vote_id"]: r["session_order"] for r in csv.DictReader(fh)}
    assert orders == {first[2].vote_id: "1", second[2].vote_id: "2", pooled[2].vote_id: ""}
