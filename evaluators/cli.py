"""`python -m evaluators ...`: score dialogue files and meta-evaluate the scores.

    python -m evaluators score --input FILE --metrics acts,rdl,srrr,sr --out OUT.jsonl
    python -m evaluators score --db DB_OR_URL [--engine threads|ray [--address ADDR]]  # into the store
    python -m evaluators score --input OUT.jsonl|--db DB --explain ID  # why its RDL, SRRR, SR (explain_cli)
    python -m evaluators meta --input OUT.jsonl
    python -m evaluators recall --crs NAME --input TURNS.jsonl --out RANKED.jsonl
    python -m evaluators export --out DIR

`score` reads CRSArena-Dial/DialogueKit JSON, IARD JSON, or our own export
(JSON list or JSONL) and writes JSONL, one dialogue per line in the
CRSArena-Dial layout with "dialogue_acts" on every utterance and a top-level
"scores" object ({"rdl": 0.1, ...}); full Score records (scorer, version,
model, details, error) are under metadata.score_details.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Optional

from arena.runtime.config import Settings, reports_bad_settings
from arena.corpus import cli as corpus_cli
from arena.corpus.dialoguekit import DialogueImportError, scored_record
from arena.corpus.loading import load_dialogues, with_rename_hint
from arena.dialogue import Dialogue
from arena.runtime.files import atomic_open
from arena.runtime.distributed import ENGINES
from arena.runtime.imports import heavy_imports
from evaluators.annotator_choice import annotator_named as _annotator, client_if_needed as _client_if_needed
from evaluators import recall


record_of = scored_record  # the name the scored-corpus tests and scripts use


def cmd_score(args: argparse.Namespace) -> int:
    from arena.runtime.command_refusals import check_output_file
    from evaluators.scoring import parse_metrics

    try:
        metrics = parse_metrics(args.metrics)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if (args.db is None) == (args.input is None):
        print("error: give either --input FILE (with --out) or --db PATH", file=sys.stderr)
        return 2
    if args.explain:
        from evaluators.explain_cli import explain_command

        return explain_command(args, metrics)
    if args.db is not None:
        if args.engine == "ray":
            return _score_database(args, metrics)
        return score_stored_dialogues(args, metrics)
    if args.out is None:
        print("error: --input needs --out", file=sys.stderr)
        return 2
    check_output_file(args.out)
    return _score_file(args, metrics)


def _score_file(args: argparse.Namespace, metrics: list[str]) -> int:
    """`score --input FILE --out OUT`: every dialogue of the file scored, each written to OUT."""
    from evaluators.scoring import score_dialogue

    dialogues = _input_dialogues(args)
    settings = Settings.from_env()
    client = _client_if_needed(metrics, args.annotator, settings)
    annotator = _annotator(args.annotator, client)
    out_path = Path(args.out)
    started = time.time()
    failures: dict[str, str] = {}
    with atomic_open(out_path) as fh:
        for n, d in enumerate(dialogues, start=1):
            if args.reannotate:
                for u in d.utterances:
                    u.dialogue_acts = None
            scores = score_dialogue(d, metrics, client=client, annotator=annotator, force=args.force,
                                    settings=settings)
            failed = sorted((name, s.error) for name, s in scores.items() if s.error)
            if failed:
                failures[d.dialogue_id] = "; ".join(f"{name}: {error}" for name, error in failed)
            fh.write(json.dumps(record_of(d), ensure_ascii=False, allow_nan=False) + "\n")
            if not args.quiet and (n % 25 == 0 or n == len(dialogues)):
                print(
                    f"scored {n}/{len(dialogues)} dialogues ({time.time() - started:.0f}s)", file=sys.stderr
                )
    print(f"wrote {len(dialogues)} dialogues to {out_path}"
          + (f"; {len(failures)} with a failed metric (see metadata.score_details)" if failures else ""),
          file=sys.stderr)
    return report_failures(failures)


def _input_dialogues(args: argparse.Namespace) -> list[Dialogue]:
    """The dialogues of --input (renamed duplicates reported), at most --limit of them."""
    renamed: list = []
    try:
        dialogues = load_dialogues(Path(args.input), rename_duplicates=args.rename_duplicates,
                                   renamed=renamed)
    except DialogueImportError as exc:
        raise (exc if args.rename_duplicates else with_rename_hint(exc)) from None
    for r in renamed:
        print(f"renamed: {r.describe()}", file=sys.stderr)
    if args.limit is not None:
        dialogues = dialogues[: args.limit]
    return dialogues


def report_failures(failures: dict[str, str]) -> int:
    """One line per dialogue with a failed metric; the exit status (1 when any: a failed metric is
    stored as unscored, never as 0, but the command that stored it does not report success)."""
    for dialogue_id, why in failures.items():
        print(f"error: {dialogue_id}: {' '.join(why.split())[:300]}", file=sys.stderr)
    return 1 if failures else 0


def score_stored_dialogues(args: argparse.Namespace, metrics: list[str]) -> int:
    """Queue stored dialogues in the store's scoring queue and drain it with several workers."""
    from arena.runtime.config import Settings
    from arena.store import Store
    from evaluators.stored_scoring import QueueScorer, first_score_name

    settings = Settings.from_env(db_path=args.db)
    store = Store(settings.db_path)
    client = _client_if_needed(metrics, args.annotator, settings)
    annotator = _annotator(args.annotator, client)
    if annotator is None:
        from evaluators.scoring import default_annotator

        annotator = default_annotator(settings, client)
    missing = None if (args.all or args.force) else first_score_name(metrics)
    ids = [d.dialogue_id for d in store.list_dialogues(ended=True, missing_score=missing)]
    if args.limit is not None:
        ids = ids[: args.limit]
    store.requeue_interrupted()
    store.enqueue_scoring(ids, force=args.force or args.reannotate)
    started = time.time()
    workers = args.workers or settings.scorer_workers

    def progress(n: int) -> None:
        if not args.quiet and n % 25 == 0:
            print(f"scored {n} dialogues ({time.time() - started:.0f}s)", file=sys.stderr)

    jobs = QueueScorer(store, metrics, client=client, annotator=annotator, settings=settings)
    counts = jobs.drain(workers=workers, progress=progress)
    print(f"scored {counts['done']} stored dialogues with {workers} worker(s) in {time.time() - started:.1f}s"
          + (f"; {counts['failed']} failed attempt(s)" if counts["failed"] else ""), file=sys.stderr)
    return report_failures(jobs.failures)


