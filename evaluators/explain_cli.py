"""`score --explain ID`: why a dialogue's RDL, SRRR and SR have the values they have.

    python -m evaluators score --input scored.jsonl --explain CONV_ID [--explain ID ...]
    python -m evaluators score --db data/arena.sqlite3 --explain DIALOGUE_ID [--explain-format json]

Each named dialogue is scored first, as `score` scores it: acts the file or the
store already holds are used as they are, missing ones are annotated (and, with
--db, stored with the scores, as every scoring run does). Then
`evaluators.metrics.explain_act_metrics` lays the values open: every
recommendation round with its outcome (accepted, rejected or pending) and the
utterance that settled it, every acceptance counted in |I_acc|, |d|, and the
resulting RDL, SRRR and SR, next to the stored scores and the annotator that
made the acts. Text goes to stdout, or one JSON object per dialogue with
`--explain-format json`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Optional

from arena.dialogue import Dialogue
from evaluators.metrics import ActMetricsExplanation, MissingActs, UtteranceRef, explain_act_metrics

SNIPPET_CHARS = 70
EXPLAINED_SCORES = ("rdl", "srrr", "sr")


def explain_command(args: argparse.Namespace, metrics: list[str]) -> int:
    """Score the dialogues named by --explain (from --input or --db) and print their explanations."""
    if args.out is not None:
        print("error: --explain prints its explanations; leave out --out", file=sys.stderr)
        return 2
    ids = list(dict.fromkeys(args.explain))
    scored = (
        _score_from_db(args, metrics, ids) if args.db is not None else _score_from_file(args, metrics, ids)
    )
    if scored is None:
        return 2
    failed = 0
    for dialogue in scored:
        try:
            explanation = explain_act_metrics(dialogue)
        except MissingActs as exc:
            errors = sorted({s.error for s in dialogue.scores.values() if s.error})
            print(f"error: dialogue {dialogue.dialogue_id!r} has no acts to explain ({exc}"
                  + (f"; {errors[0]}" if errors else "") + ")", file=sys.stderr)
            failed += 1
            continue
        if args.explain_format == "json":
            print(json.dumps(explanation_record(dialogue, explanation), ensure_ascii=False))
        else:
            print(format_explanation(dialogue, explanation))
    return 1 if failed else 0


def _score_from_file(
    args: argparse.Namespace, metrics: list[str], ids: list[str]
) -> Optional[list[Dialogue]]:
    from arena.runtime.config import Settings
    from arena.corpus.loading import load_dialogues
    from evaluators.annotator_choice import annotator_named, client_if_needed
    from evaluators.scoring import score_dialogue

    by_id = {d.dialogue_id: d for d in load_dialogues(Path(args.input))}
    unknown = [i for i in ids if i not in by_id]
    if unknown:
        print(f"error: no dialogue {unknown[0]!r} in {args.input}", file=sys.stderr)
        return None
    settings = Settings.from_env()
    client = client_if_needed(metrics, args.annotator, settings)
    annotator = annotator_named(args.annotator, client)
    for dialogue_id in ids:
        score_dialogue(by_id[dialogue_id], metrics, client=client, annotator=annotator, force=args.force,
                       settings=settings)
    return [by_id[i] for i in ids]


def _score_from_db(args: argparse.Namespace, metrics: list[str], ids: list[str]) -> Optional[list[Dialogue]]:
    from arena.runtime.config import Settings
    from arena.store import Store, is_database_url
    from evaluators.annotator_choice import annotator_named, client_if_needed
    from evaluators.stored_scoring import score_and_store

    if not is_database_url(args.db) and not Path(args.db).exists():
        print(f"error: no database at {args.db}", file=sys.stderr)
        return None
    settings = Settings.from_env(db_path=args.db)
    with Store(settings.db_path) as store:
        missing = sorted(set(ids) - store.dialogue_ids(ids))
        if missing:
            print(f"error: no dialogue {missing[0]!r} in {args.db}", file=sys.stderr)
            return None
        client = client_if_needed(metrics, args.annotator, settings)
        # None: scoring builds the default if acts are missing
        annotator = annotator_named(args.annotator, client)
        return [score_and_store(store, i, args.force, metrics, client=client, annotator=annotator,
                                settings=settings)[0] for i in ids]


# -- presenting ------------------------------------------------------------------------------


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SNIPPET_CHARS else flat[: SNIPPET_CHARS - 3] + "..."


def _utterance(ref: UtteranceRef, dialogue_annotator: Optional[str]) -> str:
    source = "" if ref.annotator == dialogue_annotator else f"; acts by {ref.annotator or 'the corpus'}"
    return f'utterance {ref.index} "{_snippet(ref.text)}" [{", ".join(ref.intents)}{source}]'


def _fraction(numerator: int, denominator: int, value: float) -> str:
    return f"{numerator}/{denominator} = {value:.3f}"


def format_explanation(dialogue: Dialogue, explanation: ActMetricsExplanation) -> str:
    """The explanation as plain text, one line per round and per counted acceptance."""
    annotator = dialogue.metadata.get("acts_annotator")
    lines = [f"dialogue {dialogue.dialogue_id} ({dialogue.crs_id}): acts by "
             + (annotator or "the corpus (provided with the dialogue)")]
    for r in explanation.rounds:
        titles = f" recommends {', '.join(r.titles)}" if r.titles else ""
        lines.append(f"  round {r.number}: {_utterance(r.recommend, annotator)}{titles}")
        if r.decided_by is not None:
            lines.append(f"    {r.outcome} by {_utterance(r.decided_by, annotator)}")
        else:
            until = "the next recommendation" if r.number < len(explanation.rounds) else "the end"
            lines.append(f"    pending: no Accept or Reject before {until}")
    if not explanation.rounds:
        lines.append("  no recommendation rounds (no utterance with a Recommend act)")
    lines.append(f"  |I_acc| = {len(explanation.acceptances)} user utterance(s) with an Accept act")
    for a in explanation.acceptances:
        where = (
            "before any recommendation"
            if a.round is None
            else f"decides round {a.round}"
            if a.decides_round
            else f"in round {a.round}, after its decision"
        )
        lines.append(f"    {_utterance(a.utterance, annotator)}: {where}")
    accepted = sum(r.outcome == "accepted" for r in explanation.rounds)
    lines += [
        f"  |d| = {explanation.length} {explanation.length_unit}",
        "  RDL = |I_acc| / |d| = "
        + _fraction(len(explanation.acceptances), explanation.length, explanation.rdl),
        "  SRRR = accepted rounds / rounds = "
        + (
            _fraction(accepted, len(explanation.rounds), explanation.srrr)
            if explanation.rounds
            else "0 (no rounds)"
        ),
        f"  SR = {explanation.sr:.0f} ({'a' if explanation.sr else 'no'} round accepted)",
    ]
    stored = _stored_scores(dialogue, explanation)
    if stored:
        lines.append("  stored: " + "; ".join(
            f"{name} {'unscored' if s['value'] is None else format(s['value'], '.3f')} "
            f"(version {s['version']})"
            + ("" if s["agrees"] else " DIFFERS from these acts; --force recomputes it")
            for name, s in stored.items()))
    return "\n".join(lines)


def _stored_scores(dialogue: Dialogue, explanation: ActMetricsExplanation) -> dict[str, dict[str, Any]]:
    values = {"rdl": explanation.rdl, "srrr": explanation.srrr, "sr": explanation.sr}
    out = {}
    for name in EXPLAINED_SCORES:
        score = dialogue.scores.get(name)
        if score is not None:
            agrees = score.value is not None and abs(score.value - values[name]) < 1e-12
            out[name] = {"value": score.value, "version": score.version, "agrees": agrees}
    return out


def explanation_record(dialogue: Dialogue, explanation: ActMetricsExplanation) -> dict[str, Any]:
    """The explanation as one JSON object, with the dialogue's id, the acts' annotator and its stored
    scores."""
    return {"dialogue_id": dialogue.dialogue_id, "crs_id": dialogue.crs_id,
            "acts_annotator": dialogue.metadata.get("acts_annotator"), **explanation.as_dict(),
            "stored_scores": _stored_scores(dialogue, explanation)}
