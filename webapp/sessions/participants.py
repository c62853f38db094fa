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

from arena.corpus.records import export_record, pseudonymiser, resolve_salt
from arena.dialogue import Dialogue
from arena.files import atomic_open
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


def participant_id(store: Store, token: str) -> str:
    """The stored id of the participant holding `token` (a keyed hash; the token itself is never stored)."""
    if not valid_token(token):
        raise ValueError("not a participant token")
    secret = store.get_or_create_secret(TOKEN_SECRET_KEY).encode("utf-8")
    return PREFIX + hmac.new(secret, token.encode("utf-8"), hashlib.sha256).hexdigest()[:24]


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


def own_dialogues(store: Store, user_id: str) -> list[Dialogue]:
    return store.list_dialogues(user_id=user_id)


def _battle_under_way(store: Store, dialogue: Dialogue, voted: dict[str, bool]) -> bool:
    battle_id = dialogue.metadata.get("battle_id")
    if not battle_id:
        return False
    if battle_id not in voted:
        voted[battle_id] = store.battle_voted(battle_id)
    return not voted[battle_id]


def summary(store: Store, user_id: str) -> OwnData:
    dialogues = [d for d in own_dialogues(store, user_id) if d.utterances]
    voted: dict[str, bool] = {}
    battles = [d for d in dialogues if d.metadata.get("battle_id")]
    under_way = sum(_battle_under_way(store, d, voted) for d in battles)
    return OwnData(chats=len(dialogues) - len(battles), battles=len(battles), under_way=under_way)


def export_own(store: Store, user_id: str, folder: Optional[Path] = None,
               salt: Optional[str] = None) -> tuple[Path, int]:
    """The participant's dialogues as JSONL in the corpus layout; (file, how many).

    A battle whose vote is not in yet is left out: its records name the systems,
    which the participant learns only by voting.
    """
    pseudonym = pseudonymiser(resolve_salt(store, salt))
    votes = {}
    for vote in store.list_votes():
        if vote.user_id == user_id:
            votes[vote.dialogue_a] = votes[vote.dialogue_b] = vote
    voted: dict[str, bool] = {}
    records = [export_record(d, pseudonym, votes.get(d.dialogue_id)) for d in own_dialogues(store, user_id)
               if d.utterances and not _battle_under_way(store, d, voted)]
    folder = Path(folder or tempfile.mkdtemp(prefix="crs-arena-own-"))
    path = folder / "my-dialogues.jsonl"
    with atomic_open(path) as fh:  # a full disk leaves no half file
        for record in records:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path, len(records)


def delete_own(store: Store, user_id: str) -> dict[str, Any]:
    """Delete every dialogue of this participant (battle votes included), logged as moderation."""
    if not is_participant(user_id):
        raise moderation.ModerationError("Only a participant's own dialogues can be deleted here.")
    return moderation.delete_user(store, user_id, actor="participant", reason=DELETION_REASON, exact=True)


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
