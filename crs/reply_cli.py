"""`python -m crs reply`: replies of one system to iEvaLM-style contexts, in bulk.

Input: JSON lines with `context`, the utterances so far, alternating between
the person and the system and ending with the person (the iEvaLM processed
format; other fields are ignored). Output: one JSON line per input line, in
the same order, with `text` (the reply) and `items` (the shown catalog names).
A line that cannot be read or answered gets `{"text": "", "items": [],
"error": ...}` and one line on stderr, so the output stays aligned.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any, Optional, TextIO

from arena.dialogue import Dialogue, RecommendedItem
from arena.conversation.crs_interface import ConversationalRecommender


def context_dialogue(context: list[str], crs: ConversationalRecommender) -> Dialogue:
    """The context as a dialogue; earlier system turns show the catalog titles they name."""
    if not isinstance(context, list) or not context or not all(isinstance(u, str) for u in context):
        raise ValueError("`context` must be a non-empty list of utterances")
    catalog = getattr(crs, "catalog", None)
    dialogue = Dialogue(crs_id=crs.name)
    first_is_user = len(context) % 2 == 1  # the last utterance is the person's
    for index, text in enumerate(context):
        if (index % 2 == 0) == first_is_user:
            dialogue.add_user(text)
        else:
            items = [i.to_recommended() for i in catalog.link(text)] if catalog is not None else []
            dialogue.add_agent(text, items=items)
    return dialogue


def reply_line(crs: ConversationalRecommender, line: str) -> dict[str, Any]:
    row = json.loads(line)
    if not isinstance(row, dict):
        raise ValueError("each line must be a JSON object")
    text, items = crs.respond(context_dialogue(row.get("context"), crs))
    return {"text": text, "items": [_name(i) for i in items]}


def _name(item: RecommendedItem) -> str:
    return item.title


def write_replies(
    crs: ConversationalRecommender, source: TextIO, out: TextIO, limit: Optional[int] = None,
    errors: TextIO = sys.stderr,
) -> tuple[int, int]:
    """Answer every line of `source` into `out`; returns (lines, failed lines)."""
    done = failed = 0
    for number, line in enumerate(source, 1):
        if limit is not None and done >= limit:
            break
        if not line.strip():
            continue
        try:
            result = reply_line(crs, line)
        except Exception as exc:  # one bad line must not lose the others
            failed += 1
            message = f"{type(exc).__name__}: {exc}"
            print(f"line {number}: {message}", file=errors)
            result = {"text": "", "items": [], "error": message}
        out.write(json.dumps(result, ensure_ascii=False) + "\n")
        out.flush()
        done += 1
    return done, failed


def run(crs: ConversationalRecommender, input_path: Path, out_path: Path, limit: Optional[int] = None) -> int:
    if not input_path.exists():
        print(f"error: no input file at {input_path}", file=sys.stderr)
        return 1
    out_path.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with input_path.open(encoding="utf-8") as source, out_path.open("w", encoding="utf-8") as out:
        done, failed = write_replies(crs, source, out, limit)
    print(f"{done} replies from {crs.name} in {time.monotonic() - started:.1f} s -> {out_path}"
          + (f" ({failed} lines failed, see above)" if failed else ""))
    return 1 if failed and failed == done else 0
