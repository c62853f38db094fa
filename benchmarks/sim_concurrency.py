"""Simulated evaluation runs: sequential vs concurrent dialogues against a slow LLM server.

    HF_HUB_OFFLINE=1 python benchmarks/sim_concurrency.py [--dialogues 100] [--concurrency 16]
                                                          [--latency 0.3] [--max-turns 3]

Runs the same simulated evaluation twice through `RunManager` (LLM-US users,
the real `openai` client via `OpenAIProvider`) against a local
OpenAI-compatible stub server on 127.0.0.1 that answers every call after a
fixed latency: once one dialogue at a time, once with `--concurrency`
dialogues at once. The system under test is a small local recommender over
the ReDial catalog, so the time measured is the simulator's LLM traffic and
the run machinery. Each LLM-US dialogue of T turns makes 2T-1 LLM calls
(one message per turn, one continue/quit decision per turn after the first).
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.runtime.config import Settings  # noqa: E402
from arena.dialogue import Dialogue, RecommendedItem, Role  # noqa: E402
from webapp.runs.evaluation import RunConfig, RunManager  # noqa: E402
from arena.llm import LLMClient, OpenAIProvider, RetryPolicy  # noqa: E402
from arena.store import Store  # noqa: E402
from arena.conversation.crs_interface import ConversationalRecommender, CRSSpec  # noqa: E402
from crs.registry import CRSRegistry  # noqa: E402
from simulators import catalog_view  # noqa: E402
from tests.support.openai_stub_server import OpenAIStubServer, RecordedRequest  # noqa: E402


class GenreRecommender(ConversationalRecommender):
    """Recommends unseen catalog movies sharing genres the user named (fast, deterministic)."""

    def __init__(self):
        self.catalog = catalog_view("redial")
        self.by_genre: dict[str, list] = {}
        for facts in self.catalog.all():
            for genre in facts.genres:
                self.by_genre.setdefault(genre, []).append(facts)

    def respond(self, dialogue: Dialogue) -> tuple[str, list[RecommendedItem]]:
        said = " ".join(u.text.lower() for u in dialogue.utterances if u.role == Role.USER)
        shown = {i.item_id for u in dialogue.agent_turns() for i in u.items}
        genres = [g for g in self.by_genre if re.search(rf"\b{re.escape(g)}\b", said)]
        pool = [f for g in genres for f in self.by_genre[g] if f.item_id not in shown][:5]
        if not pool:
            return "What genre are you in the mood for?", []
        return f"You could try {pool[0].display_title}.", [
            RecommendedItem(item_id=f.item_id, title=f.display_title) for f in pool
        ]


def stub_user(request: RecordedRequest) -> str:
    if "judge conversations" in request.messages[0]["content"]:
        return "CONTINUE"
    guidance = request.last_user_message.split("What to do now:", 1)[-1].split("\n")[0]
    return guidance.strip() or "Any suggestions?"


def timed_run(server: OpenAIStubServer, n: int, concurrency: int, max_turns: int, workdir: Path) -> dict:
    server.reset()
    db = workdir / f"c{concurrency}.sqlite3"
    llm = LLMClient(OpenAIProvider(server.base_url, default_model="stub-user"), timeout_s=30,
                    retry=RetryPolicy(max_retries=2, base_delay_s=0.1), concurrency=max(concurrency, 1))
    manager = RunManager(
        store=Store(db), llm=llm, settings=Settings(db_path=db, turn_timeout_s=60),
        registry=CRSRegistry([CRSSpec("genre-rec", "bench", "redial", "benchmark system", GenreRecommender)]),
    )
    config = RunConfig(systems=["genre-rec"], simulator="llm_us", n_dialogues=n, max_turns=max_turns,
                       seed=1, concurrency=concurrency)
    started = time.perf_counter()
    state = manager.run(config)
    wall = time.perf_counter() - started
    stored = Store(db).list_dialogues()
    return {
        "concurrency": concurrency, "wall_s": wall, "done": state["done"], "failed": state["failed"],
        "stored": len(stored), "llm_calls": len(server.chat_requests), "max_in_flight": server.max_in_flight,
        "turns": sum(d.num_turns for d in stored),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dialogues", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.3, help="seconds per LLM call")
    parser.add_argument("--max-turns", type=int, default=3)
    args = parser.parse_args()
    catalog_view("redial")  # load once, outside the timings
    with OpenAIStubServer(default=stub_user, latency_s=args.latency) as server, \
            tempfile.TemporaryDirectory() as tmp:
        results = [timed_run(server, args.dialogues, c, args.max_turns, Path(tmp)) for c in (1, args.concurrency)]
    print(f"{args.dialogues} LLM-US dialogues, max {args.max_turns} turns, {args.latency * 1000:.0f} ms per LLM call")
    print(f"{'concurrency':>11} {'wall s':>8} {'dialogues':>9} {'failed':>6} {'turns':>6} {'LLM calls':>9} "
          f"{'peak in flight':>14} {'dialogues/s':>11}")
    for r in results:
        print(f"{r['concurrency']:>11} {r['wall_s']:>8.1f} {r['stored']:>9} {r['failed']:>6} {r['turns']:>6} "
              f"{r['llm_calls']:>9} {r['max_in_flight']:>14} {r['stored'] / r['wall_s']:>11.2f}")
    speedup = results[0]["wall_s"] / results[1]["wall_s"]
    print(f"speed-up at concurrency {args.concurrency}: {speedup:.1f}x (target >= 8x)")


if __name__ == "__main__":
    main()
