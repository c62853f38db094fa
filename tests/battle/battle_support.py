"""Fast fake systems, a launched app and a scripted battle player.

Shared by the battle tests and `benchmarks/load_test.py`. The fake system is
a real `ConversationalRecommender`: it reads the dialogue, answers in text
and recommends ReDial catalog items, after an optional fixed delay.
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional

from arena.config import Settings
from arena.dialogue import Dialogue, RecommendedItem
from arena.llm import FakeProvider, LLMClient, RetryPolicy
from arena.services import Services
from arena.store import Store
from crs.base import ConversationalRecommender, CRSSpec, CRSUnavailable
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
    check = (lambda: None) if available else (lambda: CRSUnavailable(crs.name, "no checkpoint", "make models"))
    return CRSSpec(name=crs.name, family="fake", dataset="redial", description="test system",
                   load=lambda: crs, check=check)


def make_services(
    tmp_path: Path,
    systems: Iterable[ConversationalRecommender],
    *,
    unavailable: Iterable[str] = (),
    **settings_overrides,
) -> Services:
    off = set(unavailable)
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


def launch(services: Services, concurrency: int = 32):
    """Build the real app and serve it on 127.0.0.1; returns (demo, base URL)."""
    from app import build_demo

    demo = build_demo(services)
    demo.queue(default_concurrency_limit=concurrency)
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    return demo, f"http://127.0.0.1:{port}/"


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
    """One person's full battle over HTTP: both panes at once, both ratings, a vote with a comment."""
    from gradio_client import Client

    client = Client(url, verbose=False)
    result = BattleResult(tag=tag, choice=choice, comment=f"comment from {tag}")
    client.predict(api_name="/battle_start")
    lock = threading.Lock()

    def chat(side: str) -> None:
        try:
            for turn in range(turns):
                started = time.perf_counter()
                out = client.predict(f"{tag} side {side} turn {turn}: a space movie please",
                                     api_name=f"/battle_send_{side.lower()}")
                elapsed = time.perf_counter() - started
                history = out[0]
                if tag not in str(history[-2]["content"]):
                    raise AssertionError(f"{tag} saw someone else's message: {history[-2]}")
                with lock:
                    result.turn_seconds.append(elapsed)
            sentiment = sentiments[0] if side == "A" else sentiments[1]
            client.predict(api_name=f"/battle_{sentiment}_{side.lower()}")
        except Exception as exc:  # collected so the caller sees every failure
            with lock:
                result.errors.append(f"{side}: {exc!r}")

    threads = [threading.Thread(target=chat, args=(side,)) for side in ("A", "B")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if not result.errors:
        out = client.predict(result.comment, api_name=f"/battle_vote_{choice.lower()}")
        result.reveal = out[0]
    return result
