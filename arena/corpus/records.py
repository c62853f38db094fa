"""Corpus export (with pseudonymous user ids) and import between files and the store.

Exports use the CRSArena-Dial/DialogueKit layout of `arena.corpus.dialoguekit`, one
record per dialogue, plus the battle vote a dialogue took part in. User ids are
replaced by a keyed hash (HMAC-SHA256) so the same person gets the same
pseudonym across exports made with the same salt, and raw ids never leave the
database. The salt comes from ARENA_PSEUDONYM_SALT, or else a random one kept
in the database.

Ids of imported corpora: a corpus such as CRSArena-Dial builds its conversation ids from its
user ids ("barcor_redial_<user id>"), so the public export, which replaces user ids wherever they
appear, changes those ids too. Researchers who must join the export with files keyed by the
source's ids (ratings, annotations) export with `source_ids=True` (`crs-arena export
--source-ids`): dialogues imported from a corpus then keep their conversation and utterance ids
as the source wrote them, and carry the id the public export gives them in `metadata.public_id`.
Such an export is for the researchers' own use, not for publication. Ratings files may name a
dialogue by either id (`evaluators.rating_files`).

The command line is in `arena.corpus.cli` (`crs-arena export|import`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path
from typing import IO, Any, Callable, Iterator, Optional, Union

from arena.dialogue import Dialogue, UserKind, Vote
from arena.corpus.dialoguekit import to_dialoguekit
from arena.corpus.loading import RENAMED_FROM, Source, load_dialogues
from arena.runtime.files import atomic_open
from arena.runtime.command_refusals import InputRefused
from arena.store import Store
from arena.store.board_rows import label_orders_of

SALT_META_KEY = "pseudonym_salt"
PSEUDONYM_HEX_CHARS = 16
# A user id that is already a pseudonym: a store restored from a Hub mirror (arena.corpus.shards) holds
# these, and they export as the pseudonym they carry, so exports agree before and after a restore.
PSEUDONYM_PREFIX = "pseudonym:"


def resolve_salt(store: Store, salt: Optional[str] = None) -> str:
    """The given salt (a flag, or the setting ARENA_PSEUDONYM_SALT), else the database's own."""
    if salt:
        return salt
    return store.get_or_create_secret(SALT_META_KEY)


def pseudonymiser(salt: str) -> Callable[[str], str]:
    key = salt.encode("utf-8")

    def pseudonym(user_id: str) -> str:
        if str(user_id).startswith(PSEUDONYM_PREFIX):
            return str(user_id)[len(PSEUDONYM_PREFIX):]
        digest = hmac.new(key, str(user_id).encode("utf-8"), hashlib.sha256).hexdigest()
        return digest[:PSEUDONYM_HEX_CHARS]

    return pseudonym


def _scrub(value: Any, raw: str, alias: str) -> Any:
    """Replace a raw user id wherever it hides in a record.

    Imported corpora build conversation/utterance ids from the user id (e.g.
    "kbrd_redial_<user id>"). Ids shorter than 6 characters are left to the
    user field alone, since they would match unrelated text.
    """
    if len(raw) < 6:
        return value
    if isinstance(value, str):
        return value if value == alias else value.replace(raw, alias)
    if isinstance(value, list):
        return [_scrub(v, raw, alias) for v in value]
    if isinstance(value, dict):
        return {_scrub(k, raw, alias): _scrub(v, raw, alias) for k, v in value.items()}
    return value


def _vote_record(vote: Vote, side: str, pseudonym: Callable[[str], str]) -> dict[str, Any]:
    result: str
    if vote.choice in ("tie", "both_bad"):
        result = vote.choice
    else:
        result = "win" if vote.choice == side else "lose"
    return {
        "vote_id": vote.vote_id,
        "battle_id": vote.battle_id,
        "side": side,
        "result": result,
        "choice": vote.choice,
        "winner": vote.winner,
        "crs_a": vote.crs_a,
        "crs_b": vote.crs_b,
        "dialogue_a": vote.dialogue_a,
        "dialogue_b": vote.dialogue_b,
        "comment": vote.comment,
        "user_id": pseudonym(vote.user_id),
        "user_kind": vote.user_kind.value,
        "timestamp": vote.timestamp.isoformat(),
    }


def is_imported(d: Dialogue) -> bool:
    """Whether `d` came from a corpus file (its ids are the source's, not the arena's)."""
    return d.end_reason == "imported"


def public_id(d: Dialogue, pseudonym: Callable[[str], str]) -> str:
    """The conversation id the public export gives `d` (its user id replaced where it appears)."""
    return shown_id(d, pseudonym)(d.dialogue_id)


def shown_id(d: Dialogue, pseudonym: Callable[[str], str], source_ids: bool = False) -> Callable[[str], str]:
    """How an export writes `d`'s conversation and utterance ids (as `export_record` does)."""
    if source_ids and is_imported(d):
        return lambda value: value
    raw, alias = d.user.id, pseudonym(d.user.id)
    return lambda value: _scrub(value, raw, alias)


