"""The store as append-only shards: what a Hub mirror pushes and what a restore reads back.

A shard is a JSON Lines file of one kind (`KINDS`), written once and never
changed. Each line is `{"key": ..., "record": {...}}`, or `{"key": ...,
"deleted": true}` for a row that left the store (a tombstone). `changes`
compares the store with what was pushed before (a digest per key, kept by the
caller) and returns only new or changed rows and tombstones, so a push costs
what changed since the last one.

Records are pseudonymised as the export is (`arena.corpus.records`): a user id
becomes `pseudonym:<the export's pseudonym>`, free-form details of people are
dropped and the raw id is scrubbed from the text. A restored store therefore
holds pseudonyms; `pseudonymiser` maps them to the same export pseudonym, so
exports before and after a restore agree (with the same salt).

`restore` replays shards in name order (a shard's name starts with its UTC
time) into an empty store: per key the last record wins, and a tombstone of a
dialogue or a vote is final, so a deleted dialogue never comes back even if
another replica pushed an older copy of it later.

Crowdsourced studies travel too (`STUDY_TABLES`): every version of a study
file, each worker's row (a salted pseudonym already, with their progress,
flags and completion; the platform's STUDY_ID and SESSION_ID pseudonymised
like user ids) and the quota claims, so a restarted Space resumes a
study where it was; a claim released or expired leaves a tombstone.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Callable, Iterable, Iterator, Optional

from arena.corpus.records import PSEUDONYM_PREFIX, _scrub
from arena.dialogue import Dialogue, Score, UserKind, Vote
from arena.store import Store

KINDS = (
    "dialogues",
    "ratings",
    "votes",
    "scores",
    "hidden",
    "moderation",
    "study_files",
    "study_participants",
    "study_claims",
)
FINAL_DELETIONS = ("dialogues", "votes")  # ids never reused: once deleted, deleted for good
STUDY_TABLES = ("study_files", "study_participants", "study_claims")  # kinds mirrored row for row, as stored
# The store's tables a push reads (the study kinds are tables of the same names).
_READ_TABLES = (
    "dialogues",
    "votes",
    "vote_flags",
    "scores",
    "hidden_dialogues",
    "moderation_log",
) + STUDY_TABLES
Digests = dict[str, dict[str, str]]  # kind -> key -> digest of the record last pushed


def mirror_id(user_id: str, pseudonym: Callable[[str], str]) -> str:
    """The user id a shard carries: the export's pseudonym, marked (kept as is when already one)."""
    return user_id if user_id.startswith(PSEUDONYM_PREFIX) else PSEUDONYM_PREFIX + pseudonym(user_id)


def _dialogue_record(d: Dialogue, pseudonym: Callable[[str], str]) -> dict[str, Any]:
    raw, alias = d.user.id, mirror_id(d.user.id, pseudonym)
    data = d.model_dump(mode="json", exclude={"scores"})
    data["user"]["id"] = alias
    if d.user.kind == UserKind.HUMAN:
        data["user"]["details"] = {}  # free-form; may identify the person
    return _scrub(data, raw, alias) if raw != alias else data


def _vote_record(v: Vote, flag: Optional[str], pseudonym: Callable[[str], str]) -> dict[str, Any]:
    data = v.model_dump(mode="json")
    data["user_id"] = mirror_id(v.user_id, pseudonym)
    data["comment"] = _scrub(v.comment, v.user_id, data["user_id"])
    return {"vote": data, "flag": flag}


def _study_participant_record(row: dict[str, Any], pseudonym: Callable[[str], str]) -> dict[str, Any]:
    """A worker's row with the platform's own ids (STUDY_ID, SESSION_ID: `data.platform`) pseudonymised as
    user ids are: researchers see them in the live store, the published dataset never does."""
    data = json.loads(row["data"])
    platform = data.get("platform")
    if not platform:
        return row
    data["platform"] = {key: mirror_id(str(value), pseudonym) for key, value in platform.items()}
    return {**row, "data": json.dumps(data)}  # as the store writes it


