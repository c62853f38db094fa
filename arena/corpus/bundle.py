"""The downloadable rated corpus: dialogues, votes, scores and a dataset card.

One call, `export_bundle`, writes into a folder:

* `dialogues.jsonl`: one CRSArena-Dial/DialogueKit record per dialogue with
  feedback, scores and the battle vote it took part in (the records of
  `arena.corpus.records`, which also pseudonymises user ids);
* `dialogues.json`: the same records as one JSON list, the file DialogueKit's
  reader (`json_to_dialogues`) and UserSimCRS load;
* `votes.csv`: one row per battle vote;
* `scores.csv` and `scores.parquet`: one row per dialogue and metric;
* `README.md`: a dataset card with counts, fields and the licence.

Filters (systems, human/simulated users) apply to every file. Every file is
built from one read of the store, so the files agree with each other even
while people keep chatting.
"""

from __future__ import annotations

import csv
import json
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Sequence, Union

from arena.llm.redaction import redact_optional
from arena.text_safety import escape_markdown, neutralise_cell
from arena.dialogue import Dialogue, UserKind, Vote, utc_now
from arena.corpus.records import export_record, pseudonymiser, resolve_salt, shown_id
from arena.runtime.config import ASSETS_DIR
from arena.runtime.files import atomic_path
from arena.runtime.imports import heavy_imports
from arena.store import Store
from arena.store.board_rows import label_orders_of
from arena.crowd.study import STUDY_KEY, STUDY_VERSION_KEY, StudyError, crowd_of_vote, parse_study
from arena.crowd.counting import VOID_FLAG, Participants, visibility, void_votes
from arena.crowd.agreement import agreement_report, describe

# The card's prose, with the counts and tables of an export filled in (Jinja, as huggingface_hub renders it).
CARD_TEMPLATE = ASSETS_DIR / "corpus" / "dataset_card.md"
LICENCE = "CC BY 4.0"
LICENCE_ID = "cc-by-4.0"
FILES = {
    "dialogues": "dialogues.jsonl",
    "dialogues_json": "dialogues.json",
    "votes": "votes.csv",
    "scores_csv": "scores.csv",
    "scores_parquet": "scores.parquet",
    "card": "README.md",
}
VOTE_COLUMNS = [
    "vote_id", "battle_id", "timestamp", "crs_a", "crs_b", "dialogue_a", "dialogue_b", "choice", "winner",
    "comment", "user_id", "user_kind", "flagged", "crowd", "study_version", "session_order",
]
SCORE_COLUMNS = [
    "dialogue_id", "crs_id", "user_kind", "user_id", "sentiment", "metric", "value", "scorer", "version",
    "model", "error", "scored_at", "utterance_id", "rater_id", "rater_kind", "prompt_version",
]
RATING_PREFIX = "rating."  # metric names of aspect ratings in the score tables: rating.<aspect>


@dataclass(frozen=True)
class ExportFilter:
    crs_ids: Optional[tuple[str, ...]] = None  # None: every system
    user_kind: Optional[str] = None  # "human", "simulator" or None for both
    crowd: Optional[str] = None  # "open" (the public arena), a study id (arena.crowd.study), None: all
    left_out_users: frozenset[str] = frozenset()  # stored user ids left out (a study's flagged workers)

    def __post_init__(self) -> None:
        if self.user_kind is not None:
            UserKind(self.user_kind)  # raises ValueError on anything else

    @property
    def participants(self) -> Participants:
        """The crowd, audience and left-out users, as the boards select them (`arena.crowd.counting`)."""
        return Participants(crowd=self.crowd, user_kind=self.user_kind, left_out_users=self.left_out_users)

    def keeps_dialogue(self, d: Dialogue) -> bool:
        return (self.crs_ids is None or d.crs_id in self.crs_ids) and self.participants.keeps_dialogue(d)

    def keeps_vote(self, v: Vote) -> bool:
        return (self.crs_ids is None or v.crs_a in self.crs_ids or v.crs_b in self.crs_ids) \
            and self.participants.keeps_vote(v)

    def describe(self) -> str:
        systems = ", ".join(self.crs_ids) if self.crs_ids is not None else "all"
        users = {"human": "people only", "simulator": "simulators only"}.get(
            self.user_kind or "", "people and simulators"
        )
        crowd = "" if self.crowd is None else f"; crowd: {self.crowd}"
        return f"systems: {systems}; users: {users}{crowd}"


