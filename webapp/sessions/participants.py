"""Pseudonymous participants: one id per browser, their own dialogues, and what a reload resumes.

A browser keeps a random token in its localStorage (the page's `gr.BrowserState`).
The participant id stored with their dialogues is a keyed hash of that token
(HMAC with a secret kept in the database), so the id can be shown and logged
freely: only the token, which never leaves that browser except to this server,
lets anyone act as the participant. A browser without a token (or with a
malformed one) gets a fresh token.

The "Your data" panel lists, downloads and deletes the dialogues stored under
that id and nothing else; a deletion is one logged moderation transaction
(`webapp.protection.moderation.delete_user`), like a deletion request handled by researchers.

Identity survives a restore from the Hub mirror (`arena.corpus.hub_mirror`): with the
secret ARENA_PSEUDONYM_SALT set (the mirror requires it), the two secrets a returning
browser depends on, the key of the token's hash and the key its localStorage value is
encrypted with, are derived from that salt instead of drawn into the database, so an
empty disk derives them again. A restored dialogue carries the corpus pseudonym of its
participant (`pseudonym:...`, as every shard does), which the same salt computes from
the participant id, so "Your data" finds, downloads and deletes those too.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from arena.corpus.records import PSEUDONYM_PREFIX, export_record, pseudonymiser, resolve_salt
from arena.dialogue import Dialogue
from arena.runtime.files import atomic_open
from arena.store import Store
from webapp.protection import moderation

TOKEN_SECRET_KEY = "participant_token_secret"
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{32,128}$")
PREFIX = "p-"
DELETION_REASON = "the participant deleted their own dialogues (Your data)"


def new_token() -> str:
    return secrets.token_urlsafe(32)


def valid_token(token: Any) -> bool:
    return isinstance(token, str) and bool(_TOKEN.match(token))


def identity_secret(store: Store, key: str, salt: Optional[str] = None) -> str:
    """The secret `key` a returning browser depends on: derived from the pseudonym salt when one is set
    (it comes back with the same value after the disk is lost), else drawn once into the database."""
    if salt:
        return hmac.new(salt.encode("utf-8"), f"crs-arena {key}".encode("utf-8"), hashlib.sha256).hexdigest()
    # Read first: a page load then writes nothing, so a locked or full database still lets visitors in.
    return store.get_meta(key) or store.get_or_create_secret(key)


def participant_id(store: Store, token: str, salt: Optional[str] = None) -> str:
    """The stored id of the participant holding `token` (a keyed hash; the token itself is never stored)."""
    if not valid_token(token):
        raise ValueError("not a participant token")
    secret = identity_secret(store, TOKEN_SECRET_KEY, salt).encode("utf-8")
    return PREFIX + hmac.new(secret, token.encode("utf-8"), hashlib.sha256).hexdigest()[:24]


def stored_ids(user_id: str, salt: Optional[str] = None) -> list[str]:
    """The ids this participant's dialogues may be stored under: their own, and (given the salt) the corpus
    pseudonym a restore from the Hub mirror wrote in its place."""
    return [user_id, PSEUDONYM_PREFIX + pseudonymiser(salt)(user_id)] if salt else [user_id]


def is_participant(user_id: Optional[str]) -> bool:
    return bool(user_id) and str(user_id).startswith(PREFIX)


def corpus_pseudonym(store: Store, user_id: str, salt: Optional[str] = None) -> str:
    """What the published corpus calls this user (the pseudonym a deletion request may name)."""
    return pseudonymiser(resolve_salt(store, salt))(user_id)


# -- their own dialogues ------------------------------------------------------------------


@dataclass(frozen=True)
class OwnData:
    chats: int
    battles: int  # battle conversations (two per battle)
    under_way: int  # battle conversations whose vote is not in yet (left out of the download)

    @property
    def total(self) -> int:
        return self.chats + self.battles


def own_dialogues(store: Store, user_id: str, salt: Optional[str] = None) -> list[Dialogue]:
    found = [d for uid in stored_ids(user_id, salt) for d in store.list_dialogues(user_id=uid)]
    return sorted(found, key=lambda d: (d.created_at, d.dialogue_id))


def _battle_under_way(store: Store, dialogue: Dialogue, voted: dict[str, bool]) -> bool:
    battle_id = dialogue.metadata.get("battle_id")
    if not battle_id:
        return False
    if battle_id not in voted:
        voted[battle_id] = store.battle_voted(battle_id)
    return not voted[battle_id]


def summary(store: Store, user_id: str, salt: Optional[str] = None) -> OwnData:
    dialogues = [d for d in own_dialogues(store, user_id, salt) if d.utterances]
    voted: dict[str, bool] = {}
    battles = [d for d in dialogues if d.metadata.get("battle_id")]
    under_way = sum(_battle_under_way(store, d, voted) for d in battles)
    return OwnData(chats=len(dialogues) - len(battles), battles=len(battles), under_way=under_way)


def export_own(store: Store, user_id: str, folder: Optional[Path] = None,
               salt: Optional[str] = None, name: str = "my-dialogues.jsonl") -> tuple[Path, int]:
    """The participant's dialogues as JSONL in the corpus layout; (file, how many).

    A battle whose vote is not in yet is left out: its records name the systems,
    which the participant learns only by voting.
    """
    pseudonym = pseudonymiser(resolve_salt(store, salt))
    ids = stored_ids(user_id, salt)
    votes = {}
    for vote in store.list_votes():
        if vote.user_id in ids:
            votes[vote.dialogue_a] = votes[vote.dialogue_b] = vote
    voted: dict[str, bool] = {}
    records = [export_record(d, pseudonym, votes.get(d.dialogue_id)) for d in own_dialogues(store, user_id, salt)
               if d.utterances and not _battle_under_way(store, d, voted)]
    folder = Path(folder or tempfile.mkdtemp(prefix="crs-arena-own-"))
    path = folder / name
    with atomic_open(path) as fh:  # a full disk leaves no half file
        for record in records:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path, len(records)


def delete_own(store: Store, user_id: str, salt: Optional[str] = None) -> dict[str, Any]:
    """Delete every dialogue of this participant (battle votes included), logged as moderation; those a
    restore stored under their corpus pseudonym too."""
    if not is_participant(user_id):
        raise moderation.ModerationError("Only a participant's own dialogues can be deleted here.")
    stored = store.stored_user_ids()
    totals: dict[str, Any] = {}
    for uid in [uid for uid in stored_ids(user_id, salt) if uid in stored]:
        counts = moderation.delete_user(store, uid, actor="participant", reason=DELETION_REASON, exact=True)
        totals = {key: totals.get(key, 0) + value for key, value in counts.items()}
    if not totals:
        raise moderation.ModerationError("No stored dialogues belong to that user id or pseudonym.")
    return totals


# -- what a reload resumes -----------------------------------------------------------------


def open_chat(store: Store, user_id: str) -> Optional[Dialogue]:
    """The participant's latest Chat conversation if it still waits for messages or a verdict."""
    chats = [d for d in own_dialogues(store, user_id) if d.metadata.get("source") == "chat"]
    if not chats or chats[-1].feedback is not None or chats[-1].end_reason not in (None, "max_turns"):
        return None
    return chats[-1]


def open_battle(store: Store, user_id: str) -> Optional[tuple[str, dict[str, Dialogue]]]:
    """(battle id, side -> dialogue) of the participant's latest battle if its vote is not in yet."""
    battles = [d for d in own_dialogues(store, user_id) if d.metadata.get("source") == "battle"]
    if not battles:
        return None
    battle_id = battles[-1].metadata.get("battle_id")
    sides = {d.metadata.get("side"): d for d in battles if d.metadata.get("battle_id") == battle_id}
    if set(sides) != {"A", "B"} or store.battle_voted(battle_id):
        return None
    return battle_id, {"A": sides["A"], "B": sides["B"]}
