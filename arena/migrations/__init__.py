"""Alembic migrations of the store's schema (run by `arena.store.Store` on start)."""
