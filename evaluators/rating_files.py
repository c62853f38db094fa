"""Human ratings from a file (CSV, JSON or JSONL), checked against the aspect form and attached to dialogues.

A rating file has one row per rater and dialogue, or per rater and system
reply:

    dialogue_id,utterance_id,rater_id,understanding,task_completion,...,relevance
    d1,,ann1,2,1,...,
    d1,d1_3,ann1,,,...,3

* `dialogue_id` (also `conversation ID` / `conversation_id` / `conv_id`): required;
* `utterance_id` (also `utterance ID`): present for a reply-level rating; or
  `turn_ind` with `role` (USER or ASST) and optionally `utterance` (its text),
  matched as CRSArena-Eval's turns are (below);
* `rater_id` (default `imported`) and `rater_kind` (`human`, the default, or `simulator`);
* every other column is an aspect: one of the form (`assets/ratings/aspects_v1.yaml`),
  an alias of one, or an extra aspect (see `arena.crowd.aspects.AspectMapping`); an
  empty cell is a skipped aspect.

JSON is a list of objects with the same keys (or `{"ratings": [...]}`, or JSONL);
an object may carry its reply-level ratings in a `turns` list of objects with
`utterance_id` (or `turn_ind`/`role`/`utterance`) and aspect keys.

CRSArena-Eval's records (the FACE paper's human labels of CRSArena-Dial) are
read as published, a JSON list or JSONL of `{"conv_id", "dialogue": [...],
"dial_level_aggregated": {...}}`: `conv_id` is the CRSArena-Dial conversation
ID, the dialogue-level labels become one rating by rater `aggregated`, and each
turn's `turn_level_aggregated` labels a rating of the reply it names
(`evaluators.rating_turns`).

Names go through `evaluators.rating_names` and the mapping (default
`assets/ratings/aliases_v1.yaml`): aliases become the form's aspect
(`dialogue_overall` -> `overall_impression`); declared extra aspects are
checked on their scale; any other name is kept as an extra aspect with its
scale inferred from the file, unless it looks like a typo of a known name.

Loading is all-or-nothing: every row is checked (unknown or misspelt aspect,
value off the scale or not a number, unknown dialogue, utterance or turn, the
same rater twice for the same dialogue or reply) before anything is attached,
and all problems are reported in one `RatingImportError` naming row and column.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Optional, Union

from arena.crowd.aspects import AspectForm, AspectMapping, load_form, load_mapping
from arena.dialogue import Dialogue, Rating, Role, UserKind, Utterance, replace_rating
from evaluators.rating_names import AspectNames
from evaluators.rating_turns import OCCURRENCE, TURN_KEYS, TurnRef, find_turn, from_crsarena_eval, \
    is_crsarena_eval, turn_ref

DIALOGUE_KEYS = ("dialogue_id", "conversation ID", "conversation_id", "conv_id")
UTTERANCE_KEYS = ("utterance_id", "utterance ID")
RATER_KEYS = ("rater_id", "rater_kind")
RESERVED = {*DIALOGUE_KEYS, *UTTERANCE_KEYS, *TURN_KEYS, *RATER_KEYS, "turns", OCCURRENCE}
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
    turn: Optional[TurnRef] = None

    @property
    def target(self) -> Any:
        """What the row rates, for duplicate checks: the dialogue (None), a reply id or a turn."""
        return self.utterance_id if self.turn is None else (self.turn.role, self.turn.turn_ind)


# -- reading ------------------------------------------------------------------------------


def _json_records(text: str, name: str) -> list[tuple[str, Any]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        if not text.startswith("{"):
            raise RatingImportError([f"invalid JSON: {exc}"], name) from None
        return _jsonl_records(text, exc, name)
    if isinstance(data, dict) and isinstance(data.get("ratings"), list):
        data = data["ratings"]
    elif isinstance(data, dict):
        data = [data]  # one record
    if not isinstance(data, list):
        raise RatingImportError(["expected a JSON list of rating objects"], name)
    return [(f"row {i}", rec) for i, rec in enumerate(data, start=1)]


def _jsonl_records(text: str, first_error: json.JSONDecodeError, name: str) -> list[tuple[str, Any]]:
    records: list[tuple[str, Any]] = []
    problems: list[str] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append((f"row {len(records) + 1} (line {lineno})", json.loads(line)))
        except json.JSONDecodeError as exc:
            problems.append(f"line {lineno}: invalid JSON: {exc}")
    if problems:
        raise RatingImportError(problems if records else [f"invalid JSON: {first_error}"], name)
    return records


def _rows_from_text(text: str, name: str) -> list[tuple[str, dict[str, Any]]]:
    stripped = text.lstrip("\ufeff").strip()
    if not stripped:
        raise RatingImportError(["the file is empty"], name)
    if stripped[0] in "[{":
        return _json_records(stripped, name)
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


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


# -- checking rows ---------------------------------------------------------------------------------


def _check_row(where: str, rec: Any, names: AspectNames, source: str, problems: list[str]) -> list[RatingRow]:
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
    utterance_id = _first(rec, UTTERANCE_KEYS)
    turn = None
    if utterance_id is None and not _blank(rec.get("turn_ind")):
        turn = turn_ref(rec, where, problems)
        if turn is None:
            return []
    level = "utterance" if utterance_id or turn else "dialogue"
    values = _row_values(rec, names, level, where, problems)
    out = []
    if values:
        rating = Rating(
            values=values,
            rater_id=rater_id,
            rater_kind=rater_kind,
            form_version=names.form.version,
            source=source,
        )
        out.append(RatingRow(where, dialogue_id, utterance_id, rating, turn))
    inherited = {"dialogue_id": dialogue_id, "rater_id": rater_id, "rater_kind": rater_kind.value}
    out += _inner_turn_rows(rec.get("turns"), inherited, where, names, source, problems)
    if not out and not any(p.startswith(f"{where},") or p.startswith(f"{where} ") for p in problems):
        problems.append(f"{where}: no aspect values")
    return out


def _row_values(rec: dict, names: AspectNames, level: str, where: str, problems: list[str]
                ) -> dict[str, float]:
    """The aspect values of a row's own columns, by aspect name (bad ones into `problems`)."""
    values: dict[str, float] = {}
    for column, raw in rec.items():
        if column in RESERVED or _blank(raw):
            continue
        try:
            name, value = names.take(str(column), raw, level, where)
        except ValueError as exc:
            problems.append(f"{where}, column {column!r}: {exc}")
            continue
        if name in values:
            problems.append(
                f"{where}, column {column!r}: gives {name!r} a second value (an alias and its aspect?)"
            )
        values[name] = value
    return values


