"""The store's tables as SQLAlchemy Core objects (the schema at the newest migration).

Timestamps are kept as sortable UTC text and documents as JSON text, so the
same rows read back identically from SQLite and PostgreSQL. Schema changes
are made by a new Alembic revision in `arena/store/migrations/versions/`, with this
module updated to match (a test compares the two).
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

metadata = sa.MetaData()

# SQLite's REAL is an 8-byte float, PostgreSQL's only 4 bytes: use DOUBLE PRECISION there.
FLOAT8: sa.types.TypeEngine[float] = sa.REAL().with_variant(postgresql.DOUBLE_PRECISION(), "postgresql")

meta = sa.Table(
    "meta", metadata,
    sa.Column("key", sa.Text, primary_key=True, nullable=True),
    sa.Column("value", sa.Text, nullable=False),
)

dialogues = sa.Table(
    "dialogues", metadata,
    sa.Column("dialogue_id", sa.Text, primary_key=True, nullable=True),
    sa.Column("crs_id", sa.Text, nullable=False),
    sa.Column("user_kind", sa.Text, nullable=False),
    sa.Column("user_id", sa.Text, nullable=False),
    sa.Column("ended", sa.Integer, nullable=False),
    sa.Column("sentiment", sa.Text),
    sa.Column("num_turns", sa.Integer, nullable=False),
    sa.Column("created_at", sa.Text, nullable=False),
    sa.Column("updated_at", sa.Text, nullable=False),
    sa.Column("data", sa.Text, nullable=False),
    # Bumped by every write; a participant's step writes only over the version it read (revision 0006).
    sa.Column("version", sa.Integer, nullable=False, server_default="1"),
    sa.Index("dialogues_crs", "crs_id", "created_at"),
    sa.Index("dialogues_kind", "user_kind", "created_at"),
    sa.Index("dialogues_created", "created_at"),
)

scores = sa.Table(
    "scores", metadata,
    sa.Column("dialogue_id", sa.Text, sa.ForeignKey("dialogues.dialogue_id", ondelete="CASCADE"),
              primary_key=True),
    sa.Column("metric", sa.Text, primary_key=True),
    sa.Column("value", FLOAT8),
    sa.Column("scorer", sa.Text, nullable=False),
    sa.Column("version", sa.Text, nullable=False),
    sa.Column("model", sa.Text),
    sa.Column("error", sa.Text),
    sa.Column("details", sa.Text, nullable=False),
    sa.Column("scored_at", sa.Text, nullable=False),
    sa.Index("scores_metric", "metric"),
)

votes = sa.Table(
    "votes",
    metadata,
    sa.Column("vote_id", sa.Text, primary_key=True, nullable=True),
    sa.Column("battle_id", sa.Text, nullable=False),
    sa.Column("dialogue_a", sa.Text, nullable=False),
    sa.Column("dialogue_b", sa.Text, nullable=False),
    sa.Column("crs_a", sa.Text, nullable=False),
    sa.Column("crs_b", sa.Text, nullable=False),
    sa.Column("choice", sa.Text, nullable=False),
    sa.Column("user_kind", sa.Text, nullable=False),
    sa.Column("created_at", sa.Text, nullable=False),
    sa.Column("data", sa.Text, nullable=False),
    # The crowdsourced study it was cast in; NULL: the open arena (revision 0004).
    sa.Column("study", sa.Text),
    sa.Column("user_id", sa.Text),  # who voted, as in `data` (revision 0008)
    # 1 for the participant's first vote, 2 for the next...; NULL for a pooled id (revision 0014,
    # arena/store/session_order.py).
    sa.Column("session_order", sa.Integer),
    sa.Index("votes_created", "created_at"),
    sa.Index("votes_session_order", "user_id", "session_order", unique=True),
)

# What a leaderboard needs of a dialogue, one compact row each (revision 0008; arena/store/board_rows.py).
board_dialogues = sa.Table(
    "board_dialogues", metadata,
    sa.Column("dialogue_id", sa.Text, sa.ForeignKey("dialogues.dialogue_id", ondelete="CASCADE"),
              primary_key=True),
    sa.Column("crs_id", sa.Text, nullable=False),
    sa.Column("user_kind", sa.Text, nullable=False),
    sa.Column("user_id", sa.Text, nullable=False),
    sa.Column("crowd", sa.Text),  # the study's id; NULL: the open arena
    sa.Column("in_battle", sa.Integer, nullable=False),
    sa.Column("failed", sa.Integer, nullable=False),  # a system failed a turn
    sa.Column("num_turns", sa.Integer, nullable=False),  # user turns
    sa.Column("sentiment", sa.Text),
    sa.Column("label_flagged", sa.Integer, nullable=False),
    sa.Column("label_at", sa.Text),  # when the label was given (the rater test orders labels by it)
    sa.Column("reply_length", FLOAT8, nullable=False),  # mean characters per system reply
    sa.Column("items_shown", FLOAT8, nullable=False),  # mean items shown per system reply
    # Aspect ratings given (of the dialogue and of its replies; revision 0009): only a dialogue with some is
    # read whole for the metric-vs-rating tables beside the boards.
    sa.Column("aspect_ratings", sa.Integer, nullable=False, server_default="0"),
    # The label's order within the participant's session (a verdict or aspect ratings; revision 0014).
    sa.Column("label_order", sa.Integer),
    sa.Index("board_dialogues_label_order", "user_id", "label_order", unique=True),
)

runs = sa.Table(
    "runs", metadata,
    sa.Column("run_id", sa.Text, primary_key=True, nullable=True),
    sa.Column("state", sa.Text, nullable=False),
    sa.Column("updated_at", sa.Text, nullable=False),
    # The process running the run and until when its lease holds; a cancel asked by any process (0006).
    sa.Column("owner", sa.Text),
    sa.Column("lease_until", sa.Text),
    sa.Column("cancel_requested", sa.Integer, nullable=False, server_default="0"),
)

# Battles handed out but not yet stored, shared by every app process so that
# replicas behind one load balancer do not all send people to the same pair.
battle_claims = sa.Table(
    "battle_claims", metadata,
    sa.Column("claim_id", sa.Text, primary_key=True),
    sa.Column("crs_low", sa.Text, nullable=False),
    sa.Column("crs_high", sa.Text, nullable=False),
    sa.Column("user_kind", sa.Text, nullable=False),
    sa.Column("expires_at", sa.Text, nullable=False),
    sa.Index("battle_claims_expires", "expires_at"),
)

# -- public deployment (revision 0003; queries in arena/store/votes.py and moderation.py) ------------------

# One row per dialogue to score; survives a crash, so a restart resumes the queue.
scoring_jobs = sa.Table(
    "scoring_jobs", metadata,
    sa.Column("dialogue_id", sa.Text, primary_key=True),
    sa.Column("state", sa.Text, nullable=False),  # queued | running | done | failed
    sa.Column("force", sa.Integer, nullable=False, server_default="0"),
    sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
    sa.Column("error", sa.Text),
    sa.Column("queued_at", sa.Text, nullable=False),
    sa.Column("updated_at", sa.Text, nullable=False),
    # The process scoring a running job and until when its lease holds (revision 0006).
    sa.Column("owner", sa.Text),
    sa.Column("lease_until", sa.Text),
    sa.Index("scoring_jobs_state", "state", "queued_at"),
)

# Where a vote came from (keyed hashes of the session and the IP address, never raw values);
# one row per battle, which is what makes a second vote for a battle impossible.
vote_origins = sa.Table(
    "vote_origins", metadata,
    sa.Column("vote_id", sa.Text, primary_key=True),
    sa.Column("battle_id", sa.Text, nullable=False, unique=True),
    sa.Column("user_key", sa.Text, nullable=False),
    sa.Column("ip_key", sa.Text, nullable=False),
    sa.Column("started_at", sa.Text),
    sa.Column("cast_at", sa.Text, nullable=False),
    sa.Index("vote_origins_ip", "ip_key", "cast_at"),
    sa.Index("vote_origins_user", "user_key", "cast_at"),
)

# Votes that look automated: kept and exported, left out of the leaderboard by default.
vote_flags = sa.Table(
    "vote_flags", metadata,
    sa.Column("vote_id", sa.Text, primary_key=True),
    sa.Column("reason", sa.Text, nullable=False),
    sa.Column("flagged_at", sa.Text, nullable=False),
)

hidden_dialogues = sa.Table(
    "hidden_dialogues", metadata,
    sa.Column("dialogue_id", sa.Text, primary_key=True),
    sa.Column("reason", sa.Text, nullable=False),
    sa.Column("actor", sa.Text, nullable=False),
    sa.Column("hidden_at", sa.Text, nullable=False),
)

moderation_log = sa.Table(
    "moderation_log", metadata,
    sa.Column("entry_id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("action", sa.Text, nullable=False),
    sa.Column("target", sa.Text, nullable=False),
    sa.Column("actor", sa.Text, nullable=False),
    sa.Column("reason", sa.Text, nullable=False),
    sa.Column("detail", sa.Text, nullable=False),
    sa.Column("created_at", sa.Text, nullable=False),
)

# -- crowdsourced studies (revision 0004; queries in arena/store/studies.py) -----------------

# Every save of a study file is a new version; dialogues and votes record the version they ran under.
study_files = sa.Table(
    "study_files", metadata,
    sa.Column("study_id", sa.Text, primary_key=True),
    sa.Column("version", sa.Integer, primary_key=True),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("saved_by", sa.Text, nullable=False),
    sa.Column("saved_at", sa.Text, nullable=False),
)

# One row per worker and study (the worker id only as a salted pseudonym): where they are in the flow.
study_participants = sa.Table(
    "study_participants", metadata,
    sa.Column("study_id", sa.Text, primary_key=True),
    sa.Column("pseudonym", sa.Text, primary_key=True),
    sa.Column("study_version", sa.Integer, nullable=False),
    sa.Column("status", sa.Text, nullable=False),  # active | completed
    sa.Column("data", sa.Text, nullable=False),  # JSON: step, served cells, task times, flags, ...
    sa.Column("started_at", sa.Text, nullable=False),
    sa.Column("updated_at", sa.Text, nullable=False),
    sa.Column("completed_at", sa.Text),
)

# A quota cell held by a worker's task (reserved, expiring) or filled by a finished task (done).
study_claims = sa.Table(
    "study_claims",
    metadata,
    sa.Column("claim_id", sa.Text, primary_key=True),
    sa.Column("study_id", sa.Text, nullable=False),
    sa.Column("cell", sa.Text, nullable=False),
    sa.Column("pseudonym", sa.Text, nullable=False),
    # reserved | done | released (a flagged worker's, not counted)
    sa.Column("state", sa.Text, nullable=False),
    sa.Column("expires_at", sa.Text, nullable=False),
    sa.Index("study_claims_cell", "study_id", "cell", "state"),
)

# Hard limits and lockouts counted in the store, so every app process sharing it enforces the same
# numbers (arena/store/limits.py). One row per limited key: admissions of that key lock this row, so
# concurrent requests are counted one after another; a login key also keeps its failures and lockout.
limit_keys = sa.Table(
    "limit_keys", metadata,
    sa.Column("scope", sa.Text, primary_key=True),
    sa.Column("key", sa.Text, primary_key=True),
    sa.Column("failures", sa.Integer, nullable=False),
    sa.Column("last_at", FLOAT8, nullable=False),  # seconds since the epoch
    sa.Column("blocked_until", FLOAT8, nullable=False),
)

# One row per admitted action of a limited key, for a moving window; rows older than the window go.
limit_hits = sa.Table(
    "limit_hits", metadata,
    sa.Column("hit_id", sa.Text, primary_key=True),
    sa.Column("scope", sa.Text, nullable=False),
    sa.Column("key", sa.Text, nullable=False),
    sa.Column("at", FLOAT8, nullable=False),
    sa.Index("limit_hits_key", "scope", "key", "at"),
)

# Researcher-only: never exported or mirrored (arena.corpus.shards lists what is), deleted when a study
# closes.
study_platform_ids = sa.Table(
    "study_platform_ids", metadata,
    sa.Column("study_id", sa.Text, primary_key=True),
    sa.Column("pseudonym", sa.Text, primary_key=True),
    sa.Column("worker_id", sa.Text, nullable=False),
    sa.Column("session_id", sa.Text, nullable=False),
)

# Researcher logins (arena/store/researcher_logins.py): never exported or mirrored. The token itself is only
# in the researcher's cookie; the row keeps its SHA-256.
researcher_logins = sa.Table(
    "researcher_logins", metadata,
    sa.Column("digest", sa.Text, primary_key=True),
    sa.Column("username", sa.Text, nullable=False),
    sa.Column("expires_at", FLOAT8, nullable=False),  # seconds since the epoch
)

# A conversation's first message claims its key (a digest of the participant and the message's id) before
# the conversation is created (arena/store/conversation_starts.py; revision 0011): the key is the table's
# primary key, so two processes starting the same conversation at once store it once. Rows expire.
conversation_starts = sa.Table(
    "conversation_starts", metadata,
    sa.Column("start_key", sa.Text, primary_key=True),
    sa.Column("dialogue_id", sa.Text, nullable=False),
    sa.Column("expires_at", FLOAT8, nullable=False),  # seconds since the epoch
    sa.Index("conversation_starts_dialogue", "dialogue_id"),
    sa.Index("conversation_starts_expires", "expires_at"),
)

# -- payments and reviews on the recruiting platform (revision 0013; arena/store/platform_payments.py) ----
# Each call to the platform that changes a submission or pays money is claimed here first: the key is the
# primary key, so of two processes (or two clicks) only one sends it, and its outcome is kept.

# One row per submission transition (approve, reject, ask to return).
platform_transitions = sa.Table(
    "platform_transitions", metadata,
    sa.Column("submission_id", sa.Text, primary_key=True),
    sa.Column("action", sa.Text, primary_key=True),  # APPROVE, REJECT, RETURN
    sa.Column("study_id", sa.Text, nullable=False),
    sa.Column("state", sa.Text, nullable=False),  # sending, done, failed
    sa.Column("claim_id", sa.Text, nullable=False),
    sa.Column("detail", sa.Text, nullable=False),  # JSON: category, message, reasons
    sa.Column("answer", sa.Text, nullable=False),  # the platform's status afterwards, or the error line
    sa.Column("actor", sa.Text, nullable=False),
    sa.Column("created_at", sa.Text, nullable=False),
    sa.Column("updated_at", sa.Text, nullable=False),
    sa.Index("platform_transitions_study", "study_id"),
)

# One row per bonus payment: the batch key is a digest of its lines.
platform_bonuses = sa.Table(
    "platform_bonuses", metadata,
    sa.Column("study_id", sa.Text, primary_key=True),
    sa.Column("batch_key", sa.Text, primary_key=True),
    sa.Column("state", sa.Text, nullable=False),  # claimed, created, paid, failed, unknown
    sa.Column("claim_id", sa.Text, nullable=False),
    sa.Column("workers", sa.Integer, nullable=False),
    sa.Column("total", sa.Text, nullable=False),  # a decimal in major units
    sa.Column("bonus_id", sa.Text, nullable=False),  # the platform's id once created
    sa.Column("answer", sa.Text, nullable=False),
    sa.Column("actor", sa.Text, nullable=False),
    sa.Column("created_at", sa.Text, nullable=False),
    sa.Column("updated_at", sa.Text, nullable=False),
)

# Which worker a bonus payment pays (a digest of the platform id): a worker is in one live payment at most.
platform_bonus_workers = sa.Table(
    "platform_bonus_workers", metadata,
    sa.Column("study_id", sa.Text, primary_key=True),
    sa.Column("worker_key", sa.Text, primary_key=True),
    sa.Column("batch_key", sa.Text, nullable=False),
    sa.Column("amount", sa.Text, nullable=False),
)

# An arena study's study on a recruiting platform (arena/store/platform_studies.py; revision 0012): its id
# there, its status and place count as last read, and when; the line of a place push that failed.
# Researcher-only: never exported or mirrored.
platform_studies = sa.Table(
    "platform_studies", metadata,
    sa.Column("study_id", sa.Text, primary_key=True),
    sa.Column("platform", sa.Text, nullable=False),  # prolific
    sa.Column("platform_study_id", sa.Text, nullable=False),
    sa.Column("status", sa.Text, nullable=False),  # the platform's word: UNPUBLISHED, ACTIVE, PAUSED, ...
    sa.Column("places", sa.Integer, nullable=False),  # the platform's total_available_places
    sa.Column("synced_at", sa.Text, nullable=False),
    # Why the arena's place count last failed to reach the platform (revision 0015); None: in step.
    sa.Column("places_line", sa.Text),
    # When the place count in `places` was claimed for a push the platform has not yet confirmed (revision
    # 0016); None: confirmed, or never pushed. An old one is a push whose sender died: it is sent again.
    sa.Column("places_claimed_at", sa.Text),
    sa.Index("platform_studies_platform_id", "platform_study_id", unique=True),
)
