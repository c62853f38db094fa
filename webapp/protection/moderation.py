"""Researchers' moderation: hide, unhide or delete dialogues, or all of one user's.

Every action is one store transaction that also writes a `moderation_log` row,
and one log line here. A deletion request may name the user by the raw id or
by the pseudonym the exports show.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from arena.corpus.records import pseudonymiser, resolve_salt
from arena.store import Store

log = logging.getLogger("webapp.protection.moderation")


class ModerationError(ValueError):
    pass


def parse_ids(text: str) -> list[str]:
    """Dialogue ids from free text (commas, spaces or new lines between them)."""
    return list(dict.fromkeys(t for t in re.split(r"[\s,;]+", text or "") if t))


def _reason(reason: str) -> str:
    reason = " ".join((reason or "").split())
    if not reason:
        raise ModerationError("Please give a reason; it is kept in the moderation log.")
    return reason[:500]


def hide(store: Store, ids: list[str], *, actor: str, reason: str, hide: bool = True) -> list[str]:
    if not ids:
        raise ModerationError("Give at least one dialogue id.")
    done = store.hide_dialogues(ids, actor=actor, reason=_reason(reason), hide=hide)
    log.info("%s %s %d dialogue(s) %s: %s", actor, "hid" if hide else "unhid", len(done), ",".join(done), reason)
    return done


def delete(store: Store, ids: list[str], *, actor: str, reason: str) -> dict[str, int]:
    if not ids:
        raise ModerationError("Give at least one dialogue id.")
    counts = store.delete_dialogues(ids, actor=actor, reason=_reason(reason))
    log.info("%s deleted %d dialogue(s) and %d vote(s) %s: %s", actor, counts["dialogues"], counts["votes"],
             ",".join(ids), reason)
    return counts


def user_ids_matching(store: Store, who: str) -> list[str]:
    """Stored user ids equal to `who` or whose export pseudonym is `who`."""
    who = (who or "").strip()
    if not who:
        return []
    pseudonym = pseudonymiser(resolve_salt(store))
    return [user for user in store.stored_user_ids() if user == who or pseudonym(user) == who]


def delete_user(store: Store, who: str, *, actor: str, reason: str, exact: bool = False) -> dict[str, Any]:
    """A deletion request: every dialogue (and its battle votes) of one user.

    `exact` matches the stored id only, never an export pseudonym (a participant deleting their own data).
    """
    if exact:
        users = [who] if who in store.stored_user_ids() else []
    else:
        users = user_ids_matching(store, who)
    if not users:
        raise ModerationError("No stored dialogues belong to that user id or pseudonym.")
    ids = store.dialogue_ids_of_users(users)
    counts = store.delete_dialogues(ids, actor=actor, reason=_reason(reason), target=f"user:{who}")
    log.info("%s deleted user %s: %d dialogue(s), %d vote(s): %s", actor, who, counts["dialogues"],
             counts["votes"], reason)
    return {**counts, "users": len(users)}