def _inner_turn_rows(turns: Any, inherited: dict[str, Any], where: str, names: AspectNames, source: str,
                     problems: list[str]) -> list[RatingRow]:
    """The rows of a dialogue row's `turns` list, each with the dialogue and rater of its row."""
    if turns is not None and not isinstance(turns, list):
        problems.append(f"{where}, column 'turns': expected a list")
    out: list[RatingRow] = []
    for j, inner in enumerate(turns if isinstance(turns, list) else []):
        if isinstance(inner, dict):
            if _first(inner, UTTERANCE_KEYS) is None and _blank(inner.get("turn_ind")):
                problems.append(
                    f"{where} turns[{j}], column 'utterance_id': missing (or give turn_ind and role)"
                )
                continue
            inner = {**inner, **inherited}
        out += _check_row(f"{where} turns[{j}]", inner, names, source, problems)
    return out


def read_rating_file(source: Union[str, Path], form: Optional[AspectForm] = None, origin: str = "import",
                     mapping: Optional[AspectMapping] = None, names: Optional[AspectNames] = None
                     ) -> list[RatingRow]:
    """Every rating in the file, checked against the form (RatingImportError lists all problems).

    `mapping` defaults to the shipped one (when it maps onto this form); pass
    `names` to learn afterwards which extra aspects were kept (`names.summary()`).
    """
    form = form or load_form()
    names = names or AspectNames(form, mapping if mapping is not None else load_mapping(form))
    path = Path(source)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RatingImportError([f"cannot read the file: {exc}"], str(path)) from None
    problems: list[str] = []
    rows: list[RatingRow] = []
    seen: dict[tuple, str] = {}
    for where, rec in _rows_from_text(text, str(path)):
        if is_crsarena_eval(rec):
            where = f"{where} (conv_id {rec.get('conv_id')!r})"
            rec = from_crsarena_eval(rec, where, problems)
        for row in _check_row(where, rec, names, origin, problems):
            key = (row.dialogue_id, row.target, row.rating.rater_id, row.rating.rater_kind)
            if key in seen:
                what = (f"reply {row.utterance_id!r}" if row.utterance_id else
                        row.turn.describe() if row.turn else "dialogue")
                problems.append(f"{row.where}, column 'rater_id': duplicate of {seen[key]} "
                                f"(rater {row.rating.rater_id!r} rates {what} of {row.dialogue_id!r} twice)")
                continue
            seen[key] = row.where
            rows.append(row)
    if problems:
        raise RatingImportError(problems, str(path))
    for row in rows:
        scales = {name: scale for name in row.rating.values if (scale := names.scale(name)) is not None}
        row.rating.extra_scales = scales or None
    return rows


# -- attaching --------------------------------------------------------------------------