@dataclass
class Snapshot:
    """The filtered dialogues and votes, read once."""

    dialogues: list[Dialogue]
    votes: list[Vote]
    filter: ExportFilter
    taken_at: datetime = field(default_factory=utc_now)
    flags: dict[str, str] = field(default_factory=dict)  # vote id -> why it was flagged
    orders: dict[str, int] = field(default_factory=dict)  # vote id -> its order in its session
    label_orders: dict[str, int] = field(default_factory=dict)  # dialogue id -> its label's order


def _no_study_data(d: Dialogue) -> bool:
    """A study task's conversation without a message (handed out, then left or swapped), or one of a
    researcher's preview walks: no data."""
    return bool(d.metadata.get(STUDY_KEY)) and (not d.utterances or bool(d.metadata.get("preview")))


def take_snapshot(store: Store, flt: Optional[ExportFilter] = None) -> Snapshot:
    """Hidden dialogues and battles not yet voted on are never exported; flagged votes are, marked."""
    flt = flt or ExportFilter()
    all_votes = store.list_votes()
    seen = visibility(store, all_votes)
    dialogues = [d for d in seen.dialogues(store.list_dialogues(
        crs_id=list(flt.crs_ids) if flt.crs_ids is not None else None, user_kind=flt.user_kind
    )) if flt.keeps_dialogue(d) and not _no_study_data(d)]
    votes = [v for v in seen.votes(all_votes, include_flagged=True) if flt.keeps_vote(v)]
    # A battle where a system failed a turn is void (the leaderboard leaves it out); an earlier flag stays.
    flags = {**void_votes(dialogues, votes), **seen.flags}
    return Snapshot(dialogues=dialogues, votes=votes, filter=flt, flags=flags, orders=store.vote_orders(),
                    label_orders=label_orders_of(store.board_rows()))


# -- rows ---------------------------------------------------------------------------


def vote_rows(votes: Iterable[Vote], pseudonym: Callable[[str], str],
              flags: Optional[dict[str, str]] = None,
              orders: Optional[dict[str, int]] = None) -> list[dict[str, Any]]:
    flags, orders = flags or {}, orders or {}
    return [
        {
            "vote_id": v.vote_id,
            "battle_id": v.battle_id,
            "timestamp": v.timestamp.isoformat(),
            "crs_a": v.crs_a,
            "crs_b": v.crs_b,
            "dialogue_a": v.dialogue_a,
            "dialogue_b": v.dialogue_b,
            "choice": v.choice,
            "winner": v.winner or "",
            "comment": v.comment,
            "user_id": pseudonym(v.user_id),
            "user_kind": v.user_kind.value,
            "flagged": flags.get(v.vote_id, ""),
            "crowd": crowd_of_vote(v),
            "study_version": v.study_version if v.study_version is not None else "",
            "session_order": orders.get(v.vote_id, ""),  # arena.store.session_order; none for a pooled id
        }
        for v in votes
    ]


def score_rows(dialogues: Iterable[Dialogue], pseudonym: Callable[[str], str],
               source_ids: bool = False) -> list[dict[str, Any]]:
    """One row per (dialogue, metric) and per rated aspect; `value` is None for unscored (never 0).

    Aspect ratings appear as metric `rating.<aspect>`, one row per rater (and per
    reply for reply-level aspects, with `utterance_id`); skipped aspects have no row.
    Dialogue and utterance ids are written as the dialogues file writes them.
    """
    rows = []
    for d in dialogues:
        shown = shown_id(d, pseudonym, source_ids)
        base = {"dialogue_id": shown(d.dialogue_id), "crs_id": d.crs_id, "user_kind": d.user.kind.value,
                "user_id": pseudonym(d.user.id), "sentiment": d.feedback.sentiment if d.feedback else None}
        for metric, s in sorted(d.scores.items()):
            rows.append({
                **base, "metric": metric, "value": s.value, "scorer": s.scorer, "version": s.version,
                "model": s.model, "error": redact_optional(s.error), "scored_at": s.timestamp.isoformat(),
                "utterance_id": None, "rater_id": None, "rater_kind": None, "prompt_version": None,
            })
        rated = [(None, r) for r in d.ratings] + [
            (u.utterance_id, r) for u in d.utterances for r in u.ratings
        ]
        for utterance_id, r in rated:
            utterance_id = shown(utterance_id) if utterance_id is not None else None
            rater = pseudonym(r.rater_id) if r.rater_kind == UserKind.HUMAN else r.rater_id
            for aspect, value in sorted(r.values.items()):
                rows.append(
                    {
                        **base,
                        "metric": RATING_PREFIX + aspect,
                        "value": value,
                        "scorer": f"{r.rater_kind.value} rating",
                        "version": r.form_version,
                        "model": r.model,
                        "error": redact_optional(r.error),
                        "scored_at": r.timestamp.isoformat(),
                        "utterance_id": utterance_id,
                        "rater_id": rater,
                        "rater_kind": r.rater_kind.value,
                        "prompt_version": r.prompt_version,
                    }
                )
    return rows


