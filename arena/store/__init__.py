"""The store: every dialogue, score, vote, study and job of the arena, in SQLite or PostgreSQL.

- `engine`: the `Store` class (connections, migrations on open, dialogues, scores, runs, meta)
- `schema`: the SQLAlchemy tables; `migrations/`: their Alembic revisions
- `safety`: the scoring queue, one vote per battle and moderation
- `studies`: study files, participants and quota cells
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

__all__ = ["Store", "StoreError", "StoreFull", "describe_location", "engine_url", "head_revision",
           "is_database_url", "is_disk_full"]
