"""CoRE scoring cost: sequential vs concurrent calls against a server with fixed latency.

Scores N ReDial dialogues (from the IARD file in assets/iard) with `score_core`
against a local OpenAI-compatible stub server (127.0.0.1) that answers every
request after a fixed delay. The stub's judges always rate 3; its debaters
disagree in round 1 and agree in round 2, so every dialogue costs 12 judge
calls + 2 debate rounds x 4 = 20 calls.

    HF_HUB_OFFLINE=1 python benchmarks/core_concurrency.py [--dialogues 20] [--latency 0.3]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.dialogue import Dialogue, RecommendedItem  # noqa: E402
from arena.llm import LLMClient, OpenAIProvider, RetryPolicy  # noqa: E402
from arena.llm.cache import ResponseCache  # noqa: E402
from evaluators.core import CoreConfig, score_core  # noqa: E402
from tests.support import openai_stub_server  # noqa: E402
from tests.support.openai_stub_server import OpenAIStubServer  # noqa: E402

# The stub writes the headers and the body of an answer separately; with Nagle's
# algorithm on, each answer then waits ~40 ms for a delayed ACK, which would be
# added to the fixed latency this benchmark is about.
openai_stub_server._Handler.disable_nagle_algorithm = True

IARD = ROOT / "assets" / "iard" / "formatted_IARD_annotated_partially.json"  # the project's copy
TITLE = re.compile(r"([A-Z][^()]{1,60}?) \((\d{4})\)")


def load_dialogues(count: int) -> list[Dialogue]:
    """The first `count` IARD dialogues; movie mentions in system turns become its recommended items."""
    raw = json.loads(IARD.read_text(encoding="utf-8"))[:count]
    dialogues = []
    for conv in raw:
        d = Dialogue(crs_id="iard", metadata={"source": f"iard:{conv['conversation_id']}"})
        for turn in conv["conversation"]:
            if turn["participant"] == "USER":
                d.add_user(turn["utterance"])
            else:
                items = [RecommendedItem(item_id=f"{t.strip()} ({y})", title=f"{t.strip()} ({y})")
                         for t, y in TITLE.findall(turn["utterance"])]
                d.add_agent(turn["utterance"], items=items)
        dialogues.append(d)
    return dialogues


def stub_answer(request) -> str:
    system = str(request.messages[0].get("content") or "")
    user = request.last_user_message
    if "Factor under evaluation" in system:
        return "The system turns were checked against the rubric step by step.\n<rating>3</rating>"
    role = re.search(r"YOUR ROLE: (.+?)\.", system).group(1)
    first_round = "Round 1 of" in user
    score = 50 + 5 * len(role) % 20 if first_round else 60
    return json.dumps({"evaluator": role, "statement": f"As {role} I weigh my factors.", "score": score})


def run(dialogues, base_url, *, concurrency, workers, cache_dir=None):
    client = LLMClient(OpenAIProvider(base_url, default_model="stub-model"), concurrency=concurrency,
                       retry=RetryPolicy(max_retries=0),
                       cache=ResponseCache(cache_dir) if cache_dir else None)
    config = CoreConfig(max_workers=workers)
    started = time.monotonic()
    per = [score_core(d, client, config=config)["core.overall"].details for d in dialogues]
    total = time.monotonic() - started
    return {
        "wall_s_per_dialogue": total / len(dialogues),
        "calls_per_dialogue": sum(p["calls"] for p in per) / len(per),
        "provider_calls_per_dialogue": sum(p["provider_calls"] for p in per) / len(per),
        "tokens_per_dialogue": sum(p["tokens"] for p in per) / len(per),
        "rounds": sorted({p["rounds"] for p in per}),
        "total_s": total,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dialogues", type=int, default=20)
    parser.add_argument("--latency", type=float, default=0.3)
    args = parser.parse_args()
    dialogues = load_dialogues(args.dialogues)
    with OpenAIStubServer(default=stub_answer, latency_s=args.latency) as server, \
            tempfile.TemporaryDirectory() as tmp:
        modes = [
            ("sequential (1 worker, client concurrency 1)", dict(concurrency=1, workers=1)),
            ("concurrent (client concurrency 8, the default)", dict(concurrency=8, workers=None)),
            ("concurrent (client concurrency 16)", dict(concurrency=16, workers=None, cache_dir=tmp)),
            ("re-score, same cache (concurrency 16)", dict(concurrency=16, workers=None, cache_dir=tmp)),
        ]
        print(f"{len(dialogues)} dialogues, stub latency {args.latency * 1000:.0f} ms per call")
        print(f"{'mode':48} {'wall s/dialogue':>15} {'calls':>6} {'to server':>9} {'tokens':>7} rounds")
        for name, kwargs in modes:
            r = run(dialogues, server.base_url, **kwargs)
            print(f"{name:48} {r['wall_s_per_dialogue']:15.3f} {r['calls_per_dialogue']:6.1f} "
                  f"{r['provider_calls_per_dialogue']:9.1f} {r['tokens_per_dialogue']:7.0f} {r['rounds']}")
        print(f"max requests in flight at the server: {server.max_in_flight}")


if __name__ == "__main__":
    main()