# -- writers ------------------------------------------------------------------------


def _atomic(path: Path, write: Callable[[Path], object]) -> None:
    with atomic_path(path) as tmp:
        write(tmp)


def _write_text(path: Path, text: str) -> None:
    _atomic(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def _write_csv(path: Path, columns: Sequence[str], rows: list[dict[str, Any]]) -> None:
    def write(tmp: Path) -> None:
        with open(tmp, "w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(columns))
            writer.writeheader()
            for row in rows:  # no cell a spreadsheet would run as a formula (OWASP)
                writer.writerow({k: ("" if row[k] is None else neutralise_cell(row[k])) for k in columns})

    _atomic(path, write)


def _write_scores_parquet(path: Path, rows: list[dict[str, Any]]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([(name, pa.float64() if name == "value" else pa.string()) for name in SCORE_COLUMNS])
    # Parquet files are opened in spreadsheets too: the same neutralised cells as the CSV.
    rows = [{k: neutralise_cell(v) for k, v in row.items()} for row in rows]
    table = pa.Table.from_pylist(rows, schema=schema)
    _atomic(path, lambda tmp: pq.write_table(table, tmp))


def _write_dialogues(jsonl: Path, json_list: Path, snapshot: Snapshot, pseudonym: Callable[[str], str],
                     source_ids: bool = False) -> None:
    """The records twice: JSON Lines, and one JSON list for DialogueKit's reader."""
    by_dialogue: dict[str, Vote] = {}
    for v in snapshot.votes:
        by_dialogue[v.dialogue_a] = v
        by_dialogue[v.dialogue_b] = v
    records = [export_record(d, pseudonym, by_dialogue.get(d.dialogue_id), source_ids=source_ids,
                             label_order=snapshot.label_orders.get(d.dialogue_id))
               for d in snapshot.dialogues]

    def write_lines(tmp: Path) -> None:
        with open(tmp, "w", encoding="utf-8") as fh:
            for rec in records:
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")

    def write_list(tmp: Path) -> None:
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(records, fh, ensure_ascii=False, indent=1)

    _atomic(jsonl, write_lines)
    _atomic(json_list, write_list)


@dataclass
class ExportResult:
    folder: Path
    files: dict[str, Path]
    counts: dict[str, int]

    def paths(self) -> list[Path]:
        return list(self.files.values())


def study_files(store: Store, snapshot: Snapshot) -> dict[str, str]:
    """The study file of every (study, version) the exported data ran under, as `study-<id>-v<n>.yaml`, with
    the completion code left out: it is the workers' proof of completion on their platform."""
    runs = {(str(d.metadata[STUDY_KEY]), int(d.metadata[STUDY_VERSION_KEY])) for d in snapshot.dialogues
            if d.metadata.get(STUDY_KEY) and d.metadata.get(STUDY_VERSION_KEY) is not None}
    runs |= {
        (v.study, int(v.study_version)) for v in snapshot.votes if v.study and v.study_version is not None
    }
    out = {}
    for study_id, version in sorted(runs):
        found = store.study_text(study_id, version)
        if found is None:
            continue
        text = found[1]
        try:
            code = parse_study(text).completion_code
        except StudyError:
            code = None
        out[f"study-{study_id}-v{version}.yaml"] = text.replace(code, "LEFT-OUT") if code else text
    return out


def export_bundle(
    store: Store,
    folder: Union[str, Path],
    flt: Optional[ExportFilter] = None,
    *,
    salt: Optional[str] = None,
    zip_name: Optional[str] = None,
    extras: Optional[dict[str, str]] = None,
    source_ids: bool = False,
) -> ExportResult:
    """Write every export file (and optionally a zip of them) into `folder`; `extras` (file name -> text,
    e.g. a study's file) are written and zipped beside them. `source_ids`: a researchers' export
    where imported corpora keep their own ids (`arena.corpus.records`)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    snapshot = take_snapshot(store, flt or ExportFilter())
    extras = {**study_files(store, snapshot), **(extras or {})}
    pseudonym = pseudonymiser(resolve_salt(store, salt))
    files = {key: folder / name for key, name in FILES.items()}
    scores = score_rows(snapshot.dialogues, pseudonym, source_ids)
    _write_dialogues(files["dialogues"], files["dialogues_json"], snapshot, pseudonym, source_ids)
    _write_csv(files["votes"], VOTE_COLUMNS, vote_rows(snapshot.votes, pseudonym, snapshot.flags,
                                                        snapshot.orders))
    _write_csv(files["scores_csv"], SCORE_COLUMNS, scores)
    _write_scores_parquet(files["scores_parquet"], scores)
    card = dataset_card(snapshot, extras=sorted(extras or {}), source_ids=source_ids)
    _write_text(files["card"], card)
    for name, text in (extras or {}).items():
        files[name] = folder / Path(name).name
        _write_text(files[name], text)
    counts = {"dialogues": len(snapshot.dialogues), "votes": len(snapshot.votes), "scores": len(scores)}
    if zip_name:
        bundle = folder / zip_name
        members = list(files.values())
        _atomic(bundle, lambda tmp: _zip(tmp, members))
        files["zip"] = bundle
    return ExportResult(folder=folder, files=files, counts=counts)


def _zip(tmp: Path, members: list[Path]) -> None:
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for member in members:
            zf.write(member, arcname=member.name)


# -- dataset card -----------------------------------------------------------------------


def _table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    # Cells hold stored text (system ids): escaped, so no markup or image reaches the rendered card.
    lines += [
        "| " + " | ".join(str(c) if isinstance(c, (int, float)) else escape_markdown(c) for c in row) + " |"
        for row in rows
    ]
    return "\n".join(lines)


METRIC_MEANINGS = {
    "rdl": "reward per dialogue length: accepted recommendations over the number of utterances",
    "srrr": "successful recommendation round ratio: recommendation rounds the user accepted, over all rounds",
    "sr": "success rate: 1 if the user accepted any recommendation, else 0",
    "srrr_usersimcrs": "SRRR as UserSimCRS computes it: rounds counted from the start of the dialogue, "
                       "each settled by the user's last decision in it",
    "sr_usersimcrs": "SR as UserSimCRS computes it: 1 if any of its rounds (the opening one included) is "
                     "accepted",
    "core": "CoRE: an LLM judge's score (0-100) over twelve factors of the system's replies",
    "rating": "an aspect rating given by a person or a simulator (`rating.<aspect>`)",
}


def _agreement_section(snapshot: Snapshot) -> str:
    """Krippendorff's alpha where two or more people judged the same dialogue, reply or battle of the export
    (`arena.crowd.agreement`), or one line saying nothing was judged twice."""
    votes = [(v.dialogue_a, v.dialogue_b, v.user_id, v.choice) for v in snapshot.votes
             if v.user_kind == UserKind.HUMAN and v.vote_id not in snapshot.flags]
    results = agreement_report(snapshot.dialogues, votes=votes)
    if not results:
        return "_No aspect rating, verdict or vote by a person in this export._"
    # Only the aspect's name is stored text (an imported file names it) and is escaped; the rest is ours.
    return "\n".join(["| judgement | scale | Krippendorff's alpha [95% CI] | units | raters |",
                      "|---|---|---|---|---|",
                      *(f"| {escape_markdown(r.name)} | {r.level} | {describe(r)} | {r.units} | {r.raters} |"
                        for r in results)])


def _crowd_section(snapshot: Snapshot, extras: Sequence[str]) -> str:
    """Which crowd the export holds and, for a study, the versions of its file the data ran under (empty
    when the export holds every crowd and no study file)."""
    flt = snapshot.filter
    if flt.crowd is None:
        if not extras:
            return ""
        return (
            "The open arena and crowdsourced studies together: a study's dialogues carry its "
            "id, the version of its study file and the worker's standing (see Fields); the study files are "
            "included (" + ", ".join(escape_markdown(n) for n in extras) + ", completion codes left "
            "out)."
        )
    if flt.crowd == "open":
        return "The open arena only: crowdsourced studies are exported on their own."
    versions = sorted({int(d.metadata[STUDY_VERSION_KEY]) for d in snapshot.dialogues
                       if d.metadata.get(STUDY_VERSION_KEY) is not None})
    shown = ", ".join(str(v) for v in versions) or "none yet"
    return (f"The crowdsourced study `{escape_markdown(flt.crowd)}`; the data ran under "
            f"version(s) {shown} of its study file"
            + (f" (included: {', '.join(escape_markdown(n) for n in extras)})" if extras else "")
            + ". Workers are pseudonyms; workers who failed a quality check "
            + ("are left out." if flt.left_out_users else "are included."))


def dataset_card(snapshot: Snapshot, extras: Sequence[str] = (), source_ids: bool = False) -> str:
    """A Markdown dataset card describing this export: the Hub's metadata (`DatasetCardData`, the YAML
    front matter) and the body rendered from `assets/corpus/dataset_card.md`."""
    dialogues, votes = snapshot.dialogues, snapshot.votes
    per_system: dict[str, Counter] = {}
    for d in dialogues:
        c = per_system.setdefault(d.crs_id, Counter())
        c[d.user.kind.value] += 1
        c["turns"] += d.num_turns
        if d.feedback is not None:
            c[d.feedback.sentiment] += 1
        c["scored"] += any(s.value is not None for s in d.scores.values())
    metrics = Counter(m for d in dialogues for m, s in d.scores.items() if s.value is not None)
    choices = Counter(v.choice for v in votes)
    n_human = sum(c["human"] for c in per_system.values())
    n_sim = sum(c["simulator"] for c in per_system.values())
    size = "n<1K" if len(dialogues) < 1000 else ("1K<n<10K" if len(dialogues) < 10_000 else "n>10K")

    system_rows = [
        (name, c["human"], c["simulator"], c["turns"], c["satisfied"], c["frustrated"], c["scored"])
        for name, c in sorted(per_system.items())
    ]
    # "acts" only says the dialogue acts were annotated (the share of utterances annotated): not a metric.
    annotated = metrics.pop("acts", 0)
    with heavy_imports():
        from huggingface_hub import DatasetCard, DatasetCardData

    metadata = DatasetCardData(license=LICENCE_ID, language=["en"], task_categories=["text-generation"],
                               tags=["conversational-recommendation", "user-satisfaction",
                                     "pairwise-comparison"],
                               size_categories=[size])
    card = DatasetCard.from_template(
        metadata, template_path=str(CARD_TEMPLATE),
        taken_at=snapshot.taken_at.strftime("%Y-%m-%d %H:%M UTC"),
        selection=escape_markdown(snapshot.filter.describe()), licence=LICENCE,
        n_dialogues=len(dialogues), n_human=n_human, n_simulated=n_sim, n_votes=len(votes), choices=choices,
        n_scored=sum(metrics.values()) + annotated,
        systems_table=_table(["system", "with people", "with simulators", "user turns", "satisfied",
                              "frustrated", "with scores"], system_rows)
        if system_rows else "_No dialogues match the filters._",
        metrics_table=_table(["metric", "dialogues scored", "what it measures"],
                             [(m, n, METRIC_MEANINGS.get(m.split(".")[0], "see docs/metrics.md"))
                              for m, n in sorted(metrics.items())]) if metrics else "",
        annotated=annotated, crowd=_crowd_section(snapshot, extras), source_ids=source_ids,
        agreement=_agreement_section(snapshot),
        files=FILES, files_table=_table(["file", "content"], [
            (FILES["dialogues"], "one dialogue per line, CRSArena-Dial/DialogueKit layout plus extras"),
            (FILES["dialogues_json"], "the same dialogues as one JSON list (DialogueKit's reader loads it)"),
            (FILES["votes"], "one battle vote per row"),
            (FILES["scores_csv"], "one (dialogue, metric) score per row"),
            (FILES["scores_parquet"], "the same scores as Parquet"),
        ]),
        vote_columns=", ".join(f"`{c}`" for c in VOTE_COLUMNS), void_flag=VOID_FLAG,
        score_columns=", ".join(f"`{c}`" for c in SCORE_COLUMNS),
    )
    return str(card)
