"""Reading ratings and debate answers out of free-form model text.

Both parsers return None rather than guess: a value that is missing, outside
its scale, or given on another scale ("3/5") is not a rating.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

from arena.llm.json_output import SMART_QUOTES, objects_in, readings

_NUMBER_WORDS = {"zero": 0.0, "one": 1.0, "two": 2.0, "three": 3.0, "four": 4.0}
_NUM = r"(\d+(?:\.\d+)?)"
_OPEN = r"(?:<|&lt;|¡)\s*rating\s*(?:>|&gt;|¿)"
_CLOSE = r"(?:<|&lt;|¡)\s*/\s*rating\s*(?:>|&gt;|¿)"
_TAG = re.compile(_OPEN + r"(.{0,60}?)" + _CLOSE, re.I | re.S)
_OPEN_TAG_ONLY = re.compile(_OPEN + r"\s*\**\s*" + _NUM, re.I)
_DENOMINATOR = re.compile(r"^\s*(?:/|out\s+of)\s*(\d+)", re.I)
_LABELLED = re.compile(
    r"\b(?:final\s+|overall\s+)?(?:rating|score)\b[\"'*\s]*(?:is|of|=|:)?[\"'*\s]*" + _NUM, re.I
)
_BARE_LINE = re.compile(r"^[\W_]*" + _NUM + r"[\W_]*$")
_JSON_FIELD = re.compile(r"[\"'](?:rating|score)[\"']\s*:\s*[\"']?" + _NUM, re.I)


def _in_scale(value: float, low: float, high: float) -> Optional[float]:
    return value if low <= value <= high else None


def _number_with_scale(text: str, start: int, value: str, high: float) -> Optional[float]:
    """`value` found at text[start:], rejected when followed by another scale ("/5", "out of 10")."""
    after = _DENOMINATOR.match(text[start:])
    if after and float(after.group(1)) != high:
        return None
    return _in_scale(float(value), 0.0, high)


def _rating_in_tag(content: str) -> tuple[bool, Optional[float]]:
    """(holds a number at all, value if valid) for the text inside <rating>...</rating>."""
    match = re.search(r"(?<![\d.])(-?)" + _NUM + r"(?!\.?\d)", content)
    if match:
        if match.group(1):
            return True, None
        return True, _number_with_scale(content, match.end(), match.group(2), 4.0)
    word = re.search(r"\b(zero|one|two|three|four)\b", content, re.I)
    if word:
        return True, _NUMBER_WORDS[word.group(1).lower()]
    return False, None


def parse_rating(text: str) -> Optional[float]:
    """The 0-4 rating a judge gave, or None.

    Looks, in order, for the last <rating>..</rating> tag holding a number
    (placeholders such as <rating>N</rating> are skipped), an unclosed
    <rating> tag, a JSON "rating"/"score" field, a labelled "Rating: 3"
    phrase, and finally a last line that is only a number.
    """
    if not text:
        return None
    for tag in reversed(list(_TAG.finditer(text))):
        has_number, value = _rating_in_tag(tag.group(1))
        if has_number:
            return value
    candidates = [
        (_OPEN_TAG_ONLY, text),
        (_JSON_FIELD, text),
        (_LABELLED, text),
    ]
    for pattern, haystack in candidates:
        matches = list(pattern.finditer(haystack))
        if matches:
            last = matches[-1]
            return _number_with_scale(haystack, last.end(), last.group(1), 4.0)
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if lines:
        bare = _BARE_LINE.match(lines[-1].strip())
        if bare:
            return _in_scale(float(bare.group(1)), 0.0, 4.0)
    return None


def reason_text(text: str, limit: int = 2000) -> str:
    """The judge's justification: its answer without the rating tag."""
    reason = _TAG.sub("", text or "").strip()
    return reason if len(reason) <= limit else reason[: limit - 3] + "..."


# -- debate answers ----------------------------------------------------------

@dataclass(frozen=True)
class DebateAnswer:
    score: float
    statement: str
    evaluator: Optional[str] = None


_SCORE_KEYS = ("score", "overall_score", "overall", "rating", "final_score")
_STATEMENT_KEYS = ("statement", "reason", "reasoning", "justification", "argument", "comment")


def _score_value(raw: Any) -> Optional[float]:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, (int, float)):
        return _in_scale(float(raw), 0.0, 100.0)
    if isinstance(raw, str):
        match = re.search(_NUM, raw)
        if match:
            return _number_with_scale(raw, match.end(), match.group(1), 100.0)
    return None


def _from_object(obj: dict[str, Any]) -> Optional[DebateAnswer]:
    lowered = {str(k).strip().lower(): v for k, v in obj.items()}
    score = next((_score_value(lowered[k]) for k in _SCORE_KEYS if k in lowered), None)
    if score is None:
        return None
    statement = next((str(lowered[k]) for k in _STATEMENT_KEYS if k in lowered), "")
    evaluator = lowered.get("evaluator") or lowered.get("name")
    return DebateAnswer(score, statement.strip(), str(evaluator) if evaluator else None)


def parse_debate_answer(text: str) -> Optional[DebateAnswer]:
    """{"evaluator", "statement", "score" 0-100} from a debater's answer, or None.

    Copes with code fences, text around the object, single quotes, typographic
    quotes, scores given as strings ("70", "70/100") and, as a last resort, a
    "score": N fragment in otherwise broken JSON.
    """
    if not text or not text.strip():
        return None
    for variant in readings(text):
        for obj in reversed(objects_in(variant)):
            answer = _from_object(obj)
            if answer is not None:
                return answer
    plain = text.translate(SMART_QUOTES)
    scores = list(re.finditer(r"[\"']?(?:overall[_ ])?score[\"']?\s*[:=]\s*[\"']?" + _NUM, plain, re.I))
    if not scores:
        return None
    last = scores[-1]
    score = _number_with_scale(plain, last.end(), last.group(1), 100.0)
    if score is None:
        return None
    statement = re.search(r"[\"']?statement[\"']?\s*[:=]\s*[\"'](.*?)[\"']\s*[,}\n]", plain, re.S | re.I)
    return DebateAnswer(score, statement.group(1).strip() if statement else plain[: last.start()].strip())
