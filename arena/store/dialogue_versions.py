"""Dialogue versions: a conversation under way written by compare-and-set, so that several app processes
(or a restarted one) never lose a turn, bring back a deleted conversation or rewrite a finished one.

Every write of a dialogue row bumps its `version` (Alembic revision 0006). A participant's step reads the
stored copy and its version first (`current_dialogue`), works on that copy, and writes with
`save_dialogue_checked`, which succeeds only while the row is still at the version read. It raises
`DialogueChanged` when another process wrote the row meanwhile, deleted it, labelled it, or stored a
vote for its battle: the caller then shows the participant what the store holds. Writes that are not
a participant's step (scores, runs, imports, moderation) keep using `save_dialogue`.

`DialogueVersions` is a part of `arena.store.Store`.
"""

from __future__ import annotations

from typing import Any, Iterable, NamedTuple, Optional

import sqlalchemy as sa

from arena.dialogue import Dialogue
from arena.store import schema as t
from arena.store.part import StorePart
from arena.store.statements import insert_for


class VersionedDialogue(NamedTuple):
    """A stored dialogue (with its scores) and the version it was read at."""
    dialogue: Dialogue
    version: int


class DialogueChanged(RuntimeError):
    """A checked write found the dialogue changed since it was read (written, deleted, labelled or voted
    elsewhere); nothing of the write was kept."""

    def __init__(self, dialogue_id: str, why: str):
        super().__init__(f"dialogue {dialogue_id} {why}")
        self.dialogue_id = dialogue_id
        self.why = why


_VERSION_LOCKED = (sa.select(t.dialogues.c.version, t.dialogues.c.sentiment)
                   .where(t.dialogues.c.dialogue_id == sa.bindparam("id")).with_for_update())
_VOTED = sa.select(sa.exists().where(sa.or_(t.votes.c.dialogue_a == sa.bindparam("id"),
                                            t.votes.c.dialogue_b == sa.bindparam("id"))))


def _inserted(result: Any) -> bool:
    """Whether an INSERT ... ON CONFLICT DO NOTHING ... RETURNING wrote its row. Its returned row says so
    on both backends; the row count does not (PostgreSQL's driver reports -1 for it here)."""
    return result.first() is not None


class DialogueVersions(StorePart):
    """Versioned reads and compare-and-set writes of one dialogue (a part of `Store`)."""

    def current_dialogue(self, dialogue_id: str) -> Optional[VersionedDialogue]:
        """The stored dialogue and its version, read together; None when it is not stored (or deleted)."""
        d = t.dialogues.c
        with self.read() as conn:
            row = conn.execute(sa.select(d.data, d.version).where(d.dialogue_id == dialogue_id)).first()
            if row is None:
                return None
            dialogue = Dialogue.model_validate_json(row.data)
            dialogue.scores = self._scores_for(conn, [dialogue_id]).get(dialogue_id, {})
            return VersionedDialogue(dialogue, int(row.version))

    def save_dialogue_checked(
        self, dialogue: Dialogue, expected_version: int, *, finished: bool = False
    ) -> int:
        """Write `dialogue` only if its row is still at `expected_version` (0: not stored yet), not
        labelled and not part of a voted battle (with `finished`, a labelled or voted one may be written:
        aspect ratings given after the label); returns the new version. Raises `DialogueChanged`."""
        with self.write() as conn:
            if expected_version == 0:
                # A first write inserts or fails: two processes starting the same row cannot both win.
                if not _inserted(conn.execute(insert_for(conn, t.dialogues).values(
                        **self._dialogue_row(dialogue), version=1).on_conflict_do_nothing(
                            index_elements=["dialogue_id"]).returning(t.dialogues.c.dialogue_id))):
                    raise DialogueChanged(dialogue.dialogue_id, "was stored meanwhile by another step")
                self._put_board_row(conn, dialogue)
                self._put_scores(conn, dialogue.dialogue_id, dialogue.scores)
                return 1
            row = conn.execute(_VERSION_LOCKED, {"id": dialogue.dialogue_id}).first()
            if row is None:
                raise DialogueChanged(dialogue.dialogue_id, "was deleted")
            if int(row.version) != expected_version:
                raise DialogueChanged(dialogue.dialogue_id,
                                      f"is at version {row.version}, not {expected_version}")
            if not finished and row.sentiment is not None:
                raise DialogueChanged(dialogue.dialogue_id, "is labelled already")
            if not finished and conn.execute(_VOTED, {"id": dialogue.dialogue_id}).scalar():
                raise DialogueChanged(dialogue.dialogue_id, "belongs to a voted battle")
            self._put_dialogue(conn, dialogue)
            return expected_version + 1

    def create_dialogues_once(self, dialogues: Iterable[Dialogue]) -> int:
        """Store new dialogues, in one transaction, leaving any already stored under the same id as it is
        (a task handed out twice at once, by two processes, makes its conversations once); returns how
        many were new."""
        created = 0
        with self.write() as conn:
            for dialogue in sorted(dialogues, key=lambda d: d.dialogue_id):
                row = {**self._dialogue_row(dialogue), "version": 1}
                if _inserted(conn.execute(insert_for(conn, t.dialogues).values(**row)
                                                .on_conflict_do_nothing(index_elements=["dialogue_id"])
                                                .returning(t.dialogues.c.dialogue_id))):
                    self._put_board_row(conn, dialogue)
                    self._put_scores(conn, dialogue.dialogue_id, dialogue.scores)
                    created += 1
        return created

    @staticmethod
    def _check_versions(conn: Any, expected: Iterable[tuple[str, int]]) -> None:
        """Inside a write: each dialogue still stored at its expected version (rows locked in id order),
        else `DialogueChanged`."""
        for dialogue_id, version in sorted(expected):
            row = conn.execute(_VERSION_LOCKED, {"id": dialogue_id}).first()
            if row is None:
                raise DialogueChanged(dialogue_id, "was deleted")
            if int(row.version) != version:
                raise DialogueChanged(dialogue_id, f"is at version {row.version}, not {version}")

