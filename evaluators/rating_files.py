"""Human ratings from a file (CSV or JSON), checked against the aspect form and attached to dialogues.

A rating file has one row per rater and dialogue, or per rater and system
reply:

    dialogue_id,utterance_id,rater_id,understanding,task_completion,...,relevance
    d1,,ann1,2,1,...,
    d1,d1_3,ann1,,,...,3

* `dialogue_id` (also `conversation ID` / `conversation_id`): required;
* `utterance_id` (also `utterance ID`): present for a reply-level rating;
* `rater_id` (default `imported`) and `rater_kind` (`human`, the default, or `simulator`);
* every other column is an aspect of the form (`assets/ratings/aspects_v1.yaml`);
  an empty cell is a skipped aspect.

JSON is a list of objects with the same keys (or `{"ratings": [...]}`); an
object may carry its reply-level ratings in a `turns` list of objects with
`utterance_id` and aspect keys.

Loading is all-or-nothing: every row is checked (unknown aspect, value off
the scale or not a number, unknown dialogue or utterance id, the same rater
twice for the same dialogue or reply) before anything is attached, and all
problems are reported in one `RatingImportError` naming row and column.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Optional, Union

from arena.aspects import AspectForm, load_form
from arena.dialogue import Dialogue, Rating, Role, UserKind, replace_rating

DIALOGUE_KEYS = ("dialogue_id", "conversation ID", "conversation_id")
UTTERANCE_KEYS = ("utterance_id", "utterance ID")
RATER_KEYS = ("rater_id", "rater_kind")
DEFAULT_RATER = "imported"
_MAX_LISTED = 10


class RatingImportError(ValueError):
    """A rating file was refused; nothing from it was attached."""

    def __init__(self, problems: list[str], source: Optional[str] = None):
        self.problems = problems
        listed = problems[:_MAX_LISTED] + ([f"... and {len(problems) - _MAX_LISTED} more"]
                                           if len(problems) > _MAX_LISTED else [])
        noun = "problem" if len(problems) == 1 else "problems"
        head = f"cannot import ratings from {source}" if source else "cannot import ratings"
        super().__init__(f"{head}: {len(problems)} {noun}; nothing was imported\n  " + "\n  ".join(listed))


@dataclass(frozen=True)
class RatingRow:
    """One checked row: whose rating of which dialogue (or reply)."""

    where: str  # "row 3" or "row 3 turns[1]", for messages
    dialogue_id: str
    utterance_id: Optional[str]
    rating: Rating


# -- reading ------------------------------------------------------------------------------


def _rows_from_text(text: str, name: str) -> list[tuple[str, dict[str, Any]]]:
    stripped = text.lstrip("\ufeff").strip()
    if not stripped:
        raise RatingImportError(["the file is empty"], name)
    if stripped[0] in "[{":
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise RatingImportError([f"invalid JSON: {exc}"], name) from None
        if isinstance(data, dict) and isinstance(data.get("ratings"), list):
            data = data["ratings"]
        if not isinstance(data, list):
            raise RatingImportError(["expected a JSON list of rating objects"], name)
        return [(f"row {i}", rec) for i, rec in enumerate(data, start=1)]
    reader = csv.DictReader(io.StringIO(stripped))
    rows = []
    for i, rec in enumerate(reader, start=1):
        if None in rec:  # more cells than header columns
            raise RatingImportError([f"row {i} (line {i + 1}): more cells than columns in the header"], name)
        rows.append((f"row {i} (line {i + 1})", rec))
    return rows


def _first(rec: dict[str, Any], keys: tuple[str, ...]) -> Optional[str]:
    for key in keys:
        value = rec.get(key)
        if value is not None and str(value).strip():
            return str(value).strip()
    return None


def _check_row(where: str, rec: Any, form: AspectForm, source: str,
               problems: list[str]) -> list[RatingRow]:
    if not isinstance(rec, dict):
        problems.append(f"{where}: expected an object, got {type(rec).__name__}")
        return []
    dialogue_id = _first(rec, DIALOGUE_KEYS)
    if dialogue_id is None:
        problems.append(f"{where}, column 'dialogue_id': missing")
        return []
    rater_id = _first(rec, ("rater_id",)) or DEFAULT_RATER
    kind_raw = (_first(rec, ("rater_kind",)) or "human").lower()
    try:
        rater_kind = UserKind(kind_raw)
    except ValueError:
        problems.append(f"{where}, column 'rater_kind': {kind_raw!r} is not human or simulator")
        return []
    reserved = set(DIALOGUE_KEYS) | set(UTTERANCE_KEYS) | set(RATER_KEYS) | {"turns"}
    utterance_id = _first(rec, UTTERANCE_KEYS)
    level = "utterance" if utterance_id else "dialogue"
    values: dict[str, float] = {}
    for column, raw in rec.items():
        if column in reserved or raw is None or (isinstance(raw, str) and not raw.strip()):
            continue
        aspect = form.get(str(column))
        if aspect is None:
            problems.append(f"{where}, column {column!r}: unknown aspect (form {form.version} has "
                            f"{', '.join(form.names())})")
        elif aspect.level != level:
            need = "with an utterance_id" if aspect.level == "utterance" else "without an utterance_id"
            problems.append(f"{where}, column {column!r}: a {aspect.level}-level aspect belongs on a row {need}")
        else:
            try:
                values[aspect.name] = aspect.check(raw.strip() if isinstance(raw, str) else raw)
            except ValueError as exc:
                problems.append(f"{where}, column {column!r}: {exc}")
    out = []
    if values:
        rating = Rating(values=values, rater_id=rater_id, rater_kind=rater_kind, form_version=form.version,
                        source=source)
        out.append(RatingRow(where, dialogue_id, utterance_id, rating))
    turns = rec.get("turns")
    if turns is not None:
        if not isinstance(turns, list):
            problems.append(f"{where}, column 'turns': expected a list")
        for j, turn in enumerate(turns or []):
            if isinstance(turn, dict) and _first(turn, UTTERANCE_KEYS) is None:
                problems.append(f"{where} turns[{j}], column 'utterance_id': missing")
                continue
            inner = {**turn, "dialogue_id": dialogue_id, "rater_id": rater_id, "rater_kind": rater_kind.value} \
                if isinstance(turn, dict) else turn
            out += _check_row(f"{where} turns[{j}]", inner, form, source, problems)
    elif not values and not any(p.startswith(f"{where},") for p in problems):
        problems.append(f"{where}: no aspect values")
    return out


def read_rating_file(source: Union[str, Path], form: Optional[AspectForm] = None,
                     origin: str = "import") -> list[RatingRow]:
    """Every rating in the file, checked against the form (RatingImportError lists all problems)."""
    form = form or load_form()
    path = Path(source)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RatingImportError([f"cannot read the file: {exc}"], str(path)) from None
    problems: list[str] = []
    rows: list[RatingRow] = []
    seen: dict[tuple, str] = {}
    for where, rec in _rows_from_text(text, str(path)):
        for row in _check_row(where, rec, form, origin, problems):
            key = (row.dialogue_id, row.utterance_id, row.rating.rater_id, row.rating.rater_kind)
            if key in seen:
                what = f"reply {row.utterance_id!r}" if row.utterance_id else "dialogue"
                problems.append(f"{row.where}, column 'rater_id': duplicate of {seen[key]} "
                                f"(rater {row.rating.rater_id!r} rates {what} of {row.dialogue_id!r} twice)")
                continue
            seen[key] = row.where
            rows.append(row)
    if problems:
        raise RatingImportError(problems, str(path))
    return rows


# -- attaching --------------------------------------------------------------------------


def attach_ratings(dialogues: Iterable[Dialogue], rows: list[RatingRow], source: Optional[str] = None
                   ) -> list[Dialogue]:
    """Attach every row to its dialogue (or reply); returns the dialogues that changed.

    Checks every id first and changes nothing when one is unknown. A rater's
    new rating replaces their earlier one from the same source, so importing
    a file twice changes nothing.
    """
    by_id = {d.dialogue_id: d for d in dialogues}
    problems = []
    for row in rows:
        d = by_id.get(row.dialogue_id)
        if d is None:
            problems.append(f"{row.where}, column 'dialogue_id': unknown dialogue id {row.dialogue_id!r}")
            continue
        if row.utterance_id is not None:
            utt = d.utterance(row.utterance_id)
            if utt is None:
                problems.append(f"{row.where}, column 'utterance_id': dialogue {row.dialogue_id!r} has no "
                                f"utterance {row.utterance_id!r}")
            elif utt.role != Role.AGENT:
                problems.append(f"{row.where}, column 'utterance_id': {row.utterance_id!r} is a user message; "
                                "reply-level aspects rate the system's replies")
    if problems:
        raise RatingImportError(problems, source)
    changed: dict[str, Dialogue] = {}
    for row in rows:
        d = by_id[row.dialogue_id]
        target = d.utterance(row.utterance_id).ratings if row.utterance_id is not None else d.ratings
        replace_rating(target, row.rating)
        changed[d.dialogue_id] = d
    return list(changed.values())


def import_into_store(store: Any, source: Union[str, Path], form: Optional[AspectForm] = None
                      ) -> list[Dialogue]:
    """Attach a file's ratings to stored dialogues, saved in one transaction (or none on error)."""
    rows = read_rating_file(source, form)
    ids = sorted({row.dialogue_id for row in rows})
    found = [d for d in (store.get_dialogue(i) for i in ids) if d is not None]
    changed = attach_ratings(found, rows, str(source))
    store.save_dialogues(changed)
    return changed
