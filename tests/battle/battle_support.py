"""Fast fake systems, a launched app and a scripted battle player.

Shared by the battle tests and `benchmarks/load_test.py`. The fake system is
a real `ConversationalRecommender`: it reads the dialogue, answers in text
and recommends ReDial catalog items, after an optional fixed delay.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional

from arena.runtime.config import Settings
from arena.dialogue import Dialogue, RecommendedItem
from arena.llm import FakeProvider, LLMClient, RetryPolicy
from webapp.services import Services
from arena.store import Store
from arena.conversation.crs_interface import ConversationalRecommender, CRSSpec, CRSUnavailable
from crs.registry import CRSRegistry

# A few ReDial catalog entries (item id, title).
MOVIES = [
    ("99276", "Star Wars (1977)"), ("80067", "Toy Story (1995)"), ("85036", "The Matrix (1999)"),
    ("175096", "Titanic (1997)"), ("79062", "Alien (1979)"), ("180527", "Jaws (1975)"),
    ("133249", "Up (2009)"), ("101264", "Inception (2010)"), ("157924", "Shrek (2001)"),
    ("184418", "Get Out (2017)"),
]


class FakeCatalogCRS(ConversationalRecommender):
    """Recommends catalog movies chosen from the user's words; may be slow or broken on purpose."""

    def __init__(self, name: str, delay_s: float = 0.0, fail_with: Optional[Exception] = None):
        self.name = name
        self.delay_s = delay_s
        self.fail_with = fail_with
        self.calls = 0
        self._lock = threading.Lock()

    def respond(self, dialogue: Dialogue) -> tuple[str, list[RecommendedItem]]:
        with self._lock:
            self.calls += 1
        if self.delay_s:
            time.sleep(self.delay_s)
        if self.fail_with is not None:
            raise self.fail_with
        last = dialogue.user_turns()[-1].text
        start = (sum(map(ord, last)) + len(self.name)) % len(MOVIES)
        picks = [MOVIES[(start + k) % len(MOVIES)] for k in range(3)]
        items = [RecommendedItem(item_id=i, title=t) for i, t in picks]
        return f"Because you said “{last[:60]}”, you might enjoy {picks[0][1]}.", items


def fake_spec(crs: ConversationalRecommender, available: bool = True) -> CRSSpec:
    def check():
        return None if available else CRSUnavailable(crs.name, "no checkpoint", "make models")

    return CRSSpec(name=crs.name, family="fake", dataset="redial", description="test system",
                   load=lambda: crs, check=check, display_name=f"{crs.name} (ReDial)",
                   summary=f"A test system called {crs.name} that recommends movies from your words.")


