"""Alembic migrations of the store's schema (run by `arena.store.engine.Store` on start)."""