def _score_database(args: argparse.Namespace, metrics: list[str]) -> int:
    from arena.runtime.config import Settings
    from arena.store import Store, describe_location
    from evaluators.bulk_scoring import ScoringJob, pending, score_all

    settings = Settings.from_env(db_path=args.db)
    job = ScoringJob(location=str(settings.db_path), metrics=tuple(metrics), settings=settings,
                     annotator=args.annotator, force=args.force)
    with Store(settings.db_path) as store:
        ids = pending(store, job, args.limit)
    print(
        f"{len(ids)} dialogues to score in {describe_location(job.location)} ({args.engine})", file=sys.stderr
    )
    started, done, failed, lost = time.time(), 0, 0, []
    failed_metrics: dict[str, str] = {}
    for outcome in score_all(job, ids, address=args.address, concurrency=args.concurrency,
                             task_cpus=args.task_cpus):
        done += 1
        if outcome.get("failed"):
            failed_metrics[outcome["dialogue_id"]] = "failed metric(s): " + ", ".join(outcome["failed"])
        if outcome.get("error"):
            lost.append(outcome)
        failed += bool(outcome.get("failed"))
        if not args.quiet and (done % 25 == 0 or done == len(ids)):
            print(f"scored {done}/{len(ids)} dialogues ({time.time() - started:.0f}s)", file=sys.stderr)
    for outcome in lost:
        print(f"not scored: {outcome['dialogue_id']}: {outcome['error']}", file=sys.stderr)
    print(
        f"stored scores of {done - len(lost)} dialogues"
        + (f"; {failed} with a failed metric" if failed else "")
        + (f"; {len(lost)} left unscored (run again to retry)" if lost else ""),
        file=sys.stderr,
    )
    return 1 if report_failures(failed_metrics) or lost else 0


def cmd_meta(args: argparse.Namespace) -> int:
    from arena.crowd.aspects import FormError, load_form, load_mapping
    with heavy_imports():
        from evaluators.meta import format_table, meta_table, ranking_correlations
        from evaluators.meta_correlations import correlation_records, format_records
    from evaluators.rating_files import RatingImportError, attach_ratings, read_rating_file

    try:
        dialogues = load_dialogues(Path(args.input))
        form = load_form(args.form or Settings.from_env().rating_form)
        if args.ratings:
            rating_rows = read_rating_file(args.ratings, form, mapping=load_mapping(form, args.mapping))
            attach_ratings(dialogues, rating_rows, args.ratings)
    except (DialogueImportError, RatingImportError, FormError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    metrics: Optional[list[str]] = [m.strip() for m in args.metrics.split(",")] if args.metrics else None
    if args.crowd:
        from arena.crowd.study import crowd_of_dialogue

        dialogues = [d for d in dialogues if crowd_of_dialogue(d) == args.crowd]
    rows = meta_table(dialogues, metrics, crowd=None)
    taus = ranking_correlations(rows, metrics)
    records = correlation_records(dialogues, form=form, metrics=metrics, group_by=args.group_by,
                                  raters=args.raters, rounds=args.rounds, seed=args.seed)
    if args.json == "-":
        print(json.dumps({"systems": rows, "kendall_tau": taus, "correlations": records}, indent=2))
        return 0
    if args.json:
        out = Path(args.json)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(records, indent=2) + "\n", encoding="utf-8")
    print(format_table(rows, taus))
    print()
    print(format_records(records))
    return 0


