"""Command line for the systems' files.

    python -m crs list                      what is installed, what is missing
    python -m crs reply --crs NAME --input CONTEXTS.jsonl --out REPLIES.jsonl [--limit N]
    python -m crs download NAME|all [--source URL|PATH|hf://owner/repo] [--sha256 HEX]
                                    [--models-dir DIR] [--force] [--no-base] [--timeout S]
    python -m crs serve-crs --crs NAME --port P [--host H]    a system over the HTTP contract

The source defaults to ARENA_CHECKPOINT_SOURCE, else CRS Arena's published
archive; the models folder to Settings.models_dir (ARENA_MODELS_DIR).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Optional

from arena.runtime.config import Settings, reports_bad_settings
from crs.checkpoints import (
    DownloadError,
    base_dir,
    base_model_problem,
    download_base_model,
    download_checkpoints,
    folder_problem,
    resolve_source,
    system_names,
)
from crs.neural.variants import VARIANTS


def _models_dir(args) -> Path:
    if args.models_dir:
        return Path(args.models_dir)
    return Path(Settings.from_env().models_dir)


def _needs_weights(name: str, repo_id: str) -> bool:
    variant = VARIANTS[name]
    return variant.family == "unicrs" and repo_id != "facebook/bart-base"


def cmd_list(args) -> int:
    models_dir = _models_dir(args)
    from crs.neural.specs import find_base_model

    print(f"models folder: {models_dir}")
    for row in _registry(None).status_table():
        if row["system"] not in VARIANTS:
            status = "ready" if row["status"] == "ready" else f"missing: {row['why']} (fix: {row['fix']})"
            health = f" [{row['health']}]" if row.get("health") else ""
            print(f"  {row['system']:<18} {status}{health}")
    for name, variant in VARIANTS.items():
        problems = [f"{f} {folder_problem(models_dir / f)}" for f in variant.folders if folder_problem(models_dir / f)]
        for repo in variant.base_models:
            if find_base_model(repo, models_dir, weights=_needs_weights(name, repo)) is None:
                problems.append(f"base model {repo} not found locally")
        status = "ready" if not problems else "missing: " + "; ".join(problems)
        print(f"  {name:<18} {status}")
    return 0


def cmd_download(args) -> int:
    names = system_names() if args.name == "all" else [args.name]
    models_dir = _models_dir(args)
    source = resolve_source(args.source, Settings.from_env().checkpoint_source)
    started = time.monotonic()
    try:
        print(f"checkpoints for {', '.join(names)} from {source} into {models_dir}")
        installed = download_checkpoints(
            names, models_dir, source, sha256=args.sha256, force=args.force,
            connect_timeout=args.timeout, progress=not args.quiet,
        )
        for path in installed:
            print(f"  installed {path.name}")
        if not installed:
            print("  checkpoint folders already present (use --force to fetch again)")
        if not args.no_base:
            from crs.neural.specs import find_base_model

            repos = {(repo, _needs_weights(n, repo)) for n in names for repo in VARIANTS[n].base_models}
            for repo, weights in sorted(repos):
                if find_base_model(repo, models_dir, weights=weights) is not None:
                    continue
                print(f"base model {repo} from the Hugging Face hub into {base_dir(models_dir, repo)}")
                download_base_model(repo, models_dir, weights=weights)
                problem = base_model_problem(base_dir(models_dir, repo), weights)
                print(f"  {'installed' if problem is None else 'incomplete: ' + problem}")
    except DownloadError as exc:
        print(f"error: {exc}", file=sys.stderr)
        print(f"(gave up after {time.monotonic() - started:.1f} s)", file=sys.stderr)
        return 1
    return 0


def _registry(llm):
    from crs.registry import CRSRegistry
    from crs.systems import system_specs

    return CRSRegistry(system_specs(Settings.from_env(), llm))


def _loaded_system(name: str):
    """(the registry, the named system loaded); (None, None) and one line on stderr when it cannot be."""
    from arena.llm import LLMError, build_client
    from arena.conversation.crs_interface import CRSUnavailable

    from arena.runtime.prepare import load_before_replies

    try:
        client = build_client(Settings.from_env())
        load_before_replies(client.provider)
        registry = _registry(client)
        return registry, registry.get(name)
    except (KeyError, CRSUnavailable, LLMError) as exc:
        print(f"error: {exc.args[0] if isinstance(exc, KeyError) else exc}", file=sys.stderr)
        return None, None


def cmd_reply(args) -> int:
    from crs.reply_cli import run

    _, crs = _loaded_system(args.crs)
    if crs is None:
        return 1
    return run(crs, Path(args.input), Path(args.out), args.limit)


def cmd_serve_crs(args) -> int:
    """Serve one system over the HTTP contract (crs.external.contract) until interrupted."""
    from crs.external.server import serve_forever

    registry, crs = _loaded_system(args.crs)
    if crs is None:
        return 1
    print(f"serving {args.crs} on http://{args.host}:{args.port} (POST /respond, /recommend; GET /health; "
          "iEvaLM-CRS's POST / and GET /, docs/protocols.md)", flush=True)
    serve_forever(crs, args.crs, registry.spec(args.crs).dataset, args.host, args.port)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m crs", description="The systems: what can run, checkpoints, bulk replies.")
    commands = parser.add_subparsers(dest="command", required=True)
    listing = commands.add_parser("list", help="show which systems have their files")
    listing.add_argument("--models-dir", help="models folder (default: Settings.models_dir)")
    listing.set_defaults(run=cmd_list)
    download = commands.add_parser("download", help="fetch checkpoints (and base models)")
    download.add_argument("name", choices=[*system_names(), "all"], help="system name or 'all'")
    download.add_argument("--source", help="archive URL or path, checkpoint folder, or hf://owner/repo[@rev] "
                                           "(default: ARENA_CHECKPOINT_SOURCE, else CRS Arena's archive)")
    download.add_argument("--sha256", help="expected sha256 of the archive")
    download.add_argument("--models-dir", help="models folder (default: Settings.models_dir)")
    download.add_argument("--force", action="store_true", help="fetch even if the folders are present")
    download.add_argument("--no-base", action="store_true", help="skip the Hugging Face base models")
    download.add_argument("--timeout", type=float, default=5.0, help="connect timeout in seconds (default 5)")
    download.add_argument("--quiet", action="store_true", help="no progress bar")
    download.set_defaults(run=cmd_download)
    reply = commands.add_parser("reply", help="answer iEvaLM-style contexts in bulk (JSON lines)")
    reply.add_argument("--crs", required=True, help="system name, e.g. chatcrs_redial or crb_crs_redial")
    reply.add_argument("--input", required=True, help="JSON lines with `context` (user first or last)")
    reply.add_argument("--out", required=True, help="JSON lines written: `text` and `items` per input line")
    reply.add_argument("--limit", type=int, help="answer only the first N lines")
    reply.set_defaults(run=cmd_reply)
    serve = commands.add_parser("serve-crs", help="serve a system over the HTTP contract "
                                "(docs/bring-your-own-crs.md) and iEvaLM-CRS's protocol (docs/protocols.md)")
    serve.add_argument("--crs", required=True, help="system name, e.g. chatcrs_redial")
    serve.add_argument("--port", type=int, required=True, help="port to listen on")
    serve.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1)")
    serve.set_defaults(run=cmd_serve_crs)
    return parser


@reports_bad_settings
def main(argv: Optional[list[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
