"""Serving the CRS arena: the Gradio app with its tabs (`crs-arena serve`, or `python app.py`).

Run `crs-arena serve --help` for options; configuration is also read from the
environment (see README.md).
"""

from __future__ import annotations

import argparse
import inspect
import logging
import sys
from typing import Any, Callable, Optional, Sequence

import gradio as gr
from fastapi import FastAPI

from arena.runtime.config import LLM_PROVIDERS, Settings, SettingsError
from arena.llm.redaction import install_log_redaction
from webapp.protection.admin_auth import AdminNotConfigured, admin_checker
from arena.corpus.hub_mirror import HubMirror, MirrorRefused
from arena.crowd.prolific_api import ProlificClient
from webapp.protection.login_limits import LoginLimiter
from webapp.protection.shared_login import ResearcherLogin
from webapp.one_port import ADMIN_PATH, build_server, serve, trusted_proxies
from webapp.platform_webhook import add_platform_webhook
from webapp.plot_backend import choose_plot_backend
from webapp.sessions.place_sync import PlaceSync
from webapp.services import Services, build_services
from webapp.ui import (
    battle_tab, chat_tab, download_tab, evaluate_tab, leaderboard_tab, moderation_tab, studies_tab, systems_tab,
    your_data_tab,
)
from webapp.ui.parts.participant import participant_slot
from webapp.ui.study_page import build_study_demo
from webapp.ui.parts.page_script import PAGE_HEAD
from webapp.ui.parts.style import APP_CSS
from webapp.sessions.warming import start_after_page
from webapp.warm_start import WarmUp, readiness
from webapp.protection.body_limits import body_limit
from webapp.protection.upload_limits import launch_options, upload_limit

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
    "This app is for researchers only; the public app offers Battle, Chat, the Leaderboard and Your data."
)
# The models load once a first page (public or study) has been drawn for its visitor, or this long after the
# server answers when none has: the loading would otherwise hold the interpreter while that page loads its
# scripts and identifies its participant (New battle was usable seconds later on a first start). A turn
# asked earlier starts it at once (`webapp.sessions.warming`).
USABLE_PAGE_GRACE_S = 20.0
PUBLIC_TABS = (("Battle", battle_tab), ("Chat", chat_tab), ("Leaderboard", leaderboard_tab),
               ("Your data", your_data_tab))
ADMIN_TABS = (("Evaluate", evaluate_tab), ("Download", download_tab), ("Moderation", moderation_tab),
              ("Systems", systems_tab), ("Studies", studies_tab))


def _blocks(title: str, intro: str, tabs, services: Services, *, participants: bool = False) -> gr.Blocks:
    choose_plot_backend()
    # Gradio copies every served file into its cache; copies older than the limit are deleted
    # (checked as often), so downloads cannot fill the disk.
    age = services.settings.file_cache_max_age_s
    with gr.Blocks(title=title, delete_cache=(age, age)) as demo:
        gr.Markdown(intro)
        if not participants:  # the researcher pages: the server's logout, beside the mount (/admin/logout)
            gr.Button("Log out", link="logout", size="sm", scale=0, min_width=100, elem_id="admin-logout")
        slot = participant_slot(services) if participants else None
        if slot is not None:  # the models first: a first battle waits for them
            slot.when_drawn(start_after_page(services))
        for label, tab in tabs:
            with gr.Tab(label, elem_id=f"tab-{label.lower().replace(' ', '-')}") as opened:
                _build_tab(tab, services, slot, opened, demo)
        if slot is not None:
            slot.wire(services, demo)
    return demo


def _build_tab(module: Any, services: Services, slot: Any, opened: gr.Tab, page: gr.Blocks) -> None:
    """`module.build` inside its tab; a builder that fills itself when its tab opens (`tab`) or when the page
    loads (`page`) is handed that block, rather than reading Gradio's private render context."""
    wants = inspect.signature(module.build).parameters
    extra = {name: block for name, block in (("tab", opened), ("page", page)) if name in wants}
    module.build(*((services, slot) if slot is not None else (services,)), **extra)


