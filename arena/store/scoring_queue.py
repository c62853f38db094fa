"""The scoring queue: one `scoring_jobs` row per dialogue to score (Alembic revision 0003, see
`arena.store.schema`).

A job is queued, claimed (`running`), then `done` or `failed`; a failed try
is queued again while it has tries left (`MAX_SCORING_ATTEMPTS`). The queue
lives in the database, so a crash loses nothing: a restart puts jobs left
running back in the queue (`requeue_interrupted`) and queues every ended
dialogue never scored (`enqueue_unscored`). These are all the queue's rules;
`evaluators.stored_scoring.QueueScorer` runs the jobs.

`ScoringQueue` is a part of `arena.store.Store`: each method is one
transaction on the store's own engine.
"""

from __future__ import annotations

from typing import Iterable, NamedTuple, Optional

import sqlalchemy as sa

from arena.llm.redaction import redact_optional
from arena.store import schema as t
from arena.store.statements import now_key

JOB_STATES = ("queued", "running", "done", "failed")
MAX_SCORING_ATTEMPTS = 3


class ScoringJob(NamedTuple):
    """A claimed job: the dialogue, whether to score it again from scratch, and which try this is."""
    dialogue_id: str
    force: bool
    attempt: int


class ScoringQueue:
    """The durable scoring queue (a part of `Store`)."""

    def enqueue_scoring(self, dialogue_ids: Iterable[str], *, force: bool = False) -> int:
        """Queue dialogues for scoring (again, if done or failed); returns how many were queued."""
        now, n = now_key(), 0
        j = t.scoring_jobs.c
        with self.write() as conn:
            for dialogue_id in sorted(set(dialogue_ids)):
                row = conn.execute(sa.select(j.state).where(j.dialogue_id == dialogue_id).with_for_update()).first()
                if row is None:
                    conn.execute(sa.insert(t.scoring_jobs).values(
                        dialogue_id=dialogue_id, state="queued", force=int(force), attempts=0,
                        queued_at=now, updated_at=now))
                elif row.state != "queued" or force:
                    conn.execute(sa.update(t.scoring_jobs).where(j.dialogue_id == dialogue_id).values(
                        state="queued", force=1 if force else j.force, attempts=0, error=None, queued_at=now,
                        updated_at=now))
                else:
                    continue
                n += 1
        return n

    def claim_scoring_job(self) -> Optional[ScoringJob]:
        """Take the oldest queued job with tries left and mark it running; None when there is none."""
        j = t.scoring_jobs.c
        with self.write() as conn:
            query = (sa.select(j.dialogue_id, j.force, j.attempts)
                     .where(j.state == "queued", j.attempts < MAX_SCORING_ATTEMPTS)
                     .order_by(j.queued_at, j.dialogue_id).limit(1))
            if conn.dialect.name == "postgresql":
                query = query.with_for_update(skip_locked=True)
            row = conn.execute(query).first()
            if row is None:
                return None
            conn.execute(sa.update(t.scoring_jobs).where(j.dialogue_id == row.dialogue_id)
                         .values(state="running", attempts=j.attempts + 1, updated_at=now_key()))
            return ScoringJob(row.dialogue_id, bool(row.force), row.attempts + 1)

    def finish_scoring_job(self, dialogue_id: str, error: Optional[str] = None, *, retry: bool = False) -> None:
        """Mark a running job done, or failed. A failure with `retry` goes back to the queue while the job
        has tries left (`MAX_SCORING_ATTEMPTS`). A job re-queued meanwhile stays queued."""
        j = t.scoring_jobs.c
        if error is None:
            state = sa.literal("done")
        elif retry:
            state = sa.case((j.attempts < MAX_SCORING_ATTEMPTS, "queued"), else_="failed")
        else:
            state = sa.literal("failed")
        with self.write() as conn:
            conn.execute(sa.update(t.scoring_jobs).where(j.dialogue_id == dialogue_id, j.state == "running")
                         .values(state=state, error=redact_optional(error),
                                 force=0 if error is None else j.force, updated_at=now_key()))

    def requeue_interrupted(self) -> int:
        """Jobs left running by a process that died go back to the queue."""
        j = t.scoring_jobs.c
        with self.write() as conn:
            return conn.execute(sa.update(t.scoring_jobs).where(j.state == "running")
                                .values(state="queued", updated_at=now_key())).rowcount

    def enqueue_unscored(self, metric: str) -> int:
        """Queue every ended dialogue with no value for `metric` that is not queued or running already."""
        d, s, j = t.dialogues.c, t.scores.c, t.scoring_jobs.c
        with self.read() as conn:
            ids = conn.execute(sa.select(d.dialogue_id).where(
                d.ended == 1,
                ~sa.exists().where(s.dialogue_id == d.dialogue_id, s.metric == metric, s.value.is_not(None)),
                ~sa.exists().where(j.dialogue_id == d.dialogue_id, j.state.in_(("queued", "running"))),
            )).scalars().all()
        return self.enqueue_scoring(ids) if ids else 0

    def scoring_counts(self) -> dict[str, int]:
        """How many jobs are in each state (every state named, 0 when none)."""
        j = t.scoring_jobs.c
        with self.read() as conn:
            rows = conn.execute(sa.select(j.state, sa.func.count()).group_by(j.state)).all()
        counts = {state: 0 for state in JOB_STATES}
        counts.update({state: n for state, n in rows})
        return counts

    def failed_jobs(self, limit: int = 50) -> list[tuple[str, str]]:
        """(dialogue id, error) of failed jobs, the latest first."""
        j = t.scoring_jobs.c
        with self.read() as conn:
            rows = conn.execute(sa.select(j.dialogue_id, j.error).where(j.state == "failed")
                                .order_by(j.updated_at.desc()).limit(limit)).all()
        return [(r.dialogue_id, r.error or "") for r in rows]
