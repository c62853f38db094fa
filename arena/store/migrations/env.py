"""Alembic environment: run on a connection handed over by the store, or on ARENA_DB from the CLI."""

from __future__ import annotations


from alembic import context
from sqlalchemy import create_engine

from arena.store.schema import metadata

config = context.config
connection = config.attributes.get("connection")

if connection is not None:
    # The store has opened a transaction (holding its migration lock) already.
    context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()
else:  # `alembic -c arena/store/migrations/alembic.ini ...` by hand
    from arena.runtime.config import Settings
    from arena.store import engine_url

    engine = create_engine(engine_url(Settings.from_env().db_path))
    with engine.begin() as conn:
        context.configure(connection=conn, target_metadata=metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
