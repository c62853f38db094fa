"""The claim a conversation's first message makes in the store (arena.store.conversation_starts), on SQLite
and PostgreSQL: one holder per start, a bounded hold, and a start free again once its conversation is over,
deleted or refused."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from arena.dialogue import Dialogue, Feedback, UserInfo, UserKind

HOLD = 100.0


def chat(user: str = "p-1") -> Dialogue:
    return Dialogue(crs_id="alpha", user=UserInfo(kind=UserKind.HUMAN, id=user), metadata={"source": "chat"})


def test_the_first_claim_holds_the_start_and_a_second_is_told_whose_it_is(store):
    assert store.claim_conversation_start("k", "d-1", hold_s=HOLD) == "d-1"
    assert store.claim_conversation_start("k", "d-2", hold_s=HOLD) == "d-1"
    assert store.claim_conversation_start("k", "d-1", hold_s=HOLD) == "d-1"  # its own claim again
    assert store.claim_conversation_start("other", "d-2", hold_s=HOLD) == "d-2"
    assert store.conversation_start_holder("k") == "d-1"


def test_claims_made_at_once_have_one_winner(store):
    with ThreadPoolExecutor(8) as pool:
        holders = list(pool.map(lambda n: store.claim_conversation_start("same", f"d-{n}", hold_s=HOLD),
                                range(16)))
    assert len(set(holders)) == 1 and holders[0] in {f"d-{n}" for n in range(16)}


def test_an_expired_claim_is_taken_over_and_pruned(store):
    store.claim_conversation_start("k", "d-1", hold_s=10, now=1_000.0)
    assert store.claim_conversation_start("k", "d-2", hold_s=10, now=1_005.0) == "d-1"
    assert store.claim_conversation_start("k", "d-2", hold_s=10, now=1_011.0) == "d-2"
    assert store.conversation_start_holder("k", now=1_012.0) == "d-2"
    assert store.conversation_start_holder("k", now=1_022.0) is None


def test_a_start_whose_conversation_is_over_is_free_for_a_new_one(store):
    done = chat()
    store.claim_conversation_start("k", done.dialogue_id, hold_s=HOLD)
    store.save_dialogue(done)
    assert store.claim_conversation_start("k", "d-new", hold_s=HOLD) == done.dialogue_id  # under way
    done.feedback = Feedback(sentiment="satisfied")
    done.end("feedback")
    store.save_dialogue(done)
    assert store.claim_conversation_start("k", "d-new", hold_s=HOLD) == "d-new"


def test_a_released_or_deleted_conversation_gives_its_start_back(store):
    store.claim_conversation_start("k", "d-1", hold_s=HOLD)
    store.release_conversation_start("k", "d-other")  # not its claim: kept
    assert store.conversation_start_holder("k") == "d-1"
    store.release_conversation_start("k", "d-1")
    assert store.conversation_start_holder("k") is None

    stored = chat()
    store.save_dialogue(stored)
    store.claim_conversation_start("k2", stored.dialogue_id, hold_s=HOLD)
    store.delete_dialogues([stored.dialogue_id], actor="participant", reason="your data")
    assert store.conversation_start_holder("k2") is None
