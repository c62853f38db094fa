"""Corpus export (with pseudonymous user ids) and import between files and the store.

Exports use the CRSArena-Dial/DialogueKit layout of `arena.corpus.dialoguekit`, one
record per dialogue, plus the battle vote a dialogue took part in. User ids are
replaced by a keyed hash (HMAC-SHA256) so the same person gets the same
pseudonym across exports made with the same salt, and raw ids never leave the
database. The salt comes from ARENA_PSEUDONYM_SALT, or else a random one kept
in the database.

    python -m arena.corpus.records export corpus.jsonl --db data/arena.sqlite3
    python -m arena.corpus.records import crs_arena_dial_open.json --db data/arena.sqlite3
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import IO, Any, Callable, Iterator, Optional, Union

from arena.dialogue import Dialogue, UserKind, Vote
from arena.corpus.dialoguekit import DialogueImportError, Source, load_dialogues, to_dialoguekit
from arena.store import Store

SALT_ENV = "ARENA_PSEUDONYM_SALT"
SALT_META_KEY = "pseudonym_salt"
PSEUDONYM_HEX_CHARS = 16


def resolve_salt(store: Store, salt: Optional[str] = None) -> str:
    """The explicit salt, else ARENA_PSEUDONYM_SALT, else the database's own."""
    if salt:
        return salt
    if os.environ.get(SALT_ENV):
        return os.environ[SALT_ENV]
    return store.get_or_create_secret(SALT_META_KEY)


def pseudonymiser(salt: str) -> Callable[[str], str]:
    key = salt.encode("utf-8")

    def pseudonym(user_id: str) -> str:
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


def export_record(d: Dialogue, pseudonym: Callable[[str], str],
                  vote: Optional[Vote] = None) -> dict[str, Any]:
    """One dialogue for the public corpus: pseudonymous, with its vote if it was in a battle."""
    rec = to_dialoguekit(d, pseudonym)
    raw, alias = d.user.id, pseudonym(d.user.id)
    if d.user.kind == UserKind.HUMAN:
        rec["user"]["details"] = {}  # free-form; may identify the person
    if vote is not None:
        side = "A" if vote.dialogue_a == d.dialogue_id else "B"
        rec["metadata"]["vote"] = _vote_record(vote, side, pseudonym)
        rec = _scrub(rec, vote.user_id, pseudonym(vote.user_id))
    return _scrub(rec, raw, alias)


def export_records(store: Store, crs_ids: Optional[list[str]] = None,
                   user_kind: Optional[Union[str, UserKind]] = None, ended: Optional[bool] = None,
                   salt: Optional[str] = None) -> Iterator[dict[str, Any]]:
    pseudonym = pseudonymiser(resolve_salt(store, salt))
    votes: dict[str, Vote] = {}
    for vote in store.list_votes():
        votes[vote.dialogue_a] = vote
        votes[vote.dialogue_b] = vote
    for d in store.list_dialogues(crs_id=list(crs_ids) if crs_ids is not None else None,
                                  user_kind=user_kind, ended=ended):
        yield export_record(d, pseudonym, votes.get(d.dialogue_id))


def _write_atomically(out: Union[str, Path, IO[str]], write: Callable[[IO[str]], int]) -> int:
    if not isinstance(out, (str, Path)):
        return write(out)
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            n = write(fh)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return n


def export_jsonl(store: Store, out: Union[str, Path, IO[str]], crs_ids: Optional[list[str]] = None,
                 user_kind: Optional[Union[str, UserKind]] = None, ended: Optional[bool] = None,
                 salt: Optional[str] = None) -> int:
    """Write the corpus as JSON Lines (a path is replaced atomically). Returns the record count."""
    def write(fh: IO[str]) -> int:
        n = 0
        for rec in export_records(store, crs_ids, user_kind, ended, salt):
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
            n += 1
        return n

    return _write_atomically(out, write)


def export_json(store: Store, out: Union[str, Path, IO[str]], crs_ids: Optional[list[str]] = None,
                user_kind: Optional[Union[str, UserKind]] = None, ended: Optional[bool] = None,
                salt: Optional[str] = None) -> int:
    """Write the corpus as one JSON list, like the CRSArena-Dial files. Returns the record count."""
    def write(fh: IO[str]) -> int:
        records = list(export_records(store, crs_ids, user_kind, ended, salt))
        json.dump(records, fh, ensure_ascii=False, indent=1)
        return len(records)

    return _write_atomically(out, write)


def import_dialogues(store: Store, source: Source, *, default_crs_id: str = "unknown") -> list[Dialogue]:
    """Parse a whole file, then save every dialogue in one transaction (or raise and save none)."""
    dialogues = load_dialogues(source, default_crs_id=default_crs_id)
    store.save_dialogues(dialogues)
    return dialogues


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m arena.corpus.records", description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", default=os.environ.get("ARENA_DB", "data/arena.sqlite3"))
    sub = parser.add_subparsers(dest="command", required=True)
    exp = sub.add_parser("export", help="write the corpus (.jsonl: one record a line; .json: a list)")
    exp.add_argument("out")
    exp.add_argument("--crs", action="append", help="only this system (repeatable)")
    exp.add_argument("--user-kind", choices=[k.value for k in UserKind])
    exp.add_argument("--ended-only", action="store_true")
    imp = sub.add_parser("import", help="load a CRSArena-Dial/DialogueKit/IARD JSON or JSONL file")
    imp.add_argument("path")
    imp.add_argument("--crs-id", default="unknown", help="system id for records without agent.id")
    args = parser.parse_args(argv)

    store = Store(args.db)
    if args.command == "export":
        writer = export_json if args.out.endswith(".json") else export_jsonl
        n = writer(store, args.out, crs_ids=args.crs, user_kind=args.user_kind,
                   ended=True if args.ended_only else None)
        print(f"wrote {n} dialogues to {args.out}")
        return 0
    try:
        dialogues = import_dialogues(store, Path(args.path), default_crs_id=args.crs_id)
    except DialogueImportError as exc:
        print(exc, file=sys.stderr)
        return 2
    print(f"imported {len(dialogues)} dialogues into {args.db}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
