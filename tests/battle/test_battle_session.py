"""Battle logic without HTTP: turns, ratings, votes, failures and caps."""

import random
import threading

import pytest
from battle_support import FakeCatalogCRS, make_services

from arena.conversation.runner import POLITE_ERROR, POLITE_TIMEOUT
from webapp.sessions.battle import rate, reveal_markdown, send, start_battle, vote
from webapp.sessions.refusal import Refusal


def play(services, session, choice="A", comment="ok"):
    for side in ("A", "B"):
        send(services, session, side, f"hello {side}")
    rate(services, session, "A", "satisfied")
    rate(services, session, "B", "frustrated")
    return vote(services, session, choice, comment, "u1")


def test_full_battle_is_stored_once_with_feedback_and_vote(services):
    session = start_battle(services, "u1")
    a, b = session.dialogues["A"], session.dialogues["B"]
    assert a.crs_id != b.crs_id
    cast = play(services, session, "B", "  B knew more films  ")
    stored = {d.dialogue_id: d for d in services.store.list_dialogues()}
    assert set(stored) == {a.dialogue_id, b.dialogue_id}
    assert stored[a.dialogue_id].feedback.sentiment == "satisfied"
    assert stored[b.dialogue_id].feedback.sentiment == "frustrated"
    assert stored[a.dialogue_id].metadata == {"source": "battle", "battle_id": session.battle_id, "side": "A"}
    (saved,) = services.store.list_votes()
    assert saved == cast
    assert (saved.crs_a, saved.crs_b, saved.choice) == (a.crs_id, b.crs_id, "B")
    assert saved.comment == "B knew more films"
    assert a.crs_id in reveal_markdown(saved) and b.crs_id in reveal_markdown(saved)
    assert services.pair_scheduler.pending() == 0


def test_order_of_steps_is_enforced(services):
    with pytest.raises(Refusal, match="New battle"):
        send(services, None, "A", "hi")
    session = start_battle(services, "u1")
    with pytest.raises(Refusal, match="before rating"):
        rate(services, session, "A", "satisfied")
    send(services, session, "A", "hi")
    rate(services, session, "A", "satisfied")
    with pytest.raises(Refusal, match="already rated"):
        rate(services, session, "A", "frustrated")
    with pytest.raises(Refusal, match="has ended"):
        send(services, session, "A", "more")
    with pytest.raises(Refusal, match="end both conversations"):
        vote(services, session, "A", "", "u1")
    send(services, session, "B", "hi")
    rate(services, session, "B", "satisfied")
    vote(services, session, "tie", "", "u1")
    with pytest.raises(Refusal, match="already voted"):
        vote(services, session, "A", "", "u1")
    assert len(services.store.list_votes()) == 1


def test_length_and_turn_caps(services):
    session = start_battle(services, "u1")
    with pytest.raises(Refusal, match="limit is 200"):
        send(services, session, "A", "x" * 201)
    with pytest.raises(Refusal, match="type a message"):
        send(services, session, "A", "   ")
    statuses = [send(services, session, "A", f"turn {i}") for i in range(3)]  # max_turns=3
    assert statuses[0] == ""
    assert "one more message" in statuses[1]  # announced before the last message
    assert "limit of 3 messages" in statuses[-1]
    with pytest.raises(Refusal, match="limit of 3 messages"):
        send(services, session, "A", "one more")
    rate(services, session, "A", "frustrated")  # a capped conversation can still be rated
    assert services.store.get_dialogue(session.dialogues["A"].dialogue_id).num_turns == 3


@pytest.mark.parametrize("broken,polite,error", [
    (FakeCatalogCRS("broken", fail_with=RuntimeError("GPU on fire")), POLITE_ERROR, "GPU on fire"),
    (FakeCatalogCRS("broken", delay_s=1.0), POLITE_TIMEOUT, "timeout"),
])
def test_failing_system_answers_politely_and_error_is_kept(tmp_path, broken, polite, error):
    services = make_services(tmp_path, [FakeCatalogCRS("fine"), broken], turn_timeout_s=0.2)
    session = start_battle(services, "u1")
    side = "A" if session.dialogues["A"].crs_id == "broken" else "B"
    other = "B" if side == "A" else "A"
    status = send(services, session, side, "hello")
    assert "problem" in status
    send(services, session, other, "hello")
    rate(services, session, side, "frustrated")
    rate(services, session, other, "satisfied")
    vote(services, session, other, "", "u1")
    stored = services.store.get_dialogue(session.dialogues[side].dialogue_id)
    reply = stored.agent_turns()[0]
    assert reply.text == polite and error in reply.error
    services.store.close()


