"""The store: every dialogue, score, vote, study and job of the arena, in SQLite or PostgreSQL.

One class, `Store`, whose public methods are the whole interface (each one
transaction); the modules each add one part of it:

- `engine`: `Store` itself (connections, migrations on open, dialogues and their scores, runs, settings),
  the locations it accepts and its errors
- `dialogue_versions`: a conversation under way read with its version and written by compare-and-set
- `run_leases`: which process runs an evaluation run (a lease it renews) and a cancel any process asks
- `votes`: battles and their votes (one per battle, origins, flags) and the pairing claims
- `scoring_queue`: the durable scoring queue (enqueue, claim under a lease, finish, requeue)
- `conversation_starts`: the claim a first message makes before its conversation is created
- `moderation`: hidden and deleted dialogues and the moderation log
- `platform_payments`: claims on the recruiting platform's calls that must happen once (transitions, bonuses)
- `studies`: study files, participants and quota cells
- `limits`: hard limits and the login lockout, counted atomically for every process sharing the store
- `bulk`: whole tables at once, for the Hub mirror's push and restore
- `schema`: the SQLAlchemy tables; `migrations/`: their Alembic revisions
- `statements`: SQL pieces the modules share (time keys, upserts for either backend)
"""

from arena.store.engine import (
    Store,
    StoreError,
    StoreFull,
    describe_location,
    engine_url,
    head_revision,
    is_database_url,
    is_disk_full,
)
from arena.store.limits import Admitted, Cap, CapReached, LoginTry
from arena.store.dialogue_versions import DialogueChanged, VersionedDialogue
from arena.store.scoring_queue import JOB_STATES, MAX_SCORING_ATTEMPTS, ScoringJob
from arena.store.studies import Participant
from arena.store.votes import BattleAlreadyVoted, PairCounts

__all__ = [
    "Admitted",
    "BattleAlreadyVoted",
    "DialogueChanged",
    "VersionedDialogue",
    "Cap",
    "CapReached",
    "LoginTry",
    "JOB_STATES",
    "MAX_SCORING_ATTEMPTS",
    "PairCounts",
    "Participant",
    "ScoringJob",
    "Store",
    "StoreError",
    "StoreFull",
    "describe_location",
    "engine_url",
    "head_revision",
    "is_database_url",
    "is_disk_full",
]
