"""`python -m evaluators ...`: score dialogue files and meta-evaluate the scores.

    python -m evaluators score --input FILE --metrics acts,rdl,srrr,sr --out OUT.jsonl
    python -m evaluators meta --input OUT.jsonl
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
from typing import Any, Optional

from arena.corpus import cli as corpus_cli
from evaluators import recall


def _annotator(kind: str, client: Any):
    if kind == "offline":
        from evaluators.acts.offline import OfflineActAnnotator

        return OfflineActAnnotator()
    if kind == "llm":
        from evaluators.acts.llm import LLMActAnnotator

        return LLMActAnnotator(client)
    return None  # auto: scoring.default_annotator decides


def _client_if_needed(metrics: list[str], annotator_kind: str, settings: Any):
    needs = "core" in metrics or annotator_kind == "llm" or (
        annotator_kind == "auto" and settings.llm_provider == "openai")
    if not needs:
        return None
    from arena.llm import build_client

    return build_client(settings)


def record_of(dialogue) -> dict[str, Any]:
    from arena.corpus.dialoguekit import to_dialoguekit

    rec = to_dialoguekit(dialogue)
    rec["scores"] = {name: s.value for name, s in sorted(dialogue.scores.items())}
    return rec


def cmd_score(args: argparse.Namespace) -> int:
    from arena.config import Settings
    from arena.corpus.dialoguekit import DialogueImportError, load_dialogues
    from evaluators.scoring import parse_metrics, score_dialogue

    try:
        metrics = parse_metrics(args.metrics)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        dialogues = load_dialogues(Path(args.input))
    except DialogueImportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.limit is not None:
        dialogues = dialogues[: args.limit]
    settings = Settings.from_env()
    client = _client_if_needed(metrics, args.annotator, settings)
    annotator = _annotator(args.annotator, client)
    out_path = Path(args.out)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    started = time.time()
    failures = 0
    tmp = out_path.with_suffix(out_path.suffix + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for n, d in enumerate(dialogues, start=1):
            if args.reannotate:
                for u in d.utterances:
                    u.dialogue_acts = None
            scores = score_dialogue(d, metrics, client=client, annotator=annotator, force=args.force,
                                    settings=settings)
            failures += any(s.error for s in scores.values())
            fh.write(json.dumps(record_of(d), ensure_ascii=False) + "\n")
            if not args.quiet and (n % 25 == 0 or n == len(dialogues)):
                print(f"scored {n}/{len(dialogues)} dialogues ({time.time() - started:.0f}s)", file=sys.stderr)
    tmp.replace(out_path)
    print(f"wrote {len(dialogues)} dialogues to {out_path}"
          + (f"; {failures} with a failed metric (see metadata.score_details)" if failures else ""),
          file=sys.stderr)
    return 0


def cmd_meta(args: argparse.Namespace) -> int:
    from arena.corpus.dialoguekit import DialogueImportError, load_dialogues
    from evaluators.meta import format_table, meta_table, ranking_correlations

    try:
        dialogues = load_dialogues(Path(args.input))
    except DialogueImportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    metrics: Optional[list[str]] = [m.strip() for m in args.metrics.split(",")] if args.metrics else None
    rows = meta_table(dialogues, metrics)
    taus = ranking_correlations(rows, metrics)
    if args.json:
        print(json.dumps({"systems": rows, "kendall_tau": taus}, indent=2))
    else:
        print(format_table(rows, taus))
    return 0


def build_parser() -> argparse.ArgumentParser:
    from evaluators.scoring import REGISTRY

    parser = argparse.ArgumentParser(prog="python -m evaluators", description="Score dialogues and meta-evaluate metrics.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("score", help="annotate dialogue acts and score dialogues from a file",
                       description="Annotate and score dialogues; write JSONL with acts and scores.")
    p.add_argument("--input", required=True, help="CRSArena-Dial/DialogueKit, IARD or our own JSON/JSONL")
    p.add_argument("--metrics", default="acts,rdl,srrr,sr",
                   help=f"comma-separated metric groups: {', '.join(REGISTRY)} (default: acts,rdl,srrr,sr)")
    p.add_argument("--out", required=True, help="output JSONL")
    p.add_argument("--annotator", choices=["auto", "offline", "llm"], default="auto",
                   help="dialogue-act annotator (auto: LLM when an endpoint is configured, else offline)")
    p.add_argument("--reannotate", action="store_true", help="ignore dialogue acts already in the file")
    p.add_argument("--force", action="store_true", help="recompute scores already present with the same version")
    p.add_argument("--limit", type=int, default=None, help="only the first N dialogues")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_score)

    p = sub.add_parser("meta", help="per-system satisfaction, metric means and Kendall tau",
                       description="Rank systems by each metric and by user satisfaction; print Kendall's tau.")
    p.add_argument("--input", required=True, help="scored dialogues (the output of `score`)")
    p.add_argument("--metrics", default=None, help="comma-separated score names (default: all found)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=cmd_meta)

    corpus_cli.add_parser(sub)
    recall.add_parser(sub)
    return parser


def main(argv: Optional[list[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return int(args.func(args) or 0)
