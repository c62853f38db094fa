"""The one lease module (`arena.store.jobs`): a scoring job cancelled from another process, on both stores."""

from arena.dialogue import Score
from arena.store import Store
from arena.store.scoring_queue import CANCELLED


def test_a_scoring_job_cancelled_from_another_process_is_neither_stored_nor_claimed_again(db_location):
    owner, other = Store(db_location), Store(db_location)
    try:
        owner.enqueue_scoring(["d-1", "d-2"])
        job = owner.claim_scoring_job()
        assert job is not None and owner.holds_scoring_job(job.dialogue_id)
        assert other.cancel_scoring(job.dialogue_id)  # asked on another replica
        assert not owner.holds_scoring_job(job.dialogue_id)  # the owner's next check before an LLM call
        score = Score(value=1.0, scorer="test", version="1")
        assert not owner.store_scoring_result(job.dialogue_id, {"sr": score})  # its late result is dropped
        assert owner.board_scores() == []
        assert not owner.finish_scoring_job(job.dialogue_id)
        assert other.cancel_scoring("d-2")  # a queued job is cancelled the same way
        assert owner.claim_scoring_job() is None and other.claim_scoring_job() is None
        assert dict(owner.failed_jobs()) == {"d-1": CANCELLED, "d-2": CANCELLED}
        assert not other.cancel_scoring("d-1") and not other.cancel_scoring("no-such-dialogue")
        assert owner.enqueue_scoring(["d-1"]) == 1  # queued again, it runs as any job
        assert owner.claim_scoring_job().dialogue_id == "d-1"
    finally:
        owner.close()
        other.close()
