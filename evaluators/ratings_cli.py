"""`python -m evaluators ratings import FILE`: attach human ratings to stored or scored dialogues.

    python -m evaluators ratings import ratings.csv --db data/arena.sqlite3
    python -m evaluators ratings import ratings.json --corpus scored.jsonl [--out rated.jsonl]
    python -m evaluators ratings import crsarena_eval.jsonl --corpus crsarena_dial.jsonl [--mapping FILE]

The file formats (our CSV/JSON, CRSArena-Eval's records) are described in
`evaluators.rating_files`; names other studies use map onto the form through
`assets/ratings/aliases_v1.yaml` or `--mapping FILE`. A bad file is refused
whole with one message naming each bad row and column.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_parser(subparsers: "argparse._SubParsersAction") -> argparse.ArgumentParser:
    parser = subparsers.add_parser("ratings", help="human aspect ratings: import a ratings file",
                                   description="Work with aspect ratings.")
    sub = parser.add_subparsers(dest="ratings_command", required=True)
    imp = sub.add_parser(
        "import", help="attach ratings from a CSV or JSON file to stored or scored dialogues",
        description="Attach ratings (dialogue id column, numeric aspect columns, optional utterance_id "
        "or turn_ind/role for reply-level ratings, optional rater_id/rater_kind), or CRSArena-Eval's "
        "records as published, to dialogues. All or nothing.")
    imp.add_argument("file", help="ratings, CSV, JSON or JSONL (CRSArena-Eval records included)")
    target = imp.add_mutually_exclusive_group(required=True)
    target.add_argument("--db", help="SQLite database of the arena")
    target.add_argument("--corpus", help="scored JSONL corpus (the output of `score`)")
    imp.add_argument("--out", help="where to write the rated corpus (default: replace --corpus)")
    imp.add_argument(
        "--form",
        default=None,
        help="aspect rating form YAML (default: $ARENA_RATING_FORM or assets/ratings/aspects_v1.yaml)",
    )
    add_mapping_argument(imp)
    imp.set_defaults(func=run_import)
    return parser


def add_mapping_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--mapping",
        default=None,
        help="aspect names of another study: aliases onto the form's aspects and extra aspects' "
        "scales (YAML; default: assets/ratings/aliases_v1.yaml, CRSArena-Eval's names)",
    )


def run_import(args: argparse.Namespace) -> int:
    from arena.crowd.aspects import FormError, load_form, load_mapping
    from arena.runtime.config import Settings
    from arena.corpus.dialoguekit import DialogueImportError
    from arena.corpus.loading import load_dialogues
    from evaluators.rating_files import RatingImportError, attach_ratings, import_into_store, read_rating_file
    from evaluators.rating_names import AspectNames

    try:
        form = load_form(args.form or Settings.from_env().rating_form)
        names = AspectNames(form, load_mapping(form, args.mapping))
        if args.db:
            from arena.store import Store, is_database_url

            if not is_database_url(args.db) and not Path(args.db).exists():
                print(f"error: no database at {args.db}", file=sys.stderr)
                return 2
            settings = Settings.from_env()
            salt = settings.pseudonym_salt.get_secret_value() if settings.pseudonym_salt else None
            with Store(args.db) as store:
                changed = import_into_store(store, args.file, form, names=names, salt=salt)
            where = args.db
        else:
            dialogues = load_dialogues(Path(args.corpus))
            changed = attach_ratings(dialogues, read_rating_file(args.file, form, names=names), args.file)
            where = args.out or args.corpus
            write_corpus(dialogues, Path(where))
    except (RatingImportError, DialogueImportError, FormError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"attached ratings to {len(changed)} dialogues in {where}")
    extras = names.summary()
    if extras:
        print(f"kept aspects the form {form.version} does not ask: {'; '.join(extras)}")
    return 0


def write_corpus(dialogues: list, path: Path) -> None:
    """The scored-corpus JSONL (as `score` writes it), replaced atomically."""
    from arena.corpus.dialoguekit import scored_record
    from arena.runtime.files import atomic_open

    with atomic_open(path) as fh:
        for d in dialogues:
            fh.write(json.dumps(scored_record(d), ensure_ascii=False, allow_nan=False) + "\n")
