"""Reading JSON objects out of a model's free-form answer: the one parser for every LLM caller.

Models wrap JSON in code fences, put text around it, use typographic or single
quotes, leave raw newlines inside strings, or write Python literals. The
parser tries each reading and returns the objects it can read, never guessing
at one it cannot.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any, Optional

SMART_QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "″": '"', "‘": "'", "’": "'"})
_FENCE = re.compile(r"```[a-zA-Z]*\s*(.*?)```", re.S)
_LENIENT = json.JSONDecoder(strict=False)  # tolerates raw newlines inside strings


def _balanced(text: str, start: int) -> Optional[str]:
    """The {...} starting at text[start], respecting quoted strings of either kind."""
    depth, quote, escaped = 0, "", False
    for pos in range(start, len(text)):
        ch = text[pos]
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[start: pos + 1]
    return None


def _loads_lenient(chunk: str) -> Any:
    return json.loads(chunk, strict=False)


def objects_in(text: str) -> list[dict[str, Any]]:
    """Every object that starts at a "{" of `text` (nested ones included), in text order."""
    found: list[dict[str, Any]] = []
    for start in [m.start() for m in re.finditer(r"\{", text)]:
        try:
            obj, _ = _LENIENT.raw_decode(text, start)
        except ValueError:
            chunk = _balanced(text, start)
            obj = None
            if chunk:
                for parse in (_loads_lenient, ast.literal_eval):
                    try:
                        obj = parse(chunk)
                        break
                    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                        continue
        if isinstance(obj, dict):
            found.append(obj)
    return found


def readings(text: str) -> list[str]:
    """The texts to look in, most specific first: fenced blocks, then the whole answer,
    each also with typographic quotes made plain."""
    variants = [text, text.translate(SMART_QUOTES)]
    for variant in list(variants):
        variants[:0] = _FENCE.findall(variant)
    return variants


def json_objects(text: Optional[str]) -> list[dict[str, Any]]:
    """The objects of the first reading that has any (see `readings`)."""
    if not text or not text.strip():
        return []
    for variant in readings(text):
        found = objects_in(variant)
        if found:
            return found
    return []


def json_object(text: Optional[str]) -> Optional[dict[str, Any]]:
    """The answer's outermost (first) JSON object, or None when it holds none."""
    found = json_objects(text)
    return found[0] if found else None
