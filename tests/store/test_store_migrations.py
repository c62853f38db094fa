"""Schema versions by Alembic: today's SQLite files upgrade in place, later revisions apply on start."""

import shutil
import sqlite3
from datetime import timedelta

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

import arena.store.engine as store_module
from arena.dialogue import Score
from arena.store import Store, StoreError, head_revision
from arena.store.schema import metadata

from store_strategies import battle, rich_dialogue

# The DDL of the store before Alembic (schema "version 1"), copied verbatim from that code.
OLD_SCHEMA_V1 = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS dialogues (
    dialogue_id TEXT PRIMARY KEY,
    crs_id TEXT NOT NULL,
    user_kind TEXT NOT NULL,
    user_id TEXT NOT NULL,
    ended INTEGER NOT NULL,
    sentiment TEXT,
    num_turns INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS dialogues_crs ON dialogues (crs_id, created_at);
CREATE INDEX IF NOT EXISTS dialogues_kind ON dialogues (user_kind, created_at);
CREATE INDEX IF NOT EXISTS dialogues_created ON dialogues (created_at);
CREATE TABLE IF NOT EXISTS scores (
    dialogue_id TEXT NOT NULL REFERENCES dialogues (dialogue_id) ON DELETE CASCADE,
    metric TEXT NOT NULL,
    value REAL,
    scorer TEXT NOT NULL,
    version TEXT NOT NULL,
    model TEXT,
    error TEXT,
    details TEXT NOT NULL,
    scored_at TEXT NOT NULL,
    PRIMARY KEY (dialogue_id, metric)
);
CREATE INDEX IF NOT EXISTS scores_metric ON scores (metric);
CREATE TABLE IF NOT EXISTS votes (
    vote_id TEXT PRIMARY KEY,
    battle_id TEXT NOT NULL,
    dialogue_a TEXT NOT NULL,
    dialogue_b TEXT NOT NULL,
    crs_a TEXT NOT NULL,
    crs_b TEXT NOT NULL,
    choice TEXT NOT NULL,
    user_kind TEXT NOT NULL,
    created_at TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS votes_created ON votes (created_at);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version (version) VALUES (1);
"""


def _old_database(path):
    """A SQLite file as the old code made it, filled the way the old code wrote rows."""
    key = store_module.utc_key
    conn = sqlite3.connect(path)
    conn.executescript(OLD_SCHEMA_V1)
    a, b, vote = battle("kbrd_redial", "barcor_redial")
    solo = rich_dialogue("unicrs_redial", "user-solo")
    for d in (a, b, solo):
        conn.execute("INSERT INTO dialogues VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     (d.dialogue_id, d.crs_id, d.user.kind.value, d.user.id, int(d.ended),
                      d.feedback.sentiment if d.feedback else None, d.num_turns, key(d.created_at),
                      key(d.created_at), d.model_dump_json(exclude={"scores"})))
        for metric, s in d.scores.items():
            conn.execute("INSERT INTO scores VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         (d.dialogue_id, metric, s.value, s.scorer, s.version, s.model, s.error,
                          store_module.json.dumps(s.details), s.timestamp.isoformat()))
    conn.execute("INSERT INTO votes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                 (vote.vote_id, vote.battle_id, vote.dialogue_a, vote.dialogue_b, vote.crs_a, vote.crs_b,
                  vote.choice, vote.user_kind.value, key(vote.timestamp), vote.model_dump_json()))
    conn.execute("INSERT INTO runs VALUES ('run-1', '{\"status\": \"finished\", \"done\": 3}', '2024')")
    conn.execute("INSERT INTO meta VALUES ('pseudonym_salt', 'salt-from-before')")
    conn.commit()
    conn.close()
    return [a, b, solo], vote


def test_sqlite_file_of_the_old_schema_upgrades_in_place_without_loss(tmp_path):
    path = tmp_path / "old.sqlite3"
    dialogues, vote = _old_database(path)
    with Store(path) as store:
        assert store.schema_version() == head_revision()
        for d in dialogues:
            assert store.get_dialogue(d.dialogue_id) == d
        assert sorted(x.dialogue_id for x in store.list_dialogues()) == sorted(d.dialogue_id for d in dialogues)
        assert store.list_votes() == [vote]
        assert store.pair_counts() == {frozenset(("kbrd_redial", "barcor_redial")): 1}
        assert store.get_run("run-1") == {"status": "finished", "done": 3}
        assert store.get_or_create_secret("pseudonym_salt") == "salt-from-before"
        assert store.integrity_check() == "ok"
        # Revision 0008: each vote's user id from its JSON; each dialogue's compact row at the first board read.
        rows = store.board_rows()
        assert [r[7] for r in rows.votes] == [vote.user_id]
        assert sorted(r[0] for r in rows.dialogues) == sorted(d.dialogue_id for d in dialogues)
        store.save_scores(dialogues[2].dialogue_id, {"sr": Score(value=1.0, scorer="sr", version="1")})
    tables = {r[0] for r in sqlite3.connect(path).execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "schema_version" not in tables and {"alembic_version", "battle_claims"} <= tables


def _sqlite_layout(path):
    """Every table's columns, keys, foreign keys and indexes as SQLite reports them."""
    conn = sqlite3.connect(path)
    out = {}
    for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND name != 'alembic_version'"):
        indexes = {}
        for row in conn.execute(f"PRAGMA index_list({table})"):
            name, unique, origin = row[1], row[2], row[3]
            cols = [c[2] for c in conn.execute(f"PRAGMA index_info('{name}')")]
            indexes[name if origin == "c" else origin] = (unique, cols)
        out[table] = {
            "columns": list(conn.execute(f"PRAGMA table_info({table})")),
            "foreign_keys": [r[2:] for r in conn.execute(f"PRAGMA foreign_key_list({table})")],
            "indexes": indexes,
        }
    conn.close()
    return out


def test_first_revision_is_exactly_the_old_schema(tmp_path):
    old, new = tmp_path / "old.sqlite3", tmp_path / "new.sqlite3"
    conn = sqlite3.connect(old)
    conn.executescript(OLD_SCHEMA_V1)
    conn.close()
    engine = store_module.sa.create_engine(store_module.engine_url(new))
    with engine.begin() as connection:
        command.upgrade(store_module.alembic_config(connection), store_module.LEGACY_SCHEMA_REVISION)
    engine.dispose()
    assert _sqlite_layout(new) == _sqlite_layout(old)
    assert list(sqlite3.connect(new).execute("SELECT version FROM schema_version")) == [(1,)]


def _is_key_nullability(diff):
    # PostgreSQL makes primary-key columns NOT NULL whatever the DDL says; SQLite keeps the old DDL's
    # nullable key columns. Both are what the revisions create.
    change = diff[0] if isinstance(diff, list) else diff
    if change[0] != "modify_nullable":
        return False
    return metadata.tables[change[2]].c[change[3]].primary_key


def test_tables_of_the_code_match_the_migrations(store):
    with store.sql_engine().connect() as conn:
        diffs = compare_metadata(MigrationContext.configure(conn), metadata)
    assert [d for d in diffs if not _is_key_nullability(d)] == []


def test_newer_databases_are_refused(db_location):
    with Store(db_location) as store:
        with store.write() as conn:
            conn.exec_driver_sql("UPDATE alembic_version SET version_num = '9999'")
    with pytest.raises(StoreError, match="newer"):
        Store(db_location)


def test_old_sqlite_file_with_unknown_version_is_refused(tmp_path):
    path = tmp_path / "v2.sqlite3"
    conn = sqlite3.connect(path)
    conn.executescript(OLD_SCHEMA_V1.replace("VALUES (1)", "VALUES (2)"))
    conn.close()
    with pytest.raises(StoreError, match="newer"):
        Store(path)


LATER_REVISION = '''
"""A later revision that rebuilds the dialogues table (as SQLite needs for most changes)."""
import sqlalchemy as sa
from alembic import op

revision = "9001"
down_revision = "{head}"
branch_labels = None
depends_on = None


def upgrade():
    recreate = "always" if op.get_context().dialect.name == "sqlite" else "auto"
    with op.batch_alter_table("dialogues", recreate=recreate) as batch:
        batch.add_column(sa.Column("language", sa.Text, nullable=True))


def downgrade():
    with op.batch_alter_table("dialogues") as batch:
        batch.drop_column("language")
'''


def test_a_later_revision_applies_on_start_and_keeps_every_row(db_location, tmp_path, monkeypatch):
    a, b, vote = battle()
    with Store(db_location) as store:
        store.save_battle(a, b, vote)
    migrations = tmp_path / "migrations"
    shutil.copytree(store_module.MIGRATIONS_DIR, migrations, ignore=shutil.ignore_patterns("__pycache__"))
    (migrations / "versions" / "9001_language.py").write_text(LATER_REVISION.replace("{head}", head_revision()))
    monkeypatch.setattr(store_module, "MIGRATIONS_DIR", migrations)
    store_module.migration_scripts.cache_clear()
    try:
        with Store(db_location) as store:
            assert store.schema_version() == "9001"
            with store.sql_engine().connect() as conn:
                assert "language" in {c["name"] for c in store_module.sa.inspect(conn).get_columns("dialogues")}
            # Rebuilding the table must not have fired ON DELETE CASCADE on the scores.
            assert store.get_dialogue(a.dialogue_id) == a and store.list_votes() == [vote]
            assert store.get_dialogue(b.dialogue_id).scores == b.scores
            a.add_user("still writable")
            a.created_at += timedelta(seconds=1)
            store.save_dialogue(a)
            assert store.get_dialogue(a.dialogue_id) == a
    finally:
        store_module.migration_scripts.cache_clear()
