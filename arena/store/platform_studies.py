"""The link from an arena study to its study on a recruiting platform (Prolific): the platform's study id,
its status as last read, its place count and when they were read (table of Alembic revision 0012).

One arena study has at most one platform study. The row is written when the study is created on the
platform and each time the arena reads or changes it there (publish, pause, stop, places, a webhook);
the status is the platform's own word (UNPUBLISHED, ACTIVE, PAUSED, AWAITING REVIEW, COMPLETED, ...).
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


def _link(row: Any) -> PlatformLink:
    return PlatformLink(study_id=row.study_id, platform=row.platform, platform_study_id=row.platform_study_id,
                        status=row.status, places=row.places, synced_at=row.synced_at)


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
                "places": places, "synced_at": now}))
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