def attach_ratings(dialogues: Iterable[Dialogue], rows: list[RatingRow], source: Optional[str] = None,
                   aliases: Optional[dict[str, str]] = None) -> list[Dialogue]:
    """Attach every row to its dialogue (or reply); returns the dialogues that changed.

    Dialogues are matched by id (the corpus's `conversation ID`), or by the id an export gave
    them: `metadata.public_id` (a researchers' export keeps an imported corpus's own ids and
    names the public one there) or an entry of `aliases` (other id -> dialogue id). Checks every
    id and turn first and changes nothing when one is unknown. A rater's new
    rating replaces their earlier one from the same source, so importing a
    file twice changes nothing.
    """
    dialogues = list(dialogues)
    by_id = _by_any_id(dialogues, aliases or {})
    problems: list[str] = []
    targets: dict[int, Utterance] = {}
    rated: dict[tuple, str] = {}
    for n, row in enumerate(rows):
        d = by_id.get(row.dialogue_id)
        if d is None:
            problems.append(f"{row.where}, column 'dialogue_id': unknown dialogue id {row.dialogue_id!r}")
            continue
        if row.turn is None and row.utterance_id is None:
            continue
        utt = _rated_reply(d, row, problems)
        if utt is None:
            continue
        key = (d.dialogue_id, utt.utterance_id, row.rating.rater_id, row.rating.rater_kind)
        if key in rated:
            column = "turn_ind" if row.turn is not None else "utterance_id"
            problems.append(f"{row.where}, column {column!r}: rates the same reply as {rated[key]}")
            continue
        rated[key] = row.where
        targets[n] = utt
    if problems:
        raise RatingImportError(problems, source)
    changed: dict[str, Dialogue] = {}
    for n, row in enumerate(rows):
        d = by_id[row.dialogue_id]
        replace_rating(targets[n].ratings if n in targets else d.ratings, row.rating)
        changed[d.dialogue_id] = d
    return list(changed.values())


def _by_any_id(dialogues: list[Dialogue], aliases: dict[str, str]) -> dict[str, Dialogue]:
    """Dialogues by their id, by the public id an export gave them, and by `aliases`."""
    by_id = {d.dialogue_id: d for d in dialogues}
    for d in dialogues:
        public = d.metadata.get("public_id")
        if isinstance(public, str):
            by_id.setdefault(public, d)
    for alias, dialogue_id in aliases.items():
        if dialogue_id in by_id:
            by_id.setdefault(alias, by_id[dialogue_id])
    return by_id


def _rated_reply(d: Dialogue, row: RatingRow, problems: list[str]) -> Optional[Utterance]:
    """The system reply of `d` a reply-level row rates, or None with the reason in `problems`."""
    if row.turn is not None:
        found = find_turn(d, row.turn)
        if isinstance(found, str):
            problems.append(f"{row.where}, column 'turn_ind': {row.turn.describe()}: {found}")
            return None
        utt, column, name = found, "turn_ind", row.turn.describe()
    else:
        reply = d.utterance(row.utterance_id) if row.utterance_id is not None else None
        if reply is None:
            problems.append(f"{row.where}, column 'utterance_id': dialogue {row.dialogue_id!r} has no "
                            f"utterance {row.utterance_id!r}")
            return None
        utt, column, name = reply, "utterance_id", repr(row.utterance_id)
    if utt.role != Role.AGENT:
        problems.append(f"{row.where}, column {column!r}: {name} is a user message; "
                        "reply-level aspects rate the system's replies")
        return None
    return utt


def import_into_store(store: Any, source: Union[str, Path], form: Optional[AspectForm] = None,
                      mapping: Optional[AspectMapping] = None, names: Optional[AspectNames] = None,
                      salt: Optional[str] = None) -> list[Dialogue]:
    """Attach a file's ratings to stored dialogues, saved in one transaction (or none on error).

    A row may name a dialogue by its stored id or by the id the public export gives it (made
    with `salt`, else the database's own, as `crs-arena export` makes it)."""
    rows = read_rating_file(source, form, mapping=mapping, names=names)
    ids = sorted({row.dialogue_id for row in rows})
    found = [d for d in (store.get_dialogue(i) for i in ids) if d is not None]
    missing = set(ids) - {d.dialogue_id for d in found}
    aliases = _public_ids(store, missing, salt, found) if missing else {}
    changed = attach_ratings(found, rows, str(source), aliases=aliases)
    store.save_dialogues(changed)
    return changed


def _public_ids(store: Any, wanted: set[str], salt: Optional[str], found: list[Dialogue]) -> dict[str, str]:
    """Public export id -> stored id for the stored dialogues whose public id is `wanted`; those
    dialogues are added to `found`."""
    from arena.corpus.records import is_imported, pseudonymiser, public_id, resolve_salt

    pseudonym = pseudonymiser(resolve_salt(store, salt))
    aliases: dict[str, str] = {}
    for d in store.list_dialogues():
        if not is_imported(d):
            continue  # the arena's own dialogue ids are the same in every export
        shown = public_id(d, pseudonym)
        if shown in wanted and shown != d.dialogue_id:
            aliases[shown] = d.dialogue_id
            found.append(d)
    return aliases
