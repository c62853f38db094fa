"""Reading files of dialogues: a JSON list, one record, DialogueKit's per-pair file, or JSONL.

Loading is all-or-nothing: every record is parsed (`arena.corpus.dialoguekit.from_record`)
before anything is returned, and all problems are reported together in one
`DialogueImportError`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Union

from arena.corpus.dialoguekit import DialogueImportError, from_record
from arena.dialogue import Dialogue

Source = Union[str, Path, bytes, list]


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"non-finite number {name} is not valid JSON")


def _strict_json(text: str) -> Any:
    """json.loads that refuses NaN/Infinity and reports too-deep nesting as invalid JSON."""
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", text, 0) from None
    except ValueError as exc:
        if isinstance(exc, json.JSONDecodeError):
            raise
        raise json.JSONDecodeError(str(exc), text, 0) from None


def parse_records(text: str) -> tuple[list[Any], Optional[list[int]]]:
    """Split a file's text into records: a JSON list, one JSON object, or JSONL.

    Returns the records and, for JSONL, each record's 1-based line number.
    """
    stripped = text.strip()
    if not stripped:
        return [], None
    try:
        data = _strict_json(stripped)
    except json.JSONDecodeError as exc:
        if stripped.startswith("["):
            raise DialogueImportError([{"message": f"invalid JSON: {exc}"}]) from None
        return _parse_jsonl(stripped, exc)
    if isinstance(data, list):
        return data, None
    if isinstance(data, dict) and isinstance(data.get("dialogues"), list):
        return _unpack_per_pair(data), None
    if isinstance(data, dict) and ("conversation" in data or "utterances" in data or "messages" in data):
        return [data], None  # one dialogue (ReDial's records have "messages")
    raise DialogueImportError([{"message": f"expected a JSON list of dialogues, got {type(data).__name__}"}])


def _parse_jsonl(text: str, first_error: json.JSONDecodeError) -> tuple[list[Any], list[int]]:
    records, lines, problems = [], [], []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(_strict_json(line))
            lines.append(lineno)
        except json.JSONDecodeError as exc:
            problems.append({"line": lineno, "message": f"invalid JSON: {exc}"})
    if problems:
        if len(lines) == 0:  # not JSONL either: report the whole-document error
            problems = [{"message": f"invalid JSON: {first_error}"}]
        raise DialogueImportError(problems)
    return records, lines


def _unpack_per_pair(data: dict[str, Any]) -> list[Any]:
    """DialogueKit's per user/agent pair file: shared agent and user, a list of dialogues."""
    out = []
    for rec in data["dialogues"]:
        if isinstance(rec, dict):
            rec = {"agent": data.get("agent"), "user": data.get("user"), **rec}
        out.append(rec)
    return out


def read_source(source: Source) -> tuple[str, Optional[str]]:
    """The text to parse and a name for messages: a path, JSON text, or bytes."""
    if isinstance(source, bytes):
        return source.decode("utf-8"), None
    if isinstance(source, Path) or (isinstance(source, str) and not source.lstrip().startswith(("[", "{"))):
        path = Path(source)
        try:
            return path.read_text(encoding="utf-8"), str(path)
        except (OSError, UnicodeDecodeError) as exc:
            raise DialogueImportError([{"message": f"cannot read file: {exc}"}], source=str(path)) from None
    return str(source), None


@dataclass(frozen=True)
class Renamed:
    """A dialogue imported under another id, as its conversation ID was an earlier record's."""

    index: int  # its record, 0-based
    line: Optional[int]  # its line (JSONL only)
    source_id: str  # the conversation ID the file gives it
    new_id: str  # the id it is imported under
    first_index: int  # the earlier record with the same conversation ID

    def describe(self) -> str:
        where = f"line {self.line}, record {self.index}" if self.line is not None else f"record {self.index}"
        return (f"{where}: conversation ID {self.source_id!r} is also record {self.first_index}'s; "
                f"imported as {self.new_id!r}")


DUPLICATE_MESSAGE = "duplicate of record"
RENAMED_FROM = "renamed_from"  # the dialogue's metadata key naming the conversation ID the file gave it


