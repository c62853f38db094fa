"""The link from an arena study to its study on a recruiting platform (Prolific): the platform's study id,
its status as last read, its place count and when they were read (table of Alembic revision 0012).

One arena study has at most one platform study. The row is written when the study is created on the
platform and each time the arena reads or changes it there (publish, pause, stop, places, a webhook);
the status is the platform's own word (UNPUBLISHED, ACTIVE, PAUSED, AWAITING REVIEW, COMPLETED, ...).

The arena also pushes its place count to the platform on its own (`webapp.sessions.place_sync`), from
every replica. `claim_places_push` is the compare-and-set that lets one replica send each change: it moves
`places` from the count it read to the new one only if no other replica moved it first, and
`undo_places_push` puts it back (with the line saying why, `places_line`, revision 0015) when the
platform refused or could not be reached, so the next tick tries again.
Researcher-only, like the workers' platform ids: never exported or mirrored.

`PlatformStudies` is a part of `arena.store.Store`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import sqlalchemy as sa

from arena.store import schema as t
from arena.store.part import StorePart
from arena.store.statements import insert_for, now_key


@dataclass(frozen=True)
class PlatformLink:
    """An arena study's study on the platform, as last read."""

    study_id: str
    platform: str
    platform_study_id: str
    status: str
    places: int
    synced_at: str
    places_line: Optional[str] = None  # why the arena's place count last failed to reach the platform


def _link(row: Any) -> PlatformLink:
    return PlatformLink(study_id=row.study_id, platform=row.platform, platform_study_id=row.platform_study_id,
                        status=row.status, places=row.places, synced_at=row.synced_at,
                        places_line=row.places_line)


class PlatformStudies(StorePart):
    """Links from arena studies to platform studies (a part of `Store`)."""

    def link_platform_study(self, study_id: str, platform_study_id: str, status: str, places: int,
                            platform: str = "prolific") -> PlatformLink:
        """Record that `study_id` runs as `platform_study_id` on the platform (replacing any older link:
        a study the researcher created again)."""
        now = now_key()
        with self.write() as conn:
            conn.execute(insert_for(conn, t.platform_studies).values(
                study_id=study_id, platform=platform, platform_study_id=platform_study_id, status=status,
                places=places, synced_at=now,
            ).on_conflict_do_update(index_elements=["study_id"], set_={
                "platform": platform, "platform_study_id": platform_study_id, "status": status,
                "places": places, "synced_at": now, "places_line": None}))
        return PlatformLink(study_id, platform, platform_study_id, status, places, now)

    def platform_link(self, study_id: str) -> Optional[PlatformLink]:
        """The study's platform study, or None when it has none."""
        s = t.platform_studies.c
        with self.read() as conn:
            row = conn.execute(sa.select(t.platform_studies).where(s.study_id == study_id)).first()
        return _link(row) if row is not None else None

    def platform_link_by_platform_id(self, platform_study_id: str) -> Optional[PlatformLink]:
        """The link of the platform's study `platform_study_id` (what a webhook names), or None."""
        s = t.platform_studies.c
        with self.read() as conn:
            row = conn.execute(sa.select(t.platform_studies)
                               .where(s.platform_study_id == platform_study_id)).first()
        return _link(row) if row is not None else None

    def note_platform_study(self, study_id: str, status: str, places: int) -> Optional[PlatformLink]:
        """The platform's status and place count as just read (or set); None when the study has no link."""
        s = t.platform_studies.c
        with self.write() as conn:
            done = conn.execute(sa.update(t.platform_studies).where(s.study_id == study_id)
                                .values(status=status, places=places, synced_at=now_key()))
        return self.platform_link(study_id) if done.rowcount else None

    def platform_links(self) -> list[PlatformLink]:
        """Every arena study's platform study, by arena study id."""
        with self.read() as conn:
            rows = conn.execute(sa.select(t.platform_studies).order_by(t.platform_studies.c.study_id)).all()
        return [_link(row) for row in rows]

    def claim_places_push(self, study_id: str, seen: int, places: int) -> bool:
        """Take the push of `places` to the platform: True when the stored count was still `seen` and is
        now `places` (this caller sends it); False when another caller changed it first (it sends)."""
        s = t.platform_studies.c
        with self.write() as conn:
            done = conn.execute(sa.update(t.platform_studies)
                                .where(s.study_id == study_id, s.places == seen)
                                .values(places=places))
        return bool(done.rowcount)

    def undo_places_push(self, study_id: str, claimed: int, back_to: int, line: str) -> None:
        """A claimed push that did not reach the platform: the count goes back to `back_to` (unless it was
        changed since) and `line` says why."""
        s = t.platform_studies.c
        with self.write() as conn:
            conn.execute(sa.update(t.platform_studies).where(s.study_id == study_id, s.places == claimed)
                         .values(places=back_to))
            conn.execute(sa.update(t.platform_studies).where(s.study_id == study_id)
                         .values(places_line=line))

    def note_places_line(self, study_id: str, line: Optional[str]) -> None:
        """Why the arena's places are not on the platform (None: they are, or nothing needs sending)."""
        s = t.platform_studies.c
        with self.write() as conn:
            conn.execute(sa.update(t.platform_studies)
                         .where(s.study_id == study_id, s.places_line.is_distinct_from(line))
                         .values(places_line=line))
