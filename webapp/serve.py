"""Serving the CRS arena: the Gradio app with its tabs (`crs-arena serve`, or `python app.py`).

Run `crs-arena serve --help` for options; configuration is also read from the
environment (see README.md).
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Optional, Sequence

import gradio as gr

from arena.config import LLM_PROVIDERS, Settings, SettingsError
from arena.llm.redaction import install_log_redaction
from webapp.admin_auth import AdminNotConfigured, admin_checker
from webapp.services import Services, build_services
from webapp.ui import battle_tab, chat_tab, download_tab, evaluate_tab, leaderboard_tab, moderation_tab

TITLE = "CRS Arena"
INTRO = (
    "# CRS Arena\n"
    "Chat with conversational recommender systems about movies, tell us whether each conversation left you "
    "**satisfied** or **frustrated**, and compare two anonymous systems side by side."
)
ADMIN_TITLE = "CRS Arena: researchers"
ADMIN_INTRO = (
    "# CRS Arena: researchers\n"
    "Simulated evaluation runs, the raw corpus (flagged votes included), moderation and the scoring queue. "
    "This app is for researchers only; the public app offers Battle, Chat and the Leaderboard."
)
PUBLIC_TABS = (("Battle", battle_tab), ("Chat", chat_tab), ("Leaderboard", leaderboard_tab))
ADMIN_TABS = (("Evaluate", evaluate_tab), ("Download", download_tab), ("Moderation", moderation_tab))


def _blocks(title: str, intro: str, tabs, services: Services) -> gr.Blocks:
    # Gradio copies every served file into its cache; copies older than the limit are deleted
    # (checked as often), so downloads cannot fill the disk.
    age = services.settings.file_cache_max_age_s
    with gr.Blocks(title=title, delete_cache=(age, age)) as demo:
        gr.Markdown(intro)
        for label, tab in tabs:
            with gr.Tab(label):
                tab.build(services)
    return demo


def build_demo(services: Services) -> gr.Blocks:
    """The public app: Battle, Chat and the Leaderboard. Nothing here starts runs or exports raw data."""
    return _blocks(TITLE, INTRO, PUBLIC_TABS, services)


def build_admin_demo(services: Services) -> gr.Blocks:
    """The researcher app: Evaluate, Download and Moderation (served behind a login by `--admin`)."""
    return _blocks(ADMIN_TITLE, ADMIN_INTRO, ADMIN_TABS, services)


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="crs-arena serve",
        description="CRS Arena: chat with, rate and compare conversational recommender systems.",
        epilog="Every setting also has an environment variable (ARENA_HOST, ARENA_PORT, ARENA_DB, "
        "ARENA_LLM_PROVIDER, ARENA_ADMIN_USERS, ...); the table in README.md lists them all. Flags win over the environment.",
    )
    parser.add_argument("--host", default=None, help="interface to bind (default: $ARENA_HOST or 127.0.0.1)")
    parser.add_argument("--port", type=int, default=None,
                        help="port (default: $ARENA_PORT or 7860; with --admin $ARENA_ADMIN_PORT or 7861)")
    parser.add_argument("--admin", action="store_true",
                        help="serve the researcher app (Evaluate, Download, Moderation) behind a login")
    parser.add_argument("--db", default=None, help="SQLite file or postgresql:// URL (default: $ARENA_DB or data/arena.sqlite3)")
    parser.add_argument("--llm-provider", choices=LLM_PROVIDERS, default=None, help="LLM provider")
    parser.add_argument("--llm-model", default=None, help="LLM model name")
    parser.add_argument("--max-turns", type=int, default=None, help="user turns per conversation")
    parser.add_argument("--share", action="store_true", help="create a public Gradio link")
    return parser.parse_args(argv)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    try:
        settings = Settings.from_env(
            db_path=args.db, llm_provider=args.llm_provider, llm_model=args.llm_model, max_turns=args.max_turns,
            host=args.host, port=args.port,
        )
    except SettingsError as exc:
        raise SystemExit(f"error: {exc}") from None
    logging.basicConfig(level=settings.log_level)
    install_log_redaction()
    auth = None
    if args.admin:
        try:
            auth = admin_checker(settings)
        except AdminNotConfigured as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    # The researcher app only queues scoring jobs in the shared store; the public app's workers run them.
    try:
        services = build_services(settings, run_scorer=not args.admin)
    except SettingsError as exc:  # a systems file (ARENA_SYSTEMS) that cannot be used
        raise SystemExit(f"error: {exc}") from None
    demo = build_admin_demo(services) if args.admin else build_demo(services)
    demo.queue(default_concurrency_limit=32)
    port = args.port or (settings.admin_port if args.admin else settings.port)
    try:
        demo.launch(server_name=settings.host, server_port=port, share=args.share, auth=auth)
    finally:
        services.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