def build_demo(services: Services) -> gr.Blocks:
    """The public app: Battle, Chat, the Leaderboard and Your data. Nothing here starts runs or exports
    anyone else's data."""
    return _blocks(TITLE, INTRO, PUBLIC_TABS, services, participants=True)


def build_admin_demo(services: Services) -> gr.Blocks:
    """The researcher app: Evaluate, Download, Moderation and Systems (served behind a login by `--admin`)."""
    return _blocks(ADMIN_TITLE, ADMIN_INTRO, ADMIN_TABS, services)


# `--share` serves one Blocks through Gradio's tunnel, launched by Gradio itself: the study page (a second
# Blocks at /study) is not there, so a study link opened on a share link says so in one line instead of
# showing the open arena to a recruited worker.
SHARE_STUDY_REFUSAL_TEXT = ("Study links do not work on a --share link; ask the researcher for the study's "
                            "address on the arena's own server.")
SHARE_STUDY_REFUSAL = (
    "<script>(function(){if(!new URLSearchParams(window.location.search).get('study'))return;"
    "var show=function(){var p=document.createElement('p');"
    f"p.id='study-refused';p.textContent={SHARE_STUDY_REFUSAL_TEXT!r};document.body.replaceChildren(p);}};"
    "if(document.readyState==='loading'){document.addEventListener('DOMContentLoaded',show);}else{show();}"
    "})();</script>"
)


def launch_shared(services: Services, settings: Settings, port: int, *, share: bool = True, **kwargs) -> gr.Blocks:
    """The public app alone, as `--share` serves it (`share=False`: without the tunnel, for tests)."""
    demo = build_demo(services)
    demo.queue(default_concurrency_limit=32)
    launch_app(demo, server_name=settings.host, server_port=port, share=share, head=SHARE_STUDY_REFUSAL,
               **launch_options(settings, admin=False), **kwargs)
    return demo


def launch_app(demo: gr.Blocks, **kwargs) -> None:
    """`demo.launch` with the app's CSS and page script (Gradio 6 takes both at launch); a `head` given
    comes after the script."""
    head = PAGE_HEAD + (kwargs.pop("head", None) or "")
    demo.launch(css=APP_CSS, head=head, **kwargs)


def build_app(services: Services, *, public: bool = True, admin_auth: Optional[Callable[[str, str], Any]] = None,
              limiter: Optional[LoginLimiter] = None) -> FastAPI:
    """The one-port server (`webapp.one_port`): the public app at `/` and, with `admin_auth`, the researcher
    app at `/admin` (at `/` without the public app), both with the app's CSS and page script; study links open
    the study page at `/study`."""
    limiter = limiter or LoginLimiter.from_settings(services.settings, services.store)  # counted in the store
    return build_server(build_demo(services) if public else None,
                        build_admin_demo(services) if admin_auth is not None else None,
                        admin_auth=admin_auth, limiter=limiter,
                        css=APP_CSS, head=PAGE_HEAD,
                        public_upload_bytes=upload_limit(services.settings, admin=False),
                        admin_upload_bytes=upload_limit(services.settings, admin=True),
                        study=build_study_demo(services) if public else None,
                        max_body_bytes=body_limit(services.settings),
                        # never shorter than a slow turn: a session waiting for its reply is not idle
                        session_idle_s=max(services.settings.session_idle_s, 2 * services.settings.turn_timeout_s),
                        # a closed page's turn still being answered keeps its session, not a longer grace
                        closed_session_grace_s=services.settings.closed_session_grace_s,
                        turn_in_flight=services.turns_in_flight.busy,
                        idle_sweeps=[services.turn_guard.forget_idle],
                        # SQLite's idle connections each keep a page cache of the rows they read
                        idle_releases=[services.store.release_idle_connections],
                        readiness=lambda: readiness(services),
                        researcher_login=None if admin_auth is None else ResearcherLogin(
                            services.store, services.settings.admin_login_ttl_s, admin_auth),
                        routes=[lambda app: add_platform_webhook(app, services)])


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
                        help="serve only the researcher app (Evaluate, Download, Moderation) behind a login, on its own "
                        "port; without it the researcher pages are at /admin of the public server")
    parser.add_argument("--db", default=None, help="SQLite file or postgresql:// URL (default: $ARENA_DB or data/arena.sqlite3)")
    parser.add_argument("--llm-provider", choices=LLM_PROVIDERS, default=None, help="LLM provider")
    parser.add_argument("--llm-model", default=None, help="LLM model name")
    parser.add_argument("--max-turns", type=int, default=None, help="user turns per conversation")
    parser.add_argument("--share", action="store_true", help="create a public Gradio link")
    return parser.parse_args(argv)


