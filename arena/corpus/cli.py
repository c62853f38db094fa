"""`python -m evaluators export`: the Download tab's files, from the command line.

    python -m evaluators export --out exports/ [--db data/arena.sqlite3]
        [--crs kbrd_redial --crs chatcrs_redial] [--user-kind human|simulator] [--zip]

Writes dialogues.jsonl, votes.csv, scores.csv, scores.parquet and README.md
(the dataset card) into the folder, with pseudonymous user ids.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Optional

from arena.dialogue import UserKind


def add_parser(subparsers: "argparse._SubParsersAction") -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "export",
        help="write the rated corpus, votes, scores and a dataset card into a folder",
        description="Export the rated corpus (JSONL), votes (CSV), scores (CSV and Parquet) and a "
        "dataset card.",
    )
    parser.add_argument("--out", required=True, help="folder to write into (created if missing)")
    parser.add_argument("--db", default=None,
                        help="SQLite database (default: $ARENA_DB or data/arena.sqlite3)")
    parser.add_argument("--crs", action="append", metavar="NAME", help="only this system (repeatable)")
    parser.add_argument("--user-kind", choices=[k.value for k in UserKind],
                        help="only people or only simulators")
    parser.add_argument("--zip", action="store_true", help="also write crs-arena-corpus.zip with every file")
    parser.add_argument("--salt", default=None,
                        help="pseudonym salt (default: $ARENA_PSEUDONYM_SALT or the database's own)")
    parser.set_defaults(func=run, handler=run)
    return parser


def run(args: argparse.Namespace) -> int:
    from arena.corpus.bundle import ExportFilter, export_bundle
    from arena.store import Store

    db = args.db or os.environ.get("ARENA_DB") or "data/arena.sqlite3"
    if not os.path.exists(db):
        print(f"error: no database at {db} (set --db or ARENA_DB)", file=sys.stderr)
        return 2
    flt = ExportFilter(crs_ids=tuple(args.crs) if args.crs else None, user_kind=args.user_kind)
    with Store(db) as store:
        result = export_bundle(store, args.out, flt, salt=args.salt,
                               zip_name="crs-arena-corpus.zip" if args.zip else None)
    counts = result.counts
    print(f"wrote {counts['dialogues']} dialogues, {counts['votes']} votes and {counts['scores']} scores "
          f"to {result.folder}")
    for path in result.paths():
        print(f"  {path}")
    return 0


def main(argv: Optional[list[str]] = None) -> int:
    """Stand-alone entry (the same command as `python -m evaluators export`)."""
    parser = argparse.ArgumentParser(prog="python -m evaluators")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
