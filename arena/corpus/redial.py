"""ReDial's release format (Li et al., 2018) as arena dialogues.

A record of ReDial's `train_data.jsonl` / `test_data.jsonl`:

    {"conversationId": "15266", "initiatorWorkerId": 502, "respondentWorkerId": 534,
     "movieMentions": {"188047": "A Bronx Tale (1993)", ...},
     "messages": [{"senderWorkerId": 534, "text": "My favorite movie is @188047", "timeOffset": 0, ...}],
     "initiatorQuestions": {"188047": {"suggested": 1, "seen": 1, "liked": 1}, ...},
     "respondentQuestions": {...}}

The initiator is the seeker (the user); the respondent recommends (the system's side). A message
names a film as `@<movie id>`; the text is written with the film's title in its place, and the
films a recommender's message names are its items, linked to the ReDial catalog (whose ids are
ReDial's movie ids; a film missing there keeps its ReDial id and title). Both workers' answers
about each film (suggested by the recommender, seen, liked: 0 no, 1 yes, 2 did not say) are kept
in the dialogue's metadata, as are the film mentions. The record's `conversationId` is the
dialogue id, so ratings and annotations keyed by it still join.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any, Callable, Optional

from arena.dialogue import Dialogue, RecommendedItem, Role, UserInfo, UserKind, Utterance, utc_now

DEFAULT_CRS_ID = "redial_recommender"  # the human recommenders of ReDial, as one system
MENTION = re.compile(r"@(\d+)")
ANSWER_KEYS = ("suggested", "seen", "liked")


class RedialRecordError(ValueError):
    """A ReDial record that cannot be read: `field` names where."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field
        self.message = message


def is_redial_record(rec: Any) -> bool:
    return (isinstance(rec, dict) and "messages" in rec
            and ("movieMentions" in rec or "initiatorWorkerId" in rec))


def _title(raw: Any) -> str:
    return " ".join(str(raw).split())  # ReDial writes "The Jungle Book  (2016)"


def _answers(rec: dict[str, Any], key: str) -> dict[str, dict[str, int]]:
    raw = rec.get(key)
    if raw is None or raw == []:  # the release writes [] when nobody answered
        return {}
    if not isinstance(raw, dict):
        raise RedialRecordError(key, f"expected an object of movie id -> answers, got {type(raw).__name__}")
    out: dict[str, dict[str, int]] = {}
    for movie_id, answer in raw.items():
        if not isinstance(answer, dict):
            raise RedialRecordError(f"{key}.{movie_id}", "expected an object with suggested, seen, liked")
        out[str(movie_id)] = {k: answer[k] for k in ANSWER_KEYS if isinstance(answer.get(k), int)}
    return out


def _mentions(rec: dict[str, Any]) -> dict[str, str]:
    """The record's films by id, each as its title."""
    mentions_raw = rec.get("movieMentions") or {}
    if not isinstance(mentions_raw, dict):
        raise RedialRecordError("movieMentions", f"expected an object of movie id -> title, got "
                                f"{type(mentions_raw).__name__}")
    return {str(k): _title(v) for k, v in mentions_raw.items() if v is not None}


def _utterance(message: Any, default_id: str, where: str, speakers: dict[str, Any], mentions: dict[str, str],
               find_item: Callable[[str, str], Optional[RecommendedItem]], created_at: datetime) -> Utterance:
    """One ReDial message: its text with the films' titles written in, and the agent's films linked."""
    if not isinstance(message, dict):
        raise RedialRecordError(where, f"expected an object, got {type(message).__name__}")
    text = message.get("text")
    if not isinstance(text, str):
        raise RedialRecordError(f"{where}.text", "missing or not a string")
    sender, recommender = message.get("senderWorkerId"), speakers["recommender"]
    if sender == speakers["seeker"]:
        role = Role.USER
    elif recommender is None or sender == recommender:
        role = Role.AGENT
    else:
        raise RedialRecordError(f"{where}.senderWorkerId", f"{sender!r} is neither the initiator nor the "
                                "respondent")
    named = [m for m in MENTION.findall(text)]
    written = MENTION.sub(lambda m: mentions.get(m.group(1), m.group(0)), text)
    items: list[RecommendedItem] = []
    if role == Role.AGENT:
        for movie_id in dict.fromkeys(named):
            item = find_item(movie_id, mentions.get(movie_id, ""))
            if item is not None and item not in items:
                items.append(item)
    offset = message.get("timeOffset")
    at = created_at + timedelta(seconds=offset) if isinstance(offset, (int, float)) else created_at
    utt_id = message.get("messageId")
    return Utterance(role=role, text=written, items=items, timestamp=at,
                     utterance_id=str(utt_id) if utt_id is not None else default_id)


def redial_dialogue(rec: dict[str, Any], find_item: Callable[[str, str], Optional[RecommendedItem]],
                    crs_id: str = DEFAULT_CRS_ID) -> Dialogue:
    """One ReDial record as a Dialogue; `find_item(movie id, title)` links a film to the catalog."""
    conv_id = rec.get("conversationId")
    if conv_id is None or isinstance(conv_id, (dict, list)):
        raise RedialRecordError("conversationId", "missing")
    seeker = rec.get("initiatorWorkerId")
    recommender = rec.get("respondentWorkerId")
    if seeker is None:
        raise RedialRecordError("initiatorWorkerId", "missing (the seeker's worker id)")
    mentions = _mentions(rec)
    messages = rec.get("messages")
    if not isinstance(messages, list):
        raise RedialRecordError("messages", "expected a list of messages")
    created_at = utc_now()
    speakers = {"seeker": seeker, "recommender": recommender}
    utterances = [_utterance(message, f"{conv_id}_{i}", f"messages[{i}]", speakers, mentions, find_item,
                             created_at) for i, message in enumerate(messages)]
    metadata = {
        "source": "redial",
        "movie_mentions": mentions,
        "answers": {"seeker": _answers(rec, "initiatorQuestions"),
                    "recommender": _answers(rec, "respondentQuestions")},
    }
    if recommender is not None:
        metadata["recommender_worker_id"] = str(recommender)
    dialogue = Dialogue(dialogue_id=str(conv_id), crs_id=crs_id,
                        user=UserInfo(kind=UserKind.HUMAN, id=str(seeker)),
                        utterances=utterances, metadata=metadata, created_at=created_at)
    dialogue.ended_at, dialogue.end_reason = created_at, "imported"
    return dialogue


def catalog_item_finder() -> Callable[[str, str], Optional[RecommendedItem]]:
    """Links a ReDial film to the shipped ReDial catalog: by id, else by title; else the film as
    ReDial names it (its id and title), so no mention is lost."""
    from arena.catalogs.catalog import load_catalog

    catalog = None

    def find(movie_id: str, title: str) -> Optional[RecommendedItem]:
        nonlocal catalog
        if catalog is None:
            catalog = load_catalog("redial")
        item = catalog.get(movie_id) or (catalog.find_title(title) if title else None)
        if item is not None:
            return item.to_recommended()
        return RecommendedItem(item_id=movie_id, title=title) if title else None

    return find
