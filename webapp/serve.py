"""Serving the CRS arena: the Gradio app with its tabs (`crs-arena serve`, or `python app.py`).

Run `crs-arena serve --help` for options; configuration is also read from the
environment (see README.md).
"""

from __future__ import annotations

import argparse
import logging
import os
from typing import Optional, Sequence

import gradio as gr

from arena.config import LLM_PROVIDERS, Settings
from webapp.services import Services, build_services
from webapp.ui import battle_tab, chat_tab, download_tab, evaluate_tab, leaderboard_tab

TITLE = "CRS Arena"
INTRO = (
    "# CRS Arena\n"
    "Chat with conversational recommender systems about movies, tell us whether each conversation left you "
    "**satisfied** or **frustrated**, compare two anonymous systems side by side, and download the rated corpus."
)


def build_demo(services: Services) -> gr.Blocks:
    with gr.Blocks(title=TITLE) as demo:
        gr.Markdown(INTRO)
        for label, tab in (
            ("Battle", battle_tab),
            ("Chat", chat_tab),
            ("Leaderboard", leaderboard_tab),
            ("Evaluate", evaluate_tab),
            ("Download", download_tab),
        ):
            with gr.Tab(label):
                tab.build(services)
    return demo


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="crs-arena serve",
        description="CRS Arena: chat with, rate and compare conversational recommender systems.",
        epilog="Environment: ARENA_DB, ARENA_LLM_PROVIDER, ARENA_LLM_MODEL, OPENAI_BASE_URL, OPENAI_API_KEY, "
        "ARENA_MAX_TURNS, ARENA_MAX_MESSAGE_CHARS, ARENA_TURN_TIMEOUT, ARENA_SCORE_METRICS (see README.md).",
    )
    parser.add_argument("--host", default=os.environ.get("ARENA_HOST", "127.0.0.1"), help="interface to bind")
    parser.add_argument("--port", type=int, default=int(os.environ.get("ARENA_PORT", "7860")), help="port")
    parser.add_argument("--db", default=None, help="SQLite database path (default: $ARENA_DB or data/arena.sqlite3)")
    parser.add_argument("--llm-provider", choices=LLM_PROVIDERS, default=None, help="LLM provider")
    parser.add_argument("--llm-model", default=None, help="LLM model name")
    parser.add_argument("--max-turns", type=int, default=None, help="user turns per conversation")
    parser.add_argument("--share", action="store_true", help="create a public Gradio link")
    return parser.parse_args(argv)


def main(argv: Optional[Sequence[str]] = None) -> None:
    args = parse_args(argv)
    logging.basicConfig(level=os.environ.get("ARENA_LOG_LEVEL", "INFO"))
    settings = Settings.from_env(
        db_path=args.db, llm_provider=args.llm_provider, llm_model=args.llm_model, max_turns=args.max_turns
    )
    services = build_services(settings)
    demo = build_demo(services)
    demo.queue(default_concurrency_limit=32)
    try:
        demo.launch(server_name=args.host, server_port=args.port, share=args.share)
    finally:
        services.close()


if __name__ == "__main__":
    main()