def current_records(store: Store, pseudonym: Callable[[str], str]) -> dict[str, dict[str, dict[str, Any]]]:
    """Every row the mirror carries, by kind and key, read in one transaction."""
    out: dict[str, dict[str, dict[str, Any]]] = {kind: {} for kind in KINDS}
    tables = store.table_rows(_READ_TABLES)
    for row in tables["dialogues"]:
        dialogue_id = row["dialogue_id"]
        d = Dialogue.model_validate_json(row["data"])
        record = _dialogue_record(d, pseudonym)
        out["dialogues"][dialogue_id] = record
        if d.feedback is not None or d.ratings:
            out["ratings"][dialogue_id] = {"dialogue_id": dialogue_id, "crs_id": d.crs_id,
                                           "user_id": record["user"]["id"], "feedback": record["feedback"],
                                           "ratings": record["ratings"]}
    flags = {row["vote_id"]: row["reason"] for row in tables["vote_flags"]}
    for row in tables["votes"]:
        vote_id = row["vote_id"]
        out["votes"][vote_id] = _vote_record(
            Vote.model_validate_json(row["data"]), flags.get(vote_id), pseudonym
        )
    for r in tables["scores"]:
        out["scores"][f"{r['dialogue_id']}/{r['metric']}"] = {
            "dialogue_id": r["dialogue_id"],
            "metric": r["metric"],
            "value": r["value"],
            "scorer": r["scorer"],
            "version": r["version"],
            "model": r["model"],
            "error": r["error"],
            "details": json.loads(r["details"]),
            "timestamp": r["scored_at"],
        }
    for row in tables["hidden_dialogues"]:
        out["hidden"][row["dialogue_id"]] = row
    for row in tables["moderation_log"]:  # in entry order
        entry = {k: v for k, v in row.items() if k != "entry_id"}  # ids differ between replicas
        out["moderation"][digest(entry)] = entry
    # Studies: participants are already salted pseudonyms, never raw worker ids (`webapp.sessions.study`).
    for row in tables["study_files"]:
        out["study_files"][f"{row['study_id']}/{row['version']}"] = row
    for row in tables["study_participants"]:
        out["study_participants"][f"{row['study_id']}/{row['pseudonym']}"] = _study_participant_record(
            row, pseudonym
        )
    for row in tables["study_claims"]:
        out["study_claims"][row["claim_id"]] = row
    return out


