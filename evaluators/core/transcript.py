"""Dialogue text as delimited, inert data for the judge and the debaters.

Two layers keep dialogue text from acting as instructions:

1. `neutralise` escapes "&", "<" and ">" (so no tag or marker can be written
   from inside an utterance), drops control characters and indents
   continuation lines (so a line break cannot start a fake "[3] SYSTEM:" turn).
2. `data_block` wraps the escaped sections between an opening and a closing
   marker whose tag is a digest of the enclosed text. The tag is stable for
   the same dialogue (so answers cache) yet cannot be guessed from inside the
   dialogue, because writing it would change it.
"""

from __future__ import annotations

import hashlib
import html
import re
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from arena.dialogue import Dialogue, Role

MAX_UTTERANCE_CHARS = 4000
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x84\x86-\x9f]")
_LINE_BREAKS = re.compile(r"\r\n|[\r\x85\u2028\u2029]")


def neutralise(text: Any, limit: int = MAX_UTTERANCE_CHARS) -> str:
    text = _LINE_BREAKS.sub("\n", str(text))
    text = _CONTROL.sub(" ", text).strip()
    if len(text) > limit:
        text = text[:limit].rstrip() + " ... [truncated]"
    text = html.escape(text, quote=False)
    return "\n    ".join(text.split("\n"))


@dataclass(frozen=True)
class DataBlock:
    text: str
    open_marker: str
    close_marker: str


def data_block(sections: Sequence[tuple[str, str]]) -> DataBlock:
    """Sections (name, already-neutralised body) between tagged markers."""
    body = "\n".join(f"<{name}>\n{content}\n</{name}>" for name, content in sections)
    tag = hashlib.sha256(body.encode("utf-8")).hexdigest()[:16]
    open_marker = f"<<<DATA {tag}>>>"
    close_marker = f"<<<END DATA {tag}>>>"
    return DataBlock(f"{open_marker}\n{body}\n{close_marker}", open_marker, close_marker)


def conversation_text(dialogue: Dialogue) -> str:
    lines = []
    for number, utt in enumerate(dialogue.utterances, 1):
        speaker = "USER" if utt.role == Role.USER else "SYSTEM"
        lines.append(f"[{number}] {speaker}: {neutralise(utt.text)}")
    return "\n".join(lines) if lines else "(empty dialogue)"


def numbered(items: Iterable[str], empty: str) -> str:
    lines = [f"{i}. {neutralise(text, 300)}" for i, text in enumerate(items, 1)]
    return "\n".join(lines) if lines else empty


def recommendation_list(dialogue: Dialogue) -> str:
    """Items of every system turn merged into one list (first occurrence, no duplicates)."""
    return numbered((item.title for item in dialogue.recommended_items()),
                    "(the system recommended no items)")


def _target_title(target: Any) -> str:
    if isinstance(target, dict):
        for key in ("title", "name", "item_id", "id"):
            if target.get(key):
                return str(target[key])
        return ""
    return str(target) if target is not None else ""


def targets(dialogue: Dialogue) -> list[str]:
    """Ground-truth target items from dialogue.metadata["targets"] (titles, ids or dicts)."""
    raw = dialogue.metadata.get("targets")
    if raw is None:
        return []
    if isinstance(raw, (str, dict)):
        raw = [raw]
    titles = [_target_title(t).strip() for t in raw]
    return [t for t in titles if t]


def has_system_turn(dialogue: Dialogue) -> bool:
    return any(u.role == Role.AGENT and u.text.strip() for u in dialogue.utterances)