def export_record(d: Dialogue, pseudonym: Callable[[str], str],
                  vote: Optional[Vote] = None, *, source_ids: bool = False,
                  label_order: Optional[int] = None) -> dict[str, Any]:
    """One dialogue for the public corpus: pseudonymous, with its vote if it was in a battle, and the
    order of its label within its participant's session (`metadata.label_order`, from
    `arena.store.session_order`) when it has one.

    With `source_ids`, an imported dialogue keeps its source's conversation and utterance ids and
    names its public id in `metadata.public_id` (a researchers' export, module docstring)."""
    rec = to_dialoguekit(d, pseudonym)
    raw, alias = d.user.id, pseudonym(d.user.id)
    if d.user.kind == UserKind.HUMAN:
        rec["user"]["details"] = {}  # free-form; may identify the person
    if label_order is not None:  # beside the feedback it orders; None for a pooled id or no label
        rec["metadata"]["label_order"] = label_order
    if vote is not None:
        side = "A" if vote.dialogue_a == d.dialogue_id else "B"
        rec["metadata"]["vote"] = _vote_record(vote, side, pseudonym)
        rec = _scrub(rec, vote.user_id, pseudonym(vote.user_id))
    rec = _scrub(rec, raw, alias)
    if source_ids and is_imported(d):
        if rec["conversation ID"] != d.dialogue_id:
            rec["metadata"]["public_id"] = rec["conversation ID"]
            rec["conversation ID"] = rec["conversation_id"] = d.dialogue_id
        # Every utterance id as the source wrote it, also where the conversation id held no user id
        # (DialogueKit-based tools may put the user id into utterance ids alone).
        for utterance, original in zip(rec["conversation"], d.utterances):
            utterance["utterance ID"] = utterance["utterance_id"] = original.utterance_id
        if RENAMED_FROM in d.metadata:  # the conversation ID the file gave a renamed dialogue
            rec["metadata"]["dialogue_metadata"][RENAMED_FROM] = d.metadata[RENAMED_FROM]
    return rec


def export_records(store: Store, crs_ids: Optional[list[str]] = None,
                   user_kind: Optional[Union[str, UserKind]] = None, ended: Optional[bool] = None,
                   salt: Optional[str] = None, source_ids: bool = False) -> Iterator[dict[str, Any]]:
    from arena.crowd.counting import Participants, visibility

    pseudonym = pseudonymiser(resolve_salt(store, salt))
    all_votes = store.list_votes()
    seen = visibility(store, all_votes)  # no hidden dialogues, no battle before its vote
    votes: dict[str, Vote] = {}
    for vote in seen.votes(all_votes, include_flagged=True):
        votes[vote.dialogue_a] = vote
        votes[vote.dialogue_b] = vote
    orders = label_orders_of(store.board_rows())
    # Every crowd, by the one selection rule: a study's known-answer tasks test the worker, not a system,
    # and stay out of the corpus as they stay off the boards.
    everyone = Participants()
    for d in seen.dialogues(store.list_dialogues(crs_id=list(crs_ids) if crs_ids is not None else None,
                                                 user_kind=user_kind, ended=ended)):
        if not everyone.keeps_dialogue(d):
            continue
        yield export_record(d, pseudonym, votes.get(d.dialogue_id), source_ids=source_ids,
                            label_order=orders.get(d.dialogue_id))


def write_atomically(out: Union[str, Path, IO[str]], write: Callable[[IO[str]], int]) -> int:
    if not isinstance(out, (str, Path)):
        return write(out)
    with atomic_open(out) as fh:
        return write(fh)


def export_jsonl(store: Store, out: Union[str, Path, IO[str]], crs_ids: Optional[list[str]] = None,
                 user_kind: Optional[Union[str, UserKind]] = None, ended: Optional[bool] = None,
                 salt: Optional[str] = None, source_ids: bool = False) -> int:
    """Write the corpus as JSON Lines (a path is replaced atomically). Returns the record count."""
    def write(fh: IO[str]) -> int:
        n = 0
        for rec in export_records(store, crs_ids, user_kind, ended, salt, source_ids):
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
            n += 1
        return n

    return write_atomically(out, write)


def export_json(store: Store, out: Union[str, Path, IO[str]], crs_ids: Optional[list[str]] = None,
                user_kind: Optional[Union[str, UserKind]] = None, ended: Optional[bool] = None,
                salt: Optional[str] = None, source_ids: bool = False) -> int:
    """Write the corpus as one JSON list, like the CRSArena-Dial files. Returns the record count."""
    def write(fh: IO[str]) -> int:
        records = list(export_records(store, crs_ids, user_kind, ended, salt, source_ids))
        json.dump(records, fh, ensure_ascii=False, indent=1)
        return len(records)

    return write_atomically(out, write)


class DuplicateDialogues(InputRefused):
    """The file holds dialogue ids that are already stored."""

    def __init__(self, ids: list[str]):
        self.ids = ids
        shown = ", ".join(repr(i) for i in ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
        super().__init__(f"{len(ids)} dialogue id(s) already stored ({shown}); nothing was imported. "
                         "Pass --replace to overwrite them.")


def import_dialogues(store: Store, source: Source, *, default_crs_id: str = "unknown",
                     replace: bool = False) -> list[Dialogue]:
    """Parse a whole file, then save every dialogue in one transaction (or raise and save none).

    A stored dialogue is never overwritten silently: ids already in the store
    are refused unless `replace` (a tampered file could otherwise rewrite a
    person's verdict).
    """
    if isinstance(source, list) and source and all(isinstance(d, Dialogue) for d in source):
        dialogues = list(source)  # already parsed
    else:
        dialogues = load_dialogues(source, default_crs_id=default_crs_id)
    if not replace:
        existing = [d.dialogue_id for d in dialogues if store.get_dialogue(d.dialogue_id) is not None]
        if existing:
            raise DuplicateDialogues(existing)
    store.save_dialogues(dialogues)
    return dialogues