def test_unavailable_systems_are_never_drawn(tmp_path):
    systems = [FakeCatalogCRS(n) for n in ("a", "b", "c", "d")]
    services = make_services(tmp_path, systems, unavailable=["c", "d"])
    for _ in range(10):
        session = start_battle(services, "u1")
        assert {d.crs_id for d in session.dialogues.values()} == {"a", "b"}
    lonely = make_services(tmp_path / "x", systems[:2], unavailable=["b"])
    with pytest.raises(Refusal, match="fewer than two systems"):
        start_battle(lonely, "u1")


def test_stored_battles_steer_pairing_toward_the_under_played(tmp_path):
    services = make_services(tmp_path, [FakeCatalogCRS(n) for n in ("a", "b", "c")])
    services.pair_scheduler._rng = random.Random(5)
    for _ in range(12):
        session = start_battle(services, "u1")
        play(services, session)
    counts = sorted(services.store.pair_counts().values())
    assert len(counts) == 3 and counts[-1] - counts[0] <= 4


def test_new_battle_releases_the_unfinished_one(services):
    first = start_battle(services, "u1")
    assert services.pair_scheduler.pending() == 1
    start_battle(services, "u1", previous=first)
    assert services.pair_scheduler.pending() == 1


def test_rating_both_panes_at_once_always_opens_the_vote(services):
    """Whatever the interleaving, at least one of the two ratings sees both panes done."""
    for _ in range(20):
        session = start_battle(services, "u1")
        send(services, session, "A", "hi")
        send(services, session, "B", "hi")
        seen = []

        def rate_side(side, session=session, seen=seen):
            seen.append(rate(services, session, side, "satisfied"))

        threads = [threading.Thread(target=rate_side, args=(s,)) for s in ("A", "B")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert any(seen)
        vote(services, session, "A", "", "u1")


def test_concurrent_sends_in_one_pane_never_interleave(tmp_path):
    services = make_services(tmp_path, [FakeCatalogCRS("a", delay_s=0.2), FakeCatalogCRS("b", delay_s=0.2)])
    session = start_battle(services, "u1")
    errors = []

    def go(text):
        try:
            send(services, session, "A", text)
        except Refusal as exc:
            errors.append(str(exc))

    threads = [threading.Thread(target=go, args=(f"msg {i}",)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(errors) == 1 and "still answering" in errors[0]
    roles = [u.role.value for u in session.dialogues["A"].utterances]
    assert roles == ["USER", "AGENT"]


def test_a_vote_keeps_the_dialogue_acts_the_scorer_stored_after_a_rating(services):
    """The background scorer annotates a rated side before the vote: the vote's write of both dialogues goes
    on from the stored copies, so the acts stay in the corpus (they were overwritten by the page's copy)."""
    from arena.dialogue import DialogueAct

    session = start_battle(services, "u1")
    for side in ("A", "B"):
        send(services, session, side, f"hello {side}")
    rate(services, session, "A", "satisfied")
    rate(services, session, "B", "frustrated")
    a_id = session.dialogues["A"].dialogue_id
    scored = services.store.get_dialogue(a_id)  # as the scorer stores its acts: the same turns, annotated
    for utterance in scored.utterances:
        utterance.dialogue_acts = [DialogueAct(intent="Request")]
        utterance.acts_annotator = "test/1"
    services.store.save_dialogue(scored)
    vote(services, session, "A", "", "u1")
    stored = services.store.get_dialogue(a_id)
    assert stored.feedback.sentiment == "satisfied" and len(services.store.list_votes()) == 1
    assert [u.acts_annotator for u in stored.utterances] == ["test/1"] * len(stored.utterances)
