"""N people battling at once through the public app, with systems and scorer on an OpenAI-compatible stub.

Shared by `tests/safety/test_public_load.py` and `benchmarks/public_load.py`.
The systems are real `ConversationalRecommender`s whose replies come from the
LLM client over HTTP (the stub server answers); the background scorer labels
dialogue acts with the LLM annotator through the same stub, so the whole path
of a public deployment with an endpoint runs: app, store, durable queue,
scoring workers. The clients run in a separate process
(`benchmarks/load_test.py --drive`), like real browsers.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "battle"))

from battle_support import MOVIES, BattleResult, check_stored_exactly_once, launch, percentile  # noqa: E402

from arena.runtime.config import Settings  # noqa: E402
from arena.conversation.crs_interface import ConversationalRecommender, CRSSpec  # noqa: E402
from arena.dialogue import Dialogue, RecommendedItem  # noqa: E402
from arena.llm import LLMClient  # noqa: E402
from tests.support.openai_stub_server import OpenAIStubServer  # noqa: E402
from webapp.services import build_services  # noqa: E402

METRICS = "acts,rdl,srrr,sr"


def stub_answer(request: Any) -> str:
    """What the stub model says: act labels (JSON) for the annotator, a short reply for a system."""
    last = request.messages[-1].get("content") or "" if request.messages else ""
    if "(to label): " in last:
        line = next(ln for ln in last.splitlines() if "(to label): " in ln)
        speaker, text = line.split(" (to label): ", 1)
        if speaker == "SYSTEM":
            intents = ["REC-S"] if re.search(r"\(\d{4}\)", text) else ["REQ"]
        else:
            intents = ["ACC"] if "turn 1" in text else ["OTH"]
        return json.dumps({"intents": intents, "titles": []})
    return "You might enjoy Star Wars (1977); it has everything you asked for."


class StubLLMCRS(ConversationalRecommender):
    """A system whose every reply is one LLM call (through the app's client); items from the catalog."""

    def __init__(self, name: str, llm: LLMClient):
        self.name = name
        self.llm = llm

    def respond(self, dialogue: Dialogue) -> tuple[str, list[RecommendedItem]]:
        last = dialogue.user_turns()[-1].text
        reply = self.llm.complete([{"role": "system", "content": f"You are {self.name}."},
                                   {"role": "user", "content": last}], max_tokens=60, use_cache=False)
        start = sum(map(ord, last + self.name)) % len(MOVIES)
        return reply.text, [RecommendedItem(item_id=i, title=t) for i, t in MOVIES[start:start + 3]]


def drive(url: str, sessions: int, turns: int) -> list[BattleResult]:
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "load_test.py"), "--drive", url, "--sessions", str(sessions),
         "--turns", str(turns)],
        check=True, capture_output=True, text=True,
    ).stdout
    return [BattleResult(**r) for r in json.loads(out.strip().splitlines()[-1])]


def run_public_load(tmp: Path, sessions: int, turns: int, workers: int, *, stub_latency_s: float = 0.02,
                    drain_timeout_s: float = 300.0) -> dict[str, Any]:
    """Play `sessions` battles at once; returns figures and the problems found (empty when all is well)."""
    with OpenAIStubServer(default=stub_answer, latency_s=stub_latency_s) as stub:
        settings = Settings(
            db_path=tmp / "arena.sqlite3", cache_dir=tmp / "cache", llm_provider="openai",
            llm_base_url=stub.base_url, llm_model="stub-model", llm_cache=False, llm_concurrency=32,
            max_turns=max(turns, 2), score_metrics=METRICS, scorer_workers=workers,
            # Every client comes from 127.0.0.1 and votes within seconds: no flags, no limits here.
            burst_votes=10_000, min_battle_s=0.0, max_battles_per_ip=10_000, max_votes_per_ip=10_000,
            max_rated_per_ip=10_000, burst_labels=10_000,
        )
        holder: dict[str, LLMClient] = {}
        specs = [CRSSpec(name=n, family="stub", dataset="redial", description="stub-LLM system",
                         load=lambda n=n: StubLLMCRS(n, holder["llm"]), check=lambda: None)
                 for n in ("alpha", "beta", "gamma", "delta")]
        services = build_services(settings, specs=specs)
        holder["llm"] = services.llm
        demo, url = launch(services)
        try:
            started = time.perf_counter()
            results = drive(url, sessions, turns)
            played_s = time.perf_counter() - started
            problems = check_stored_exactly_once(services.store, results, turns)
            drain_s, counts = _wait_for_drain(services.store, 2 * sessions, drain_timeout_s)
            unscored = [d.dialogue_id for d in services.store.list_dialogues()
                        if d.scores.get("rdl") is None or d.scores["rdl"].value is None]
            if unscored:
                problems.append(f"{len(unscored)} dialogues without an rdl score: {unscored[:3]}")
            if counts["done"] != 2 * sessions:
                problems.append(f"scoring jobs {counts}, expected {2 * sessions} done")
        finally:
            demo.close()
            services.close()
        calls = stub.chat_requests
    turn_s = [t for r in results for t in r.turn_seconds]
    return {
        "sessions": sessions, "turns": turns, "workers": workers, "played_s": played_s,
        "turn_p50_ms": 1000 * percentile(turn_s, 50), "turn_p95_ms": 1000 * percentile(turn_s, 95),
        "drain_after_last_vote_s": drain_s, "llm_calls": len(calls), "stub_max_in_flight": stub.max_in_flight,
        "problems": problems, "results": [asdict(r) for r in results],
    }


def _wait_for_drain(store, expected: int, timeout_s: float) -> tuple[float, dict[str, int]]:
    started = time.perf_counter()
    while True:
        counts = store.scoring_counts()
        if counts["queued"] == 0 and counts["running"] == 0 and counts["done"] + counts["failed"] >= expected:
            return time.perf_counter() - started, counts
        if time.perf_counter() - started > timeout_s:
            return float("inf"), counts
        time.sleep(0.1)
