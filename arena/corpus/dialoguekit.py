"""Reading and writing dialogues in the CRSArena-Dial / DialogueKit JSON layout.

A record in that layout looks like::

    {"conversation ID": "...", "agent": {"id": "kbrd_redial", "type": "AGENT"},
     "user": {"id": "...", "type": "USER"},
     "conversation": [{"participant": "USER", "utterance": "...", "utterance ID": "..."}, ...],
     "metadata": {"sentiment": "frustrated"}}

The IARD files use the same shape with ``conversation_id`` and per-utterance
``dialogue_acts`` ([{"intent", "slot_values"}]). Our exports add fields that
other readers ignore (timestamps, recommended items, errors, feedback comment,
scores, who the user was, ``acts_annotator``: the name/version of the annotator
whose acts an utterance carries, absent when they came with the corpus) so that
``from_record(to_dialoguekit(d)) == d``.

Records load with DialogueKit's own reader (`dialoguekit.utils.dialogue_reader`): the ids are
also written under the names it reads (`conversation_id`, `utterance_id`) and every slot value
in its four-element shape `[slot, value, start, end]` (start and end null when the place in
the text is unknown). What DialogueKit writes and the arena has no field for (an utterance's
`utterance_feedback`, its `annotations` and any other key, its metadata) is kept in the
dialogue's metadata under `DIALOGUEKIT_UTTERANCES` and written back in place on export.

Reading whole files (JSON, JSONL, DialogueKit's per-pair files) is in
`arena.corpus.loading`.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone
from typing import Any, Callable, Optional

from pydantic import ValidationError

from arena.corpus.redial import DEFAULT_CRS_ID as REDIAL_CRS_ID
from arena.corpus.redial import RedialRecordError, catalog_item_finder, is_redial_record, redial_dialogue
from arena.llm.redaction import redact_text
from arena.text_safety import valid_system_id
from arena.conversation.dialogue_state import DialogueState
from arena.dialogue import (
    SENTIMENTS,
    Dialogue,
    DialogueAct,
    Feedback,
    Rating,
    RecommendedItem,
    Role,
    Score,
    Sentiment,
    UserInfo,
    UserKind,
    Utterance,
    utc_now,
)

# Keys our exporter writes into a record's "metadata"; everything else found
# there on import is kept in Dialogue.metadata.
_OWN_META_KEYS = {
    "sentiment", "feedback", "scores", "score_details", "schema_version",
    "created_at", "ended_at", "end_reason", "dialogue_metadata", "ratings",
}
# Dialogue.metadata key: utterance id -> what DialogueKit wrote on that utterance beyond our fields.
DIALOGUEKIT_UTTERANCES = "dialoguekit_utterances"
# Utterance keys the arena reads into its own fields; any other key is DialogueKit metadata.
_OWN_UTTERANCE_KEYS = {
    "participant", "utterance", "utterance ID", "utterance_id", "timestamp", "recommended_items", "items",
    "dialogue_acts", "intent", "acts_annotator", "error", "ratings", "state",
}
_DIALOGUEKIT_UTTERANCE_KEYS = ("utterance_feedback", "annotations")
_MAX_LISTED_PROBLEMS = 10


class DialogueImportError(ValueError):
    """A file or record could not be read as dialogues.

    ``problems`` lists every problem found as dicts with ``index`` (record
    position, 0-based), ``conversation_id``, ``field``, ``line`` (JSONL only)
    and ``message``; ``index``/``conversation_id``/``field`` repeat the first.
    """

    def __init__(self, problems: list[dict[str, Any]], source: Optional[str] = None):
        self.problems = problems
        self.source = source
        first = problems[0] if problems else {}
        self.index: Optional[int] = first.get("index")
        self.conversation_id: Optional[str] = first.get("conversation_id")
        self.field: Optional[str] = first.get("field")
        lines = [_describe(p) for p in problems[:_MAX_LISTED_PROBLEMS]]
        if len(problems) > _MAX_LISTED_PROBLEMS:
            lines.append(f"... and {len(problems) - _MAX_LISTED_PROBLEMS} more")
        head = f"cannot import dialogues from {source}" if source else "cannot import dialogues"
        noun = "problem" if len(problems) == 1 else "problems"
        if len(problems) == 1:  # one problem fits on one line
            super().__init__(f"{head}: {lines[0]}; nothing was imported")
        else:
            super().__init__(f"{head}: {len(problems)} {noun}; nothing was imported\n  " + "\n  ".join(lines))


    def lines(self) -> list[str]:
        """The refusal as a head line and one line per problem, every problem listed."""
        head = f"cannot import dialogues from {self.source}" if self.source else "cannot import dialogues"
        if len(self.problems) == 1:
            return [f"{head}: {' '.join(_describe(self.problems[0]).split())}; nothing was imported"]
        return [f"{head}: {len(self.problems)} problems; nothing was imported",
                *(" ".join(_describe(p).split()) for p in self.problems)]


def _describe(problem: dict[str, Any]) -> str:
    where = []
    if problem.get("line") is not None:
        where.append(f"line {problem['line']}")
    if problem.get("index") is not None:
        where.append(f"record {problem['index']}")
    if problem.get("conversation_id") is not None:
        where.append(f"conversation ID {problem['conversation_id']!r}")
    if problem.get("field"):
        where.append(f"field {problem['field']!r}")
    prefix = ", ".join(where)
    return f"{prefix}: {problem['message']}" if prefix else problem["message"]


class _RecordError(Exception):
    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field
        self.message = message


# --------------------------------------------------------------------------
# export


def to_dialoguekit(d: Dialogue, pseudonymise: Optional[Callable[[str], str]] = None) -> dict[str, Any]:
    """One dialogue as a CRSArena-Dial/DialogueKit record, with our extra fields.

    `pseudonymise` maps the raw user id to what is written (None writes it as is).
    """
    user_id = pseudonymise(d.user.id) if pseudonymise else d.user.id
    user: dict[str, Any] = {
        "id": user_id,
        "type": "SIMULATOR" if d.user.kind == UserKind.SIMULATOR else "USER",
        "kind": d.user.kind.value,
        "simulator": d.user.simulator,
        "details": d.user.details,
    }
    conversation = [_utterance_record(u, pseudonymise) for u in d.utterances]
    metadata: dict[str, Any] = {}
    if d.feedback is not None:
        metadata["sentiment"] = d.feedback.sentiment
        metadata["feedback"] = d.feedback.model_dump(mode="json")
    metadata["scores"] = {name: s.value for name, s in sorted(d.scores.items())}
    metadata["score_details"] = {name: s.model_dump(mode="json") for name, s in sorted(d.scores.items())}
    metadata["schema_version"] = d.schema_version
    metadata["created_at"] = d.created_at.isoformat()
    metadata["ended_at"] = d.ended_at.isoformat() if d.ended_at else None
    metadata["end_reason"] = d.end_reason
    metadata["dialogue_metadata"] = {k: v for k, v in d.metadata.items() if k != DIALOGUEKIT_UTTERANCES}
    if d.ratings:
        metadata["ratings"] = [_rating_record(r, pseudonymise) for r in d.ratings]
    extras = d.metadata.get(DIALOGUEKIT_UTTERANCES)
    if isinstance(extras, dict):
        for rec in conversation:
            kept = extras.get(rec["utterance ID"])
            if isinstance(kept, dict):
                rec.update({k: v for k, v in kept.items() if k not in rec})
    return {
        "conversation ID": d.dialogue_id,
        "conversation_id": d.dialogue_id,  # the name DialogueKit's reader looks for
        "agent": {"id": d.crs_id, "type": "AGENT"},
        "user": user,
        "conversation": conversation,
        "metadata": metadata,
    }


def _rating_record(r: Rating, pseudonymise: Optional[Callable[[str], str]]) -> dict[str, Any]:
    rec = r.model_dump(mode="json")
    if pseudonymise and r.rater_kind == UserKind.HUMAN:
        rec["rater_id"] = pseudonymise(r.rater_id)  # a person's id never leaves the store
    return rec


def _utterance_record(u: Utterance, pseudonymise: Optional[Callable[[str], str]] = None) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "participant": u.role.value,
        "utterance": u.text,
        "utterance ID": u.utterance_id,
        "utterance_id": u.utterance_id,  # the name DialogueKit's reader looks for
        "timestamp": u.timestamp.isoformat(),
    }
    if u.items:
        rec["recommended_items"] = [{"id": i.item_id, "title": i.title} for i in u.items]
    if u.dialogue_acts is not None:
        rec["dialogue_acts"] = [
            {"intent": a.intent, "slot_values": [dialoguekit_slot(v) for v in a.slot_values]}
            for a in u.dialogue_acts]
    if u.acts_annotator is not None:
        rec["acts_annotator"] = u.acts_annotator
    if u.error is not None:
        rec["error"] = redact_text(u.error)
    if u.ratings:
        rec["ratings"] = [_rating_record(r, pseudonymise) for r in u.ratings]
    if u.state is not None:  # why the system's list came: the conversation's state as it read it
        rec["state"] = u.state.model_dump(mode="json")
    return rec


def dialoguekit_slot(value: list[Any]) -> list[Any]:
    """A slot value as DialogueKit holds one: `[slot, value, start, end]`; a value written without
    its place in the text (`["TITLE", "Aliens"]`, as the LLM annotator and many corpora write
    them) gets null start and end."""
    head = list(value[:4])
    return head + [None] * (4 - len(head))


def _own_slot(value: list[Any]) -> list[Any]:
    """The reverse of `dialoguekit_slot`: an unknown place is dropped again."""
    if len(value) == 4 and value[2] is None and value[3] is None:
        return list(value[:2])
    return value


# --------------------------------------------------------------------------
# import


def from_record(rec: Any, index: int = 0, *, default_crs_id: str = "unknown") -> Dialogue:
    """Parse one record (DialogueKit/CRSArena-Dial, IARD, ReDial's release, or our own Dialogue JSON).

    Raises DialogueImportError naming the record index, conversation id and field.
    """
    conv_id = _conversation_id(rec) if isinstance(rec, dict) else None
    try:
        return _parse(rec, default_crs_id)
    except _RecordError as exc:
        raise DialogueImportError([{"index": index, "conversation_id": conv_id,
                                    "field": exc.field, "message": exc.message}]) from None


def _conversation_id(rec: dict[str, Any]) -> Optional[str]:
    for key in ("conversation ID", "conversation_id", "dialogue_id", "conversationId"):
        value = rec.get(key)
        if value is not None and not isinstance(value, (dict, list)):
            return str(value)
    return None


def _parse(rec: Any, default_crs_id: str) -> Dialogue:
    if not isinstance(rec, dict):
        raise _RecordError("<record>", f"expected a JSON object, got {type(rec).__name__}")
    own = "utterances" in rec and "conversation" not in rec
    if is_redial_record(rec):
        d = _parse_redial(rec, default_crs_id)
    else:
        d = _parse_own(rec) if own else _parse_dialoguekit(rec, default_crs_id)
    # System ids reach pages and the dataset card: no markup, no spaces (arena.text_safety).
    if not valid_system_id(d.crs_id):
        raise _RecordError("crs_id" if own else "agent.id",
                           f"{d.crs_id[:40]!r} is not a system id (letters, digits, '_', '.', ':', '-')")
    return d


_redial_items: Optional[Callable[[str, str], Optional[RecommendedItem]]] = None


def _parse_redial(rec: dict[str, Any], default_crs_id: str) -> Dialogue:
    global _redial_items
    if _redial_items is None:
        _redial_items = catalog_item_finder()
    crs_id = REDIAL_CRS_ID if default_crs_id == "unknown" else default_crs_id
    try:
        return redial_dialogue(rec, _redial_items, crs_id)
    except RedialRecordError as exc:
        raise _RecordError(exc.field, exc.message) from None


def _parse_own(rec: dict[str, Any]) -> Dialogue:
    try:
        return Dialogue.model_validate(rec)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "<record>"
        raise _RecordError(field, err["msg"]) from None


def _parse_dialoguekit(rec: dict[str, Any], default_crs_id: str) -> Dialogue:
    conversation = rec.get("conversation")
    if conversation is None:
        raise _RecordError("conversation", "missing (expected a list of utterances)")
    if not isinstance(conversation, list):
        raise _RecordError("conversation", f"expected a list, got {type(conversation).__name__}")
    metadata = _object(rec, "metadata")
    own = "schema_version" in metadata  # written by to_dialoguekit
    # Records from elsewhere carry no times: one import time stands in for all.
    created_at = _datetime(metadata, "created_at", "metadata.created_at") or utc_now()
    conv_id = _conversation_id(rec) or _content_id(rec)
    utterances = [_parse_utterance(u, i, conv_id, created_at) for i, u in enumerate(conversation)]

    agent = _participant(rec, "agent")
    crs_id = str(agent["id"]) if agent.get("id") is not None else default_crs_id

    extra_metadata = _extra_metadata(metadata)
    extra_metadata.pop(DIALOGUEKIT_UTTERANCES, None)
    kept = {utt.utterance_id: extra for utt, extra in zip(utterances, map(_dialoguekit_extras, conversation))
            if extra}
    if kept:
        extra_metadata[DIALOGUEKIT_UTTERANCES] = kept
    fields: dict[str, Any] = {
        "dialogue_id": conv_id,
        "crs_id": crs_id,
        "user": _parse_user(_participant(rec, "user")),
        "utterances": utterances,
        "feedback": _parse_feedback(metadata, created_at),
        "scores": _parse_scores(metadata),
        "ratings": _parse_ratings(metadata.get("ratings"), "metadata.ratings"),
        "metadata": extra_metadata,
        "created_at": created_at,
    }
    if own:
        fields["schema_version"] = _int(metadata, "schema_version")
        fields["ended_at"] = _datetime(metadata, "ended_at", "metadata.ended_at")
        fields["end_reason"] = metadata.get("end_reason")
    try:
        d = Dialogue(**fields)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise _RecordError(".".join(str(p) for p in err["loc"]), err["msg"]) from None
    if not own:
        # A corpus from elsewhere holds finished conversations.
        d.ended_at = d.created_at
        d.end_reason = "imported"
    return d


def _content_id(rec: dict[str, Any]) -> str:
    canonical = json.dumps(rec, sort_keys=True, ensure_ascii=False, default=str)
    return "imported-" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def _object(rec: dict[str, Any], key: str) -> dict[str, Any]:
    value = rec.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _RecordError(key, f"expected an object, got {type(value).__name__}")
    return value


def _participant(rec: dict[str, Any], key: str) -> dict[str, Any]:
    """`agent` / `user`: an object, or only the id as DialogueKit's `Dialogue.to_dict` writes it."""
    value = rec.get(key)
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        return {"id": str(value)}
    return _object(rec, key)


def _dialoguekit_extras(u: Any) -> dict[str, Any]:
    """What an utterance record holds beyond the arena's fields (DialogueKit's feedback,
    annotations and metadata), kept so an export writes it back."""
    if not isinstance(u, dict):
        return {}
    return {k: v for k, v in u.items() if k not in _OWN_UTTERANCE_KEYS}


def _int(obj: dict[str, Any], key: str) -> int:
    value: Any = obj.get(key)  # None and text that is no number are both a clear error
    try:
        return int(value)
    except (TypeError, ValueError):
        raise _RecordError(f"metadata.{key}", f"expected an integer, got {value!r}") from None


def _datetime(obj: dict[str, Any], key: str, field: str) -> Optional[datetime]:
    value = obj.get(key)
    if value is None or value == "":
        return None
    try:
        if isinstance(value, (int, float)):
            return datetime.fromtimestamp(value, tz=timezone.utc)
        return datetime.fromisoformat(str(value))
    except (ValueError, OverflowError, OSError):
        raise _RecordError(field, f"not an ISO date-time: {value!r}") from None


def _parse_utterance(u: Any, i: int, conv_id: str, default_time: datetime) -> Utterance:
    where = f"conversation[{i}]"
    if not isinstance(u, dict):
        raise _RecordError(where, f"expected an object, got {type(u).__name__}")
    fields: dict[str, Any] = {"role": _parse_role(u.get("participant"), f"{where}.participant"),
                              "text": _parse_text(u.get("utterance"), f"{where}.utterance")}
    utt_id = u.get("utterance ID", u.get("utterance_id"))
    fields["utterance_id"] = str(utt_id) if utt_id is not None else f"{conv_id}_{i}"
    fields["timestamp"] = _datetime(u, "timestamp", f"{where}.timestamp") or default_time
    fields["items"] = _parse_items(u.get("recommended_items", u.get("items")), f"{where}.recommended_items")
    fields["dialogue_acts"] = _parse_acts(u, where)
    if u.get("acts_annotator") is not None:
        if not isinstance(u["acts_annotator"], str):
            raise _RecordError(f"{where}.acts_annotator", "expected the annotator's name/version as a string")
        fields["acts_annotator"] = u["acts_annotator"]
    if u.get("error") is not None:
        fields["error"] = str(u["error"])
    fields["ratings"] = _parse_ratings(u.get("ratings"), f"{where}.ratings")
    if u.get("state") is not None:
        try:
            fields["state"] = DialogueState.model_validate(u["state"])
        except ValidationError as exc:
            raise _RecordError(f"{where}.state", f"not a dialogue state: {exc.errors()[0]['msg']}") from None
    return Utterance(**fields)


def _parse_role(participant: Any, field: str) -> Role:
    if participant is None:
        raise _RecordError(field, "missing (expected USER or AGENT)")
    role_name = str(participant).strip().upper()
    if role_name not in ("USER", "AGENT"):
        raise _RecordError(field, f"unknown participant {participant!r} (expected USER or AGENT)")
    return Role(role_name)


def _parse_text(text: Any, field: str) -> str:
    if text is None:
        raise _RecordError(field, "missing")
    if not isinstance(text, str):
        raise _RecordError(field, f"expected a string, got {type(text).__name__}")
    return text


def _list(raw: Any, field: str) -> list[Any]:
    """An optional list field: [] when absent, an error when not a list."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise _RecordError(field, f"expected a list, got {type(raw).__name__}")
    return raw


def _validated(model: Any, raw: Any, field: str) -> Any:
    """A pydantic model from raw data, or a _RecordError naming the first bad field under `field`."""
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        raise _RecordError(field + (f".{loc}" if loc else ""), err["msg"]) from None


def _parse_items(raw: Any, field: str) -> list[RecommendedItem]:
    items = []
    for j, item in enumerate(_list(raw, field)):
        if not isinstance(item, dict):
            raise _RecordError(f"{field}[{j}]", "expected an object with id and title")
        item_id = item.get("id", item.get("item_id"))
        if item_id is None:
            raise _RecordError(f"{field}[{j}].id", "missing")
        items.append(RecommendedItem(item_id=str(item_id), title=str(item.get("title") or "")))
    return items


def _parse_acts(u: dict[str, Any], where: str) -> Optional[list[DialogueAct]]:
    raw = u.get("dialogue_acts")
    if raw is None:
        # Older DialogueKit files carry a single utterance-level intent.
        return [DialogueAct(intent=str(u["intent"]))] if u.get("intent") else None
    if not isinstance(raw, list):
        raise _RecordError(f"{where}.dialogue_acts", f"expected a list, got {type(raw).__name__}")
    acts = []
    for j, act in enumerate(raw):
        field = f"{where}.dialogue_acts[{j}]"
        if isinstance(act, str):
            acts.append(DialogueAct(intent=act))
            continue
        if not isinstance(act, dict) or act.get("intent") is None:
            raise _RecordError(field, "expected an object with an intent")
        acts.append(DialogueAct(intent=str(act["intent"]),
                                slot_values=[_own_slot(v) for v in _slot_values(act, field)]))
    return acts


def _slot_values(act: dict[str, Any], field: str) -> list[list[Any]]:
    if act.get("slot_values") is not None:
        values = act["slot_values"]
        if not isinstance(values, list) or not all(isinstance(v, list) for v in values):
            raise _RecordError(f"{field}.slot_values", "expected a list of [SLOT, value, ...] lists")
        return values
    # DialogueKit proper writes annotations as {"slot", "value"} objects.
    out = []
    for ann in act.get("annotations") or []:
        if isinstance(ann, dict) and "slot" in ann:
            out.append([ann["slot"], ann.get("value")])
        elif isinstance(ann, list):
            out.append(ann)
        else:
            raise _RecordError(f"{field}.annotations", "expected {slot, value} objects")
    return out


def _parse_user(user: dict[str, Any]) -> UserInfo:
    kind_raw = user.get("kind")
    if kind_raw is None:
        kind_raw = "simulator" if str(user.get("type", "")).upper() == "SIMULATOR" else "human"
    try:
        kind = UserKind(str(kind_raw).lower())
    except ValueError:
        raise _RecordError("user.kind",
                           f"unknown user kind {kind_raw!r} (expected human or simulator)") from None
    details = user.get("details") or {}
    if not isinstance(details, dict):
        raise _RecordError("user.details", "expected an object")
    user_id = user.get("id")
    return UserInfo(
        kind=kind,
        id=str(user_id) if user_id is not None else "anonymous",
        simulator=user.get("simulator"),
        details=details,
    )


def _parse_sentiment(raw: Any, field: str) -> Optional[Sentiment]:
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    sentiment = SENTIMENTS.get(str(raw).strip().lower())
    if sentiment is None:
        raise _RecordError(field, f"unknown sentiment {raw!r} (expected satisfied or frustrated)")
    return sentiment


def _parse_feedback(metadata: dict[str, Any], created_at: datetime) -> Optional[Feedback]:
    fb = metadata.get("feedback")
    if isinstance(fb, dict):
        sentiment = _parse_sentiment(fb.get("sentiment"), "metadata.feedback.sentiment")
        if sentiment is None:
            return None
        return Feedback(sentiment=sentiment, comment=str(fb.get("comment") or ""),
                        timestamp=_datetime(fb, "timestamp", "metadata.feedback.timestamp") or created_at)
    if fb is not None:
        raise _RecordError("metadata.feedback", "expected an object")
    sentiment = _parse_sentiment(metadata.get("sentiment"), "metadata.sentiment")
    if sentiment is None:
        return None
    return Feedback(sentiment=sentiment, comment=str(metadata.get("comment") or ""), timestamp=created_at)


def _parse_scores(metadata: dict[str, Any]) -> dict[str, Score]:
    details = metadata.get("score_details")
    if details is None:
        return {}
    if not isinstance(details, dict):
        raise _RecordError("metadata.score_details", "expected an object of metric -> score")
    return {
        str(name): _validated(Score, raw, f"metadata.score_details.{name}") for name, raw in details.items()
    }


def _parse_ratings(raw: Any, field: str) -> list[Rating]:
    return [_validated(Rating, item, f"{field}[{j}]") for j, item in enumerate(_list(raw, field))]


def _extra_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    extra = dict(metadata.get("dialogue_metadata") or {})
    for key, value in metadata.items():
        if key not in _OWN_META_KEYS:
            extra.setdefault(key, value)
    return extra


def scored_record(dialogue: Dialogue) -> dict[str, Any]:
    """A scored-corpus line: the CRSArena-Dial record plus a top-level "scores" object (name -> value)."""
    rec = to_dialoguekit(dialogue)
    rec["scores"] = {name: s.value for name, s in sorted(dialogue.scores.items())}
    return rec
