"""Weak Recommend / Accept / Reject labels for ReDial dialogues, from the seekers' own answers.

After each ReDial conversation both workers answered, per movie mentioned, whether the
recommender suggested it, whether the seeker had seen it and whether the seeker liked it
(0 no, 1 yes, 2 did not say). These answers are turned into per-turn labels; every rule
below was fixed before any model was measured against them:

- Turns are built as in IARD: consecutive messages of one worker are joined with "...",
  and "@123" mentions become the movie's "Title (Year)". The recommender is the AGENT.
- The seeker's answers are used; a movie the seeker left at "did not say" takes the
  recommender's answer instead.
- AGENT turn: Recommend when it is the first turn of the recommender to mention a movie
  marked suggested; not Recommend when it mentions no movie at all or only movies marked
  not suggested; unlabelled when it only mentions again movies it already suggested.
- USER turn right after an AGENT turn that suggested movies S: Accept when the seeker
  liked a movie of S they had not seen; Reject when the seeker did not like a movie of S;
  neither when they liked them and had seen them (the guide's SEE); unlabelled when
  neither holds and the seeker did not say whether they liked one of them.
- Any other USER turn: neither Accept nor Reject, unless it names a suggested movie
  (then unlabelled: a later acceptance cannot be told apart from talk about the movie).

Labels are None where unknown, so training masks them and measurement skips them.
ReDial is CC BY 4.0 (Li et al., 2018).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from arena.dialogue import Dialogue, Role

_MENTION = re.compile(r"@(\d+)")


@dataclass
class WeakLabels:
    """Per turn: {"REC": bool | None} for AGENT turns, {"ACC": ..., "REJ": ...} for USER turns."""

    dialogue: Dialogue
    labels: list[dict[str, Optional[bool]]] = field(default_factory=list)


def redial_part(conversation_id: str) -> str:
    """'test' (20%), 'val' (10%) or 'train', fixed by a hash of the conversation id."""
    bucket = int(hashlib.sha256(f"redial:{conversation_id}".encode("utf-8")).hexdigest()[:8], 16) % 10
    return "test" if bucket < 2 else "val" if bucket == 2 else "train"


def _answers(record: dict, movie: str) -> dict[str, int]:
    seeker = (record.get("initiatorQuestions") or {}).get(movie) or {}
    helper = (record.get("respondentQuestions") or {}).get(movie) or {}
    out = {}
    for key in ("suggested", "seen", "liked"):
        value = seeker.get(key, 2)
        out[key] = helper.get(key, 2) if value == 2 else value
    return out


def _turns(record: dict) -> list[tuple[Role, str, list[str]]]:
    names = {k: " ".join(v.split()) for k, v in (record.get("movieMentions") or {}).items() if v}
    agent = record.get("respondentWorkerId")
    turns: list[tuple[Role, str, list[str]]] = []
    for msg in record.get("messages", []):
        text = str(msg.get("text", "")).strip()
        movies = [m for m in _MENTION.findall(text) if m in names]
        text = " ".join(_MENTION.sub(lambda m: names.get(m.group(1), "a movie"), text).split())
        if not text:
            continue
        role = Role.AGENT if msg.get("senderWorkerId") == agent else Role.USER
        if turns and turns[-1][0] == role:
            prev_role, prev_text, prev_movies = turns[-1]
            turns[-1] = (role, f"{prev_text}...{text}", prev_movies + movies)
        else:
            turns.append((role, text, movies))
    return turns


def weak_labels(record: dict) -> WeakLabels:
    dialogue = Dialogue(crs_id="redial", dialogue_id=str(record["conversationId"]))
    out = WeakLabels(dialogue=dialogue)
    suggested_so_far: set[str] = set()
    last_new: list[str] = []  # movies the AGENT turn just before suggested for the first time
    for role, text, movies in _turns(record):
        (dialogue.add_agent if role == Role.AGENT else dialogue.add_user)(text)
        answers = {m: _answers(record, m) for m in movies}
        if role == Role.AGENT:
            suggested = [m for m in dict.fromkeys(movies) if answers[m]["suggested"] == 1]
            new = [m for m in suggested if m not in suggested_so_far]
            if new:
                rec: Optional[bool] = True
            elif not movies or all(answers[m]["suggested"] == 0 for m in movies):
                rec = False
            else:
                rec = None
            suggested_so_far.update(suggested)
            last_new = new
            out.labels.append({"REC": rec})
            continue
        acc: Optional[bool]
        rej: Optional[bool]
        if last_new:
            liked = [_answers(record, m) for m in last_new]
            acc = any(a["liked"] == 1 and a["seen"] == 0 for a in liked)
            rej = any(a["liked"] == 0 for a in liked)
            if not (acc or rej) and any(a["liked"] == 2 for a in liked):
                acc = rej = None
        elif any(m in suggested_so_far for m in movies):
            acc = rej = None
        else:
            acc = rej = False
        last_new = []
        out.labels.append({"ACC": acc, "REJ": rej})
    return out


def load_redial(path: Path, exclude: frozenset[str] = frozenset()) -> dict[str, list[WeakLabels]]:
    """The dialogues by part ('train', 'val', 'test'), skipping conversation ids in `exclude`
    (IARD annotated some of these dialogues; they belong to IARD's split)."""
    parts: dict[str, list[WeakLabels]] = {"train": [], "val": [], "test": []}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        cid = str(record["conversationId"])
        if cid in exclude:
            continue
        parts[redial_part(cid)].append(weak_labels(record))
    return parts
