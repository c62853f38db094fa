"""Two app processes on one PostgreSQL database, a participant moving between them (a load balancer without
stickiness, a restart): nothing either process holds in memory decides what is stored."""

from __future__ import annotations

import pytest

from arena.store import Store
from webapp.sessions import participants
from webapp.sessions.turn_step import CHANGED_ELSEWHERE

pytestmark = pytest.mark.slow  # two app processes and a PostgreSQL cluster


@pytest.fixture
def db(postgres_server):
    url = postgres_server.create_database("replicas")
    Store(url).close()  # the schema in place before both start
    return url


def participant(db: str, token: str) -> str:
    with Store(db) as store:
        return participants.participant_id(store, token * 40)


def stored_chats(db: str, user: str) -> list[list[str]]:
    with Store(db) as store:
        return [[u.text for u in d.utterances] for d in store.list_dialogues(user_id=user)]


def test_chat_moved_between_replicas_loses_no_turn_and_never_brings_a_deletion_back(db, replicas):
    r1, r2 = replicas(db, "r1"), replicas(db, "r2")
    user = participant(db, "a")
    r1.call("chat_send", user=user, text="t1 a comedy please")
    r1.call("chat_send", user=user, text="t2 something older")
    # The next request reaches the other replica: it continues the stored conversation.
    assert r2.call("chat_send", user=user, text="t3 with a dog")["turns"][::2] == [
        "t1 a comedy please", "t2 something older", "t3 with a dog"]
    # Back on the first replica, whose page is two turns behind: one line and the conversation as stored.
    stale = r1.call("chat_send", user=user, text="t4 thanks")
    assert stale["status"] == CHANGED_ELSEWHERE and len(stale["turns"]) == 6
    assert r1.call("chat_send", user=user, text="t4 thanks")["status"] != CHANGED_ELSEWHERE
    (turns,) = stored_chats(db, user)
    assert turns[::2] == ["t1 a comedy please", "t2 something older", "t3 with a dog", "t4 thanks"]

    # Deleted through "Your data" on r2; r1's page still holds the conversation.
    assert r2.call("delete_own", user=user)["deleted"]["dialogues"] == 1
    assert stored_chats(db, user) == []
    stale = r1.call("chat_send", user=user, text="t5 one more")
    assert stale == {"status": CHANGED_ELSEWHERE, "turns": None, "id": None}
    assert stored_chats(db, user) == []  # nothing of the deleted conversation came back
    assert r1.call("chat_open", user=user) == {"turns": None}  # a reload on r1 shows nothing either
    fresh = r1.call("chat_send", user=user, text="t6 a new start")
    assert stored_chats(db, user) == [["t6 a new start", fresh["turns"][1]]]


def test_a_message_id_sent_to_both_replicas_is_stored_once(db, replicas):
    r1, r2 = replicas(db, "r1"), replicas(db, "r2")
    user = participant(db, "b")
    r1.call("chat_send", user=user, text="hello", message_id="m-1")
    again = r2.call("chat_send", user=user, text="hello", message_id="m-1")
    assert again["status"] == "" and again["turns"][::2] == ["hello"]
    assert stored_chats(db, user)[0][::2] == ["hello"]


def test_a_labelled_conversation_is_not_rewritten_by_a_stale_page(db, replicas):
    r1, r2 = replicas(db, "r1"), replicas(db, "r2")
    user = participant(db, "c")
    r1.call("chat_send", user=user, text="a thriller")
    r2.call("chat_open", user=user)
    assert r2.call("chat_rate", user=user, sentiment="satisfied")["status"].startswith("Thank you")
    assert r1.call("chat_rate", user=user, sentiment="frustrated") == {
        "refused": "You already rated this conversation (satisfied). Press “New conversation” to start another."}
    with Store(db) as store:
        (stored,) = store.list_dialogues(user_id=user)
    assert stored.feedback.sentiment == "satisfied" and len(stored.utterances) == 2


