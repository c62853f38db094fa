"""The link from an arena study to its study on a recruiting platform (Prolific): the platform's study id,
its status as last read, its place count and when they were read (table of Alembic revision 0012).

One arena study has at most one platform study. The row is written when the study is created on the
platform and each time the arena reads or changes it there (publish, pause, stop, places, a webhook);
the status is the platform's own word (UNPUBLISHED, ACTIVE, PAUSED, AWAITING REVIEW, COMPLETED, ...).

The arena also pushes its place count to the platform on its own (`webapp.sessions.place_sync`), from
every replica. `claim_places_push` is the compare-and-set that lets one replica send each change: it moves
`places` from the count it read to the new one only if no other replica moved it first, and
`undo_places_push` puts it back (with the line saying why, `places_line`, revision 0015) when the
platform refused or could not be reached, so the next tick tries again. A claim records when it was taken
(`places_claimed_at`, revision 0016) until the platform confirms the count (`note_platform_study` with
`places_sent`): a replica that died between its claim and its call leaves it unconfirmed, and once it is
older than the lease, `retake_places_push` lets one other replica take it over and send the count again
(the platform's call sets a total, so a second send of the same count changes nothing).
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
    places_claimed_at: Optional[str] = None  # when `places` was claimed for a push not yet confirmed


def _link(row: Any) -> PlatformLink:
    return PlatformLink(study_id=row.study_id, platform=row.platform, platform_study_id=row.platform_study_id,
                        status=row.status, places=row.places, synced_at=row.synced_at,
                        places_line=row.places_line, places_claimed_at=row.places_claimed_at)


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
                "places": places, "synced_at": now, "places_line": None, "places_claimed_at": None}))
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

    def note_platform_study(self, study_id: str, status: str, places: int, *,
                            places_sent: bool = False) -> Optional[PlatformLink]:
        """The platform's status and place count as just read (or set); None when the study has no link.
        `places_sent`: the platform answered a call that set `places`, which confirms any claim of it."""
        s = t.platform_studies.c
        values: dict[str, Any] = {"status": status, "places": places, "synced_at": now_key()}
        if places_sent:
            values["places_claimed_at"] = None
        with self.write() as conn:
            done = conn.execute(sa.update(t.platform_studies).where(s.study_id == study_id).values(**values))
        return self.platform_link(study_id) if done.rowcount else None

    def platform_links(self) -> list[PlatformLink]:
        """Every arena study's platform study, by arena study id."""
        with self.read() as conn:
            rows = conn.execute(sa.select(t.platform_studies).order_by(t.platform_studies.c.study_id)).all()
        return [_link(row) for row in rows]

    def claim_places_push(self, study_id: str, seen: int, places: int) -> bool:
        """Take the push of `places` to the platform: True when the stored count was still `seen`, with no
        claim unconfirmed, and is now `places`, claimed now (this caller sends it); False when another
        caller changed it or holds a claim (it sends)."""
        s = t.platform_studies.c
        with self.write() as conn:
            done = conn.execute(sa.update(t.platform_studies)
                                .where(s.study_id == study_id, s.places == seen,
                                       s.places_claimed_at.is_(None))
                                .values(places=places, places_claimed_at=now_key()))
        return bool(done.rowcount)

    def retake_places_push(self, study_id: str, claimed: int, claimed_at: str, older_than: str) -> bool:
        """Take over a claim of `claimed` places, made at `claimed_at` and never confirmed, once it is older
        than `older_than` (a `utc_key`; its sender is taken to have died): True when this caller now holds
        it, claimed anew (and sends `claimed` again); False when it is not as read, is still fresh, or
        another caller took it first."""
        if claimed_at >= older_than:
            return False
        s = t.platform_studies.c
        with self.write() as conn:
            done = conn.execute(sa.update(t.platform_studies)
                                .where(s.study_id == study_id, s.places == claimed,
                                       s.places_claimed_at == claimed_at)
                                .values(places_claimed_at=now_key()))
        return bool(done.rowcount)

    def undo_places_push(self, study_id: str, claimed: int, back_to: int, line: str,
                         claimed_at: Optional[str] = None) -> None:
        """A claimed push that did not reach the platform: the count goes back to `back_to` (unless it was
        changed since), its claim is given up, and `line` says why. `claimed_at`: a claim taken over from
        a sender that died is put back as it was (older than the lease, so the next check sends it again:
        the count the platform has is not known)."""
        s = t.platform_studies.c
        with self.write() as conn:
            conn.execute(sa.update(t.platform_studies).where(s.study_id == study_id, s.places == claimed)
                         .values(places=back_to, places_claimed_at=claimed_at))
            conn.execute(sa.update(t.platform_studies).where(s.study_id == study_id)
                         .values(places_line=line))

    def note_places_line(self, study_id: str, line: Optional[str]) -> None:
        """Why the arena's places are not on the platform (None: they are, or nothing needs sending)."""
        s = t.platform_studies.c
        with self.write() as conn:
            conn.execute(sa.update(t.platform_studies)
                         .where(s.study_id == study_id, s.places_line.is_distinct_from(line))
                         .values(places_line=line))