def _researcher_login(settings: Settings, required: bool):
    """The researcher login check; None (and a log line) when it is not configured and not `required`."""
    try:
        return admin_checker(settings)
    except AdminNotConfigured as exc:
        if required:
            raise
        logging.getLogger(__name__).warning("researcher pages at /admin are off: %s", exc)
        return None


def start_mirror(settings: Settings) -> Optional[HubMirror]:
    """The Hub mirror of ARENA_HUB_DATASET, prepared (repository, salt check, restore); None without one."""
    mirror = HubMirror.from_settings(settings)
    if mirror is not None:
        mirror.prepare()
    return mirror


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
    try:
        auth = _researcher_login(settings, required=args.admin)
    except AdminNotConfigured as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:  # before anything serves: restore an empty store from the Hub dataset, check the salt
        mirror = None if args.admin else start_mirror(settings)
    except MirrorRefused as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # the Hub is unreachable or refuses the token: serving an empty corpus is worse
        print(f"error: could not prepare the Hub dataset {settings.hub_dataset}: "
              f"{' '.join(str(exc).split())[:300]}", file=sys.stderr)
        return 2
    # The researcher app alone only queues scoring jobs in the shared store; other processes' workers run them.
    try:
        services = build_services(settings, run_scorer=not args.admin)
    except SettingsError as exc:  # a systems file (ARENA_SYSTEMS) that cannot be used
        raise SystemExit(f"error: {exc}") from None
    # Every serving process takes over the evaluation runs of processes that died (within run_lease_s +
    # run_resume_s), so a run goes on whichever replica was killed.
    services.evaluation_runs.keep_resuming(settings.run_resume_s)
    # Every serving process checks that Prolific's place counts follow the arena's (one replica sends each).
    place_sync = PlaceSync(services, ProlificClient.from_environment,
                           every_s=settings.prolific_places_every_s).start()
    port = args.port or (settings.admin_port if args.admin else settings.port)
    if settings.warm_start and not args.admin:  # the models load once the server answers (webapp.warm_start)
        services.warming = WarmUp.for_services(services)
    if mirror is not None:
        mirror.start()
    try:
        if args.share:  # Gradio's share link serves one Blocks: the public pages only, study links refused
            if services.warming is not None:  # launch() blocks: the loading starts beside it
                services.warming.start()
            launch_shared(services, settings, port)
        else:
            app = build_app(services, public=not args.admin, admin_auth=auth)
            where = f"http://{settings.host}:{port}"
            admin = "" if args.admin or auth is None else f" (researcher pages at {where}{ADMIN_PATH})"

            def on_ready() -> None:
                loading = "" if services.warming is None else "; the models load in the background (GET /ready)"
                logging.getLogger(__name__).info("CRS Arena ready at %s/%s%s", where, admin, loading)
                if services.warming is not None:  # once a first page is usable, or after a grace without one
                    services.warming.start_soon(USABLE_PAGE_GRACE_S)

            serve(app, host=settings.host, port=port, proxies=trusted_proxies(settings), on_ready=on_ready)
    finally:
        if mirror is not None:
            mirror.stop()  # the last push
        place_sync.stop()
        services.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