def test_a_battle_finished_on_the_other_replica_keeps_its_labels_and_vote(db, replicas):
    r1, r2 = replicas(db, "r1"), replicas(db, "r2")
    user = participant(db, "d")
    battle_id = r1.call("battle_start", user=user)["battle"]
    r1.call("battle_send", user=user, side="A", text="a1 on r1")
    r2.call("battle_send", user=user, side="A", text="a2 on r2")  # r2 rebuilds the battle from the store
    r1.call("battle_send", user=user, side="A", text="a3 on r1")  # r1 catches up first: no turn lost
    r1.call("battle_send", user=user, side="B", text="b1 on r1")
    view = r2.call("battle_view", user=user)
    assert view["battle"] == battle_id and view["sides"]["A"][::2] == ["a1 on r1", "a2 on r2", "a3 on r1"]
    r2.call("battle_rate", user=user, side="A", sentiment="satisfied")
    r2.call("battle_rate", user=user, side="B", sentiment="frustrated")
    vote_id = r2.call("battle_vote", user=user, choice="A")["vote"]
    # r1 no longer offers the battle, and a message there stores nothing.
    assert r1.call("battle_view", user=user) == {"battle": None}
    late = r1.call("battle_send", user=user, side="A", text="late")  # the page still shows the battle
    assert late == {"status": CHANGED_ELSEWHERE, "battle": None}
    assert "refused" in r1.call("battle_vote", user=user, choice="B")
    with Store(db) as store:
        sides = {d.metadata["side"]: d for d in store.list_dialogues(user_id=user)}
        votes = store.list_votes()
    assert [v.vote_id for v in votes] == [vote_id]
    assert sides["A"].feedback.sentiment == "satisfied" and sides["B"].feedback.sentiment == "frustrated"
    assert [u.text for u in sides["A"].utterances][::2] == ["a1 on r1", "a2 on r2", "a3 on r1"]


def _places(db: str) -> int:
    import sqlalchemy as sa

    from arena.store import schema as t

    with Store(db) as store, store.read() as conn:
        return conn.execute(sa.select(sa.func.count()).select_from(t.study_claims)).scalar()


def test_the_same_worker_starting_on_both_replicas_at_once_holds_one_place(db, replicas):
    from arena.crowd.study import parse_study
    from tests.study.study_support import study_yaml

    with Store(db) as store:
        text = study_yaml(systems=["alpha", "bravo"], quota_per_cell=5)
        store.save_study(parse_study(text), text, "ada")
    r1, r2 = replicas(db, "r1"), replicas(db, "r2")
    for n in range(4):  # each worker's Start reaches both replicas at the same moment
        r1.send("study_start", study_id="pilot", worker=f"w{n}")
        r2.send("study_start", study_id="pilot", worker=f"w{n}")
        first, second = r1.receive(), r2.receive()
        assert first["step"] == second["step"] == "task" and first["dialogues"] == second["dialogues"]
    assert _places(db) == 4  # the place is taken at Start: one per worker, not one per replica
    for n in range(4):  # and each worker's first message reaches both replicas at the same moment
        r1.send("study_send", study_id="pilot", worker=f"w{n}", text=f"hello from w{n}")
        r2.send("study_send", study_id="pilot", worker=f"w{n}", text=f"hello again from w{n}")
        answers = [r1.receive(), r2.receive()]
        # Both reach the same conversation: one message is stored, the other (compare-and-set) gets the
        # stale page's line; either way the task holds one place.
        claims = {a["claim"] for a in answers if "claim" in a}
        assert len(claims) == 1 and all("claim" in a or a == {"refused": CHANGED_ELSEWHERE} for a in answers), answers
    assert _places(db) == 4  # one place per worker, not one per replica
    with Store(db) as store, store.read() as conn:
        import sqlalchemy as sa
        from arena.store import schema as t

        stored = set(conn.execute(sa.select(t.dialogues.c.dialogue_id)).scalars())
    with Store(db) as store:
        tasks = [p.data["task"] for p in store.list_participants("pilot")]
    handed_out = {d for task in tasks for d in task["dialogues"].values()}
    assert len(tasks) == 4 and len(handed_out) == 4 * len(tasks[0]["dialogues"])
    with Store(db) as store:
        extra = [(d.dialogue_id, d.metadata, len(d.utterances)) for d in store.list_dialogues()
                 if d.dialogue_id not in handed_out]
    assert stored == handed_out, extra  # no empty task conversation left over from the second Start