def _distinct_id(source_id: str, taken: set[str]) -> str:
    n = 2
    while f"{source_id}-{n}" in taken:
        n += 1
    return f"{source_id}-{n}"


def with_rename_hint(exc: DialogueImportError) -> DialogueImportError:
    """The same refusal, each record refused for a repeated conversation ID saying how a command with
    `--rename-duplicates` would take it."""
    hint = " (--rename-duplicates gives it another id)"
    return DialogueImportError([{**p, "message": p["message"] + hint}
                                if str(p.get("message", "")).startswith(DUPLICATE_MESSAGE) else p
                                for p in exc.problems], source=exc.source)


def load_dialogues(source: Source, *, default_crs_id: str = "unknown", rename_duplicates: bool = False,
                   renamed: Optional[list[Renamed]] = None) -> list[Dialogue]:
    """Every dialogue in a file/text/list of records, or DialogueImportError and none.

    Accepts a JSON list (CRSArena-Dial, IARD, our own Dialogue JSON), a single
    record, DialogueKit's per-pair file, or JSONL with one record per line.
    Duplicate conversation IDs are an error, unless `rename_duplicates`: then every record after
    the first with a conversation ID gets "<id>-2", "<id>-3"... (an id no record of the file has),
    keeps the file's id in `metadata["renamed_from"]`, and is reported in `renamed` when given.
    (UserSimCRS names a simulated dialogue after the second it started in, so dialogues run in
    the same second share one.)
    """
    records, lines, name = _records_of(source)
    parsed: list[tuple[int, Optional[int], Dialogue]] = []
    problems: list[dict[str, Any]] = []
    for index, rec in enumerate(records):
        line = lines[index] if lines else None
        try:
            parsed.append((index, line, from_record(rec, index, default_crs_id=default_crs_id)))
        except DialogueImportError as exc:
            problems.extend({**p, "line": line} for p in exc.problems)
    renames: list[Renamed] = []
    dialogues = _without_duplicates(parsed, rename_duplicates, problems, renames)
    if problems:
        problems.sort(key=lambda p: p["index"] if p.get("index") is not None else -1)
        raise DialogueImportError(problems, source=name)
    if renamed is not None:
        renamed.extend(renames)
    return dialogues


def _records_of(source: Source) -> tuple[list[Any], Optional[list[int]], Optional[str]]:
    """The records of `source`, the line each starts on (JSONL and JSON lists of a text) and its name."""
    if isinstance(source, list):
        records, lines, name = source, None, None
    else:
        text, name = read_source(source)
        try:
            records, lines = parse_records(text)
        except DialogueImportError as exc:
            raise DialogueImportError(exc.problems, source=name) from None
    if not records:
        raise DialogueImportError([{"message": "no dialogues found (the input is empty)"}], source=name)
    return records, lines, name


def _without_duplicates(parsed: list[tuple[int, Optional[int], Dialogue]], rename_duplicates: bool,
                        problems: list[dict[str, Any]], renames: list[Renamed]) -> list[Dialogue]:
    """The dialogues, each id once: a repeated id is renamed (`rename_duplicates`, into `renames`) or a
    problem (into `problems`)."""
    taken = {d.dialogue_id for _, _, d in parsed}
    first_seen: dict[str, int] = {}
    dialogues: list[Dialogue] = []
    for index, line, d in parsed:
        if d.dialogue_id not in first_seen:
            first_seen[d.dialogue_id] = index
        elif rename_duplicates:
            new_id = _distinct_id(d.dialogue_id, taken)
            taken.add(new_id)
            renames.append(Renamed(index, line, d.dialogue_id, new_id, first_seen[d.dialogue_id]))
            d.metadata[RENAMED_FROM] = d.dialogue_id
            d.dialogue_id = new_id
        else:
            problems.append({"index": index, "line": line, "conversation_id": d.dialogue_id,
                             "field": "conversation ID",
                             "message": f"{DUPLICATE_MESSAGE} {first_seen[d.dialogue_id]}"})
            continue
        dialogues.append(d)
    return dialogues