def build_parser() -> argparse.ArgumentParser:
    from evaluators.scoring import REGISTRY

    parser = argparse.ArgumentParser(
        prog="python -m evaluators", description="Score dialogues and meta-evaluate metrics."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("score", help="annotate dialogue acts and score dialogues from a file",
                       description="Annotate and score dialogues; write JSONL with acts and scores.")
    p.add_argument("--input", default=None, help="CRSArena-Dial/DialogueKit, IARD or our own JSON/JSONL")
    p.add_argument("--db", default=None,
                   help="score the dialogues stored in this database (file or postgresql:// URL) instead, "
                        "through its durable queue; scores are written back to the store")
    p.add_argument("--workers", type=int, default=None, help="with --db: parallel workers "
                   "(default: $ARENA_SCORER_WORKERS or 2)")
    p.add_argument("--all", action="store_true",
                   help="with --db: every ended dialogue, not only those missing a score of these metrics")
    p.add_argument("--metrics", default="acts,rdl,srrr,sr",
                   help=f"comma-separated metric groups: {', '.join(REGISTRY)} (default: acts,rdl,srrr,sr: "
                        "the arena's reading of SRRR and SR; srrr_usersimcrs,sr_usersimcrs give "
                        "UserSimCRS's)")
    p.add_argument("--out", default=None, help="output JSONL (with --input)")
    p.add_argument(
        "--engine",
        choices=ENGINES,
        default="threads",
        help="with --db: threads (the store's durable queue, --workers) or one Ray task per dialogue",
    )
    p.add_argument("--address", default=None, help="--db with Ray: cluster address (default: a local Ray)")
    p.add_argument(
        "--concurrency", type=int, default=4, help="--db with Ray: dialogues scored at once (default 4)"
    )
    p.add_argument("--task-cpus", type=float, default=1.0, help="--db with Ray: CPUs reserved per task")
    p.add_argument("--annotator", choices=["auto", "offline", "llm"], default="auto",
                   help="dialogue-act annotator (auto: LLM when an endpoint is configured, else offline)")
    p.add_argument("--reannotate", action="store_true", help="ignore dialogue acts already in the file")
    p.add_argument(
        "--force", action="store_true", help="recompute scores already present with the same version"
    )
    p.add_argument("--limit", type=int, default=None, help="only the first N dialogues")
    p.add_argument("--rename-duplicates", action="store_true",
                   help="with --input: records sharing a conversation ID (UserSimCRS output) are scored "
                        "under distinct ids, <id>-2, <id>-3..., each named on a line (refused otherwise)")
    p.add_argument("--quiet", action="store_true")
    p.add_argument(
        "--explain",
        action="append",
        default=[],
        metavar="ID",
        help="score only this dialogue (repeatable) and print why its RDL, SRRR and SR have their "
        "values: each recommendation round accepted, rejected or pending and by which utterance, "
        "|I_acc| and |d|",
    )
    p.add_argument("--explain-format", choices=["text", "json"], default="text",
                   help="with --explain: plain text, or one JSON object per dialogue")
    p.set_defaults(func=cmd_score)

    p = sub.add_parser(
        "meta",
        help="metrics against human ratings and satisfaction: Spearman, Pearson, Kendall",
        description="Per system: satisfaction, metric means and Kendall's tau; per metric and "
        "human judgement: dialogue-level Spearman and Pearson with 95%% bootstrap intervals "
        "and system-level Kendall's tau.",
    )
    p.add_argument("--input", required=True, help="scored dialogues (the output of `score`)")
    p.add_argument("--metrics", default=None, help="comma-separated score names (default: all found)")
    p.add_argument("--crowd", default=None,
                   help="only the dialogues of one crowd: 'open' (the public arena) or a study's id "
                        "(default: every dialogue of the file)")
    p.add_argument("--json", nargs="?", const="-", default=None, metavar="OUT",
                   help="write the correlation records (metric, aspect, level, spearman, pearson, ci_low, "
                        "ci_high, n, ...) as JSON to OUT; without OUT print everything as JSON")
    p.add_argument("--ratings", default=None,
                   help="human ratings file (CSV/JSON/JSONL, CRSArena-Eval records included) to attach first")
    p.add_argument("--group-by", choices=["dataset", "crs"], default=None,
                   help="correlate within each dataset or each system (people and simulators never pooled)")
    p.add_argument(
        "--raters",
        choices=["own", "human", "simulator"],
        default="own",
        help="whose aspect ratings count (own: people for human dialogues, the simulator for its own)",
    )
    p.add_argument("--rounds", type=int, default=1000, help="bootstrap resamples for the 95%% intervals")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    p.add_argument(
        "--form", default=None, help="aspect rating form YAML (default: assets/ratings/aspects_v1.yaml)"
    )
    from evaluators.ratings_cli import add_mapping_argument

    add_mapping_argument(p)
    p.set_defaults(func=cmd_meta)

    corpus_cli.add_parser(sub)
    from evaluators import ratings_cli

    ratings_cli.add_parser(sub)
    recall.add_parser(sub)
    return parser


@reports_bad_settings
def main(argv: Optional[list[str]] = None) -> int:
    from arena.runtime.command_refusals import run_refusing

    parser = build_parser()
    args = parser.parse_args(argv)
    return run_refusing(lambda: args.func(args), prog="evaluators")