def test_a_place_held_from_start_holds_on_every_replica_until_its_time_runs_out(db, replicas):
    """Worker A starts on r1, worker B on r2: the study's two places are theirs on both replicas. A late
    worker is told before anything; A writes through r2 and keeps the task; once B's hold runs out without
    a message, the late worker gets B's place, and B, writing after that, still keeps their task."""
    import sqlalchemy as sa

    from arena.store import schema as t
    from arena.crowd.study import parse_study
    from tests.study.study_support import study_yaml
    from webapp.sessions.study import FULL_FOR_NOW

    with Store(db) as store:
        text = study_yaml(systems=["alpha", "bravo"], quota_per_cell=1, tasks_per_participant=1,
                          start_hold_minutes=10, new_workers_per_minute=50)
        store.save_study(parse_study(text), text, "ada")
    r1, r2 = replicas(db, "r1"), replicas(db, "r2")
    a = r1.call("study_start", study_id="pilot", worker="w-a")
    b = r2.call("study_start", study_id="pilot", worker="w-b")
    assert a["step"] == b["step"] == "task" and {a["cell"], b["cell"]} == {"alpha", "bravo"}
    assert r1.call("study_start", study_id="pilot", worker="w-late") == {"refused": FULL_FOR_NOW}
    sent = r2.call("study_send", study_id="pilot", worker="w-a", text="a comedy please")
    assert (sent["claim"], sent["cell"], sent["turns"]) == (a["claim"], a["cell"], ["a comedy please"])
    with Store(db) as store, store.write() as conn:  # B's ten minutes pass without a message
        conn.execute(sa.update(t.study_claims).where(t.study_claims.c.claim_id == b["claim"])
                     .values(expires_at="2000-01-01T00:00:00.000000Z"))
    late = r2.call("study_start", study_id="pilot", worker="w-late-2")
    assert late["step"] == "task" and late["cell"] == b["cell"]
    kept = r1.call("study_send", study_id="pilot", worker="w-b", text="am I still in?")
    assert kept["cell"] == b["cell"] and kept["turns"] == ["am I still in?"]
    assert _places(db) == 2  # A's and the late worker's: B's lapsed hold is not counted twice


def test_a_vote_is_not_stored_over_a_side_deleted_meanwhile(db):
    """The vote's transaction checks both sides' versions: a deletion between the step's read and the
    vote stores nothing (no vote, no dialogue brought back)."""
    from arena.dialogue import Dialogue, UserInfo, UserKind, Vote
    from arena.store import DialogueChanged

    with Store(db) as store:
        a, b = (Dialogue(crs_id=crs, user=UserInfo(kind=UserKind.HUMAN, id="p-x"),
                         metadata={"source": "battle", "battle_id": "bt-1", "side": side})
                for crs, side in (("alpha", "A"), ("bravo", "B")))
        store.save_dialogues([a, b])
        versions = (store.current_dialogue(a.dialogue_id).version, store.current_dialogue(b.dialogue_id).version)
        store.delete_dialogues([a.dialogue_id], actor="participant", reason="test")  # on another replica
        cast = Vote(battle_id="bt-1", dialogue_a=a.dialogue_id, dialogue_b=b.dialogue_id, crs_a="alpha",
                    crs_b="bravo", choice="A", user_id="p-x", user_kind=UserKind.HUMAN)
        with pytest.raises(DialogueChanged):
            store.save_battle_once(a, b, cast, user_key="u", ip_key="i", started_at=None, burst_votes=10,
                                   burst_window_s=60, min_battle_s=0, versions=versions)
        assert store.list_votes() == [] and store.get_dialogue(a.dialogue_id) is None


def test_a_study_verdict_from_a_stale_page_is_refused_and_the_stored_one_kept(db, replicas):
    """The worker's page on r1 was drawn before their verdict was given on r2: r1's verdict is refused with
    the stale page's line and r2's stays stored; the page, drawn again, may then change it (as a study's
    verdict may change until the task is submitted)."""
    from arena.crowd.study import parse_study
    from tests.study.study_support import study_yaml

    with Store(db) as store:
        text = study_yaml(systems=["alpha", "bravo"], quota_per_cell=5)
        store.save_study(parse_study(text), text, "ada")
    r1, r2 = replicas(db, "r1"), replicas(db, "r2")
    started = r1.call("study_start", study_id="pilot", worker="w-stale")
    r1.call("study_send", study_id="pilot", worker="w-stale", text="a comedy please")
    assert r2.call("study_open", study_id="pilot", worker="w-stale") == {"verdicts": {"A": None}}
    assert r2.call("study_rate", study_id="pilot", worker="w-stale", sentiment="frustrated") == {
        "verdicts": {"A": "frustrated"}}

    def stored_verdict() -> str:
        with Store(db) as store:
            return store.get_dialogue(started["dialogues"][0]).feedback.sentiment

    # r1's page still shows the conversation unrated.
    stale = r1.call("study_rate", study_id="pilot", worker="w-stale", sentiment="satisfied")
    assert stale == {"refused": CHANGED_ELSEWHERE}
    assert stored_verdict() == "frustrated"
    # Drawn again after the refusal, r1's page shows the stored verdict; a change from there is stored.
    assert r1.call("study_rate", study_id="pilot", worker="w-stale", sentiment="satisfied") == {
        "verdicts": {"A": "satisfied"}}
    assert stored_verdict() == "satisfied"
    # And now r2's page is the one behind: its change back is refused in turn.
    assert r2.call("study_rate", study_id="pilot", worker="w-stale", sentiment="frustrated") == {
        "refused": CHANGED_ELSEWHERE}
    assert stored_verdict() == "satisfied"