def make_services(
    tmp_path: Path,
    systems: Iterable[ConversationalRecommender],
    *,
    unavailable: Iterable[str] = (),
    **settings_overrides,
) -> Services:
    off = set(unavailable)
    # Scripted players vote within a second of starting: not suspicious here unless a test says so.
    settings_overrides = {"min_battle_s": 0.0, "burst_votes": 10_000, "burst_labels": 10_000, "min_user_turns": 1,
                          "max_rated_per_user": 10_000, "max_rated_per_ip": 10_000, **settings_overrides}
    settings = Settings(
        db_path=tmp_path / "arena.sqlite3", cache_dir=tmp_path / "cache", llm_provider="fake",
        **settings_overrides,
    )
    return Services(
        settings=settings,
        store=Store(settings.db_path),
        llm=LLMClient(FakeProvider(default="ok"), retry=RetryPolicy(base_delay_s=0.01)),
        registry=CRSRegistry([fake_spec(s, s.name not in off) for s in systems]),
        scorer=None,
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(services: Services, concurrency: int = 32, *, admin: bool = False):
    """Build the real public (or researcher) app and serve it on 127.0.0.1; returns (demo, base URL)."""
    from webapp.serve import build_admin_demo, build_demo, launch_app
    from webapp.protection.upload_limits import launch_options

    demo = build_admin_demo(services) if admin else build_demo(services)
    demo.queue(default_concurrency_limit=concurrency)
    # The free port is only free when asked: on a busy machine another process may take it before
    # Gradio binds it (Gradio then fails its own start-up check), so a failed start tries a new port.
    for attempt in range(3):
        port = free_port()
        try:
            launch_app(demo, server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True,
                       **launch_options(services.settings, admin=admin))
        except Exception:  # Gradio raises a bare Exception (or ValueError) when its check fails
            demo.close()
            if attempt == 2:
                raise
        else:
            return demo, f"http://127.0.0.1:{port}/"


@contextlib.contextmanager
def serving_apps():
    """`serve(services, admin=False) -> base URL`: real apps on 127.0.0.1, all closed on exit."""
    demos = []

    def serve(services: Services, admin: bool = False) -> str:
        demo, url = launch(services, admin=admin)
        demos.append(demo)
        return url

    try:
        yield serve
    finally:
        for demo in demos:
            demo.close()


@dataclass
class BattleResult:
    tag: str
    choice: str
    comment: str
    reveal: str = ""
    turn_seconds: list[float] = field(default_factory=list)  # client round trip per turn
    errors: list[str] = field(default_factory=list)


def play_battle(url: str, tag: str, *, turns: int = 2, choice: str = "A",
                sentiments: tuple[str, str] = ("satisfied", "frustrated")) -> BattleResult:
    """One person's full battle over HTTP: turns in both panes, both ratings, a vote with a comment.

    The panes take turns here. Sending to both panes at the same moment is
    covered by the browser test and the session tests: with two calls in
    flight on one gradio_client Client, the client itself occasionally drops
    a reply under heavy CPU load, which would make this count unreliable.
    """
    from gradio_client import Client

    client = Client(url, verbose=False, httpx_kwargs={"timeout": 120})
    result = BattleResult(tag=tag, choice=choice, comment=f"comment from {tag}")
    try:
        client.predict(api_name="/battle_start")
        for turn in range(turns):
            for side in ("A", "B"):
                started = time.perf_counter()
                out = client.predict(f"{tag} side {side} turn {turn}: a space movie please",
                                     api_name=f"/battle_send_{side.lower()}")
                result.turn_seconds.append(time.perf_counter() - started)
                if tag not in str(out[0][-2]["content"]):
                    raise AssertionError(f"{tag} saw someone else's message: {out[0][-2]}")
        client.predict(api_name=f"/battle_{sentiments[0]}_a")
        client.predict(api_name=f"/battle_{sentiments[1]}_b")
        result.reveal = client.predict(result.comment, api_name=f"/battle_vote_{choice.lower()}")[0]
    except Exception as exc:  # collected so the caller sees every failure
        result.errors.append(repr(exc))
    return result


def run_sessions(url: str, sessions: int, *, turns: int = 2) -> list[BattleResult]:
    """`sessions` people battling at the same moment, each in its own browser session."""
    from concurrent.futures import ThreadPoolExecutor

    choices = ["A", "B", "tie", "both_bad"]
    with ThreadPoolExecutor(max_workers=sessions) as pool:
        futures = [
            pool.submit(play_battle, url, f"s{i:03d}", turns=turns, choice=choices[i % 4],
                        sentiments=("satisfied", "frustrated") if i % 2 else ("frustrated", "satisfied"))
            for i in range(sessions)
        ]
        return [f.result() for f in futures]


def check_stored_exactly_once(store: Store, results: list[BattleResult], turns: int) -> list[str]:
    """Every session's two dialogues, two ratings and one vote are stored once, unmixed; returns problems."""
    problems = [f"{r.tag}: {e}" for r in results for e in r.errors]
    dialogues = store.list_dialogues()
    votes = store.list_votes()
    if len(votes) != len(results):
        problems.append(f"{len(votes)} votes stored for {len(results)} battles")
    if len(dialogues) != 2 * len(results):
        problems.append(f"{len(dialogues)} dialogues stored for {len(results)} battles")
    by_id = {d.dialogue_id: d for d in dialogues}
    by_comment = {v.comment: v for v in votes}
    for r in results:
        v = by_comment.get(r.comment)
        if v is None:
            problems.append(f"{r.tag}: vote missing")
            continue
        if v.choice != r.choice:
            problems.append(f"{r.tag}: stored choice {v.choice}, cast {r.choice}")
        for side, did in (("A", v.dialogue_a), ("B", v.dialogue_b)):
            d = by_id.get(did)
            if d is None:
                problems.append(f"{r.tag}: dialogue {side} missing")
                continue
            texts = [u.text for u in d.user_turns()]
            if len(texts) != turns or not all(t.startswith(f"{r.tag} side {side} ") for t in texts):
                problems.append(f"{r.tag}: dialogue {side} holds {texts}")
            if d.feedback is None or d.metadata.get("battle_id") != v.battle_id or d.user.id != v.user_id:
                problems.append(f"{r.tag}: dialogue {side} lacks feedback or battle link")
            if len(d.agent_turns()) != turns or any(u.error for u in d.utterances):
                problems.append(f"{r.tag}: dialogue {side} replies wrong")
    return problems


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = max(0, min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1))))
    return ordered[k]
