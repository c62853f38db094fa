"""The corpus command line: `crs-arena export|import` (also `python -m arena.corpus`,
`python -m evaluators export`).

    crs-arena export --out exports/ [--db data/arena.sqlite3]
        [--crs kbrd_redial --crs chatcrs_redial] [--user-kind human|simulator] [--zip]
    crs-arena export --out corpus.jsonl          # only the dialogues (.json: one JSON list)
    crs-arena export --out corpus.json --source-ids   # researchers: imported corpora keep their ids
    crs-arena import FILE [--crs-id NAME] [--replace] [--rename-duplicates]   # CRSArena-Dial, DialogueKit,
                                                    # IARD, ReDial or UserSimCRS output; JSON or JSONL

A folder gets dialogues.jsonl, votes.csv, scores.csv, scores.parquet and README.md
(the dataset card); user ids are pseudonymous in every file.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Optional, Union

from arena.runtime.config import Settings, reports_bad_settings
from arena.corpus.bundle import ExportFilter, export_bundle
from arena.corpus.dialoguekit import DialogueImportError
from arena.corpus.loading import Renamed, load_dialogues, with_rename_hint
from arena.corpus.records import export_json, export_jsonl, import_dialogues
from arena.dialogue import UserKind
from arena.runtime.command_refusals import check_output_file, run_refusing
from arena.store import Store, is_database_url

SINGLE_FILE_SUFFIXES = (".json", ".jsonl")


def _db_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        default=None,
        help="SQLite file or postgresql:// URL (default: $ARENA_DB or data/arena.sqlite3)",
    )


def add_parser(subparsers: "argparse._SubParsersAction") -> argparse.ArgumentParser:
    """The `export` command."""
    parser = subparsers.add_parser(
        "export",
        help="write the rated corpus, votes, scores and a dataset card into a folder",
        description="Export the rated corpus (JSONL), votes (CSV), scores (CSV and Parquet) and a dataset "
        "card into a folder; or, for an --out ending in .jsonl or .json, only the dialogues into that file.",
    )
    parser.add_argument(
        "--out", required=True, help="folder to write into (created if missing), or a .jsonl/.json file"
    )
    _db_option(parser)
    parser.add_argument("--crs", action="append", metavar="NAME", help="only this system (repeatable)")
    parser.add_argument("--user-kind", choices=[k.value for k in UserKind],
                        help="only people or only simulators")
    parser.add_argument(
        "--ended-only", action="store_true", help="only dialogues that ended (.jsonl/.json only)"
    )
    parser.add_argument("--zip", action="store_true", help="also write crs-arena-corpus.zip with every file")
    parser.add_argument("--salt", default=None,
                        help="pseudonym salt (default: $ARENA_PSEUDONYM_SALT or the database's own)")
    parser.add_argument("--source-ids", action="store_true",
                        help="researchers' export, not for publication: imported corpora keep their "
                             "source's conversation and utterance ids (metadata.public_id names the public "
                             "one), so files keyed by them (ratings, annotations) still join")
    parser.set_defaults(func=run_export, handler=run_export)
    return parser


def add_import_parser(subparsers: "argparse._SubParsersAction") -> argparse.ArgumentParser:
    """The `import` command."""
    parser = subparsers.add_parser(
        "import", help="load a corpus file into the database",
        description="Load a CRSArena-Dial, DialogueKit or IARD file (JSON or JSONL) into the database; "
        "a file with a broken record is rejected as a whole.",
    )
    parser.add_argument("path", help="the corpus file")
    _db_option(parser)
    parser.add_argument("--crs-id", default="unknown", help="system id for records without agent.id")
    parser.add_argument("--replace", action="store_true",
                        help="overwrite dialogues whose ids are already stored (refused otherwise)")
    parser.add_argument("--rename-duplicates", action="store_true",
                        help="records sharing a conversation ID (UserSimCRS names a dialogue after the "
                             "second it started in) get distinct ids, <id>-2, <id>-3..., each named on "
                             "a line; refused otherwise")
    parser.set_defaults(func=run_import, handler=run_import)
    return parser


def _database(args: argparse.Namespace) -> Union[Path, str]:
    """The store's file path, or its database URL."""
    return Settings.from_env(db_path=args.db).db_path


def run_export(args: argparse.Namespace) -> int:
    return run_refusing(lambda: _export(args), prog="crs-arena export")


def _export(args: argparse.Namespace) -> int:
    settings = Settings.from_env(db_path=args.db)
    db = settings.db_path
    salt = args.salt or (settings.pseudonym_salt.get_secret_value() if settings.pseudonym_salt else None)
    if not is_database_url(str(db)) and not Path(db).exists():
        print(f"error: no database at {db} (set --db or ARENA_DB)", file=sys.stderr)
        return 2
    ended = True if args.ended_only else None
    with Store(db) as store:
        if args.out.endswith(SINGLE_FILE_SUFFIXES):
            check_output_file(args.out)
            writer = export_json if args.out.endswith(".json") else export_jsonl
            n = writer(store, args.out, crs_ids=args.crs, user_kind=args.user_kind, ended=ended, salt=salt,
                       source_ids=args.source_ids)
            print(f"wrote {n} dialogues to {args.out}")
            return 0
        if args.ended_only:
            print("error: --ended-only applies to a .jsonl/.json export; a folder holds every dialogue",
                  file=sys.stderr)
            return 2
        flt = ExportFilter(crs_ids=tuple(args.crs) if args.crs else None, user_kind=args.user_kind)
        result = export_bundle(store, args.out, flt, salt=salt, source_ids=args.source_ids,
                               zip_name="crs-arena-corpus.zip" if args.zip else None)
    counts = result.counts
    print(f"wrote {counts['dialogues']} dialogues, {counts['votes']} votes and {counts['scores']} scores "
          f"to {result.folder}")
    for path in result.paths():
        print(f"  {path}")
    return 0


def run_import(args: argparse.Namespace) -> int:
    return run_refusing(lambda: _import(args), prog="crs-arena import")


def _import(args: argparse.Namespace) -> int:
    renamed: list[Renamed] = []
    try:  # refused before the store opens
        dialogues = load_dialogues(Path(args.path), default_crs_id=args.crs_id,
                                   rename_duplicates=args.rename_duplicates, renamed=renamed)
    except DialogueImportError as exc:
        if args.rename_duplicates:
            raise
        raise with_rename_hint(exc) from None
    db = _database(args)
    with Store(db) as store:
        import_dialogues(store, dialogues, default_crs_id=args.crs_id, replace=args.replace)
    for r in renamed:
        print(f"renamed: {r.describe()}")
    print(f"imported {len(dialogues)} dialogues into {db}"
          + (f" ({len(renamed)} under a new id)" if renamed else ""))
    return 0


def build_parser(prog: str = "python -m arena.corpus") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="Export the rated corpus; import corpus files.")
    commands = parser.add_subparsers(dest="command", required=True)
    add_parser(commands)
    add_import_parser(commands)
    return parser


@reports_bad_settings
def main(argv: Optional[list[str]] = None, prog: str = "python -m arena.corpus") -> int:
    args = build_parser(prog).parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