def digest(record: Any) -> str:
    return hashlib.sha256(json.dumps(record, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:24]


def changes(
    current: dict[str, dict[str, dict[str, Any]]], pushed: Digests
) -> dict[str, list[dict[str, Any]]]:
    """Shard lines per kind: rows new or changed since `pushed`, and tombstones of rows gone since."""
    out: dict[str, list[dict[str, Any]]] = {}
    for kind in KINDS:
        before, now = pushed.get(kind, {}), current.get(kind, {})
        lines: list[dict[str, Any]] = [
            {"key": key, "record": record} for key, record in now.items() if before.get(key) != digest(record)
        ]
        if kind != "moderation":  # the log only grows
            lines += [{"key": key, "deleted": True} for key in before if key not in now]
        if lines:
            out[kind] = lines
    return out


def digests_of(current: dict[str, dict[str, dict[str, Any]]]) -> Digests:
    return {kind: {key: digest(record) for key, record in rows.items()} for kind, rows in current.items()}


def dumps(lines: Iterable[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(line, ensure_ascii=False, sort_keys=True).encode() + b"\n" for line in lines)


def merge(shards: Iterable[tuple[str, str, bytes]]) -> dict[str, dict[str, dict[str, Any]]]:
    """(kind, shard name, content) -> the rows that survive, per kind: the last record per key wins, in
    shard-name order; a final tombstone (`FINAL_DELETIONS`) wins over every record of its key."""
    rows: dict[str, dict[str, Optional[dict[str, Any]]]] = {kind: {} for kind in KINDS}
    gone: dict[str, set[str]] = {kind: set() for kind in KINDS}
    for kind, _name, content in sorted(shards, key=lambda s: (s[1], s[0])):
        if kind not in rows:
            continue
        for raw in content.decode("utf-8").splitlines():
            if not raw.strip():
                continue
            line = json.loads(raw)
            if line.get("deleted"):
                rows[kind][line["key"]] = None
                if kind in FINAL_DELETIONS:
                    gone[kind].add(line["key"])
            else:
                rows[kind][line["key"]] = line["record"]
    return {
        kind: {key: record for key, record in found.items() if record is not None and key not in gone[kind]}
        for kind, found in rows.items()
    }


def restore(store: Store, rows: dict[str, dict[str, dict[str, Any]]]) -> dict[str, int]:
    """Write merged shard rows into the store in one transaction; returns counts per kind."""
    dialogues = [Dialogue.model_validate(r) for r in rows.get("dialogues", {}).values()]
    ids = {d.dialogue_id for d in dialogues}
    votes = [(Vote.model_validate(r["vote"]), r.get("flag")) for r in rows.get("votes", {}).values()]
    votes = [(v, flag) for v, flag in votes if v.dialogue_a in ids and v.dialogue_b in ids]
    scores: dict[str, dict[str, Score]] = {}
    for r in rows.get("scores", {}).values():
        if r["dialogue_id"] in ids:
            scores.setdefault(r["dialogue_id"], {})[r["metric"]] = Score(
                value=r["value"],
                scorer=r["scorer"],
                version=r["version"],
                model=r["model"],
                error=r["error"],
                details=r["details"],
                timestamp=r["timestamp"],
            )
    hidden = [r for r in rows.get("hidden", {}).values() if r["dialogue_id"] in ids]
    log = sorted(rows.get("moderation", {}).values(), key=lambda r: (r["created_at"], digest(r)))
    study_rows = {kind: list(rows.get(kind, {}).values()) for kind in STUDY_TABLES}
    store.restore_rows(dialogues=dialogues, scores=scores, votes=votes, hidden=hidden, moderation=log,
                       tables=study_rows)
    return {
        "dialogues": len(dialogues),
        "votes": len(votes),
        "scores": sum(map(len, scores.values())),
        "hidden": len(hidden),
        "moderation": len(log),
        **{kind: len(found) for kind, found in study_rows.items()},
    }


# -- erasure: purging a deleted dialogue's text from the shards already pushed ----------------


def erased(shards: Iterable[tuple[str, str, bytes]]) -> dict[str, set[str]]:
    """The keys whose records must leave every shard, per kind: those with a final tombstone
    (`FINAL_DELETIONS`) in any of `shards` (kind, name, content), and what belongs to a deleted
    dialogue under other kinds (its ratings, scores, hidden mark, the votes that compared it)."""
    gone: dict[str, set[str]] = {kind: set() for kind in KINDS}
    lines: list[tuple[str, dict[str, Any]]] = []
    for kind, _name, content in shards:
        for raw in content.decode("utf-8").splitlines():
            if raw.strip():
                line = json.loads(raw)
                lines.append((kind, line))
                if line.get("deleted") and kind in FINAL_DELETIONS:
                    gone[kind].add(line["key"])
    dialogues = gone["dialogues"]
    gone["ratings"] |= dialogues
    gone["hidden"] |= dialogues
    for kind, line in lines:
        record = line.get("record")
        if record is None:
            continue
        if kind == "scores" and record.get("dialogue_id") in dialogues:
            gone["scores"].add(line["key"])
        elif (
            kind == "votes"
            and {record["vote"].get("dialogue_a"), record["vote"].get("dialogue_b")} & dialogues
        ):
            gone["votes"].add(line["key"])
    return gone


def purged(kind: str, content: bytes, gone: dict[str, set[str]]) -> Optional[bytes]:
    """`content` (a shard of `kind`) without the records of erased keys (their tombstones stay, so a
    restore still knows they were deleted); None when nothing in it had to go."""
    keep, dropped = [], 0
    for raw in content.decode("utf-8").splitlines():
        if not raw.strip():
            continue
        line = json.loads(raw)
        if not line.get("deleted") and line["key"] in gone.get(kind, ()):
            dropped += 1
        else:
            keep.append(line)
    return dumps(keep) if dropped else None


def iter_kinds(shards: dict[str, list[dict[str, Any]]]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    for kind in KINDS:
        if shards.get(kind):
            yield kind, shards[kind]
