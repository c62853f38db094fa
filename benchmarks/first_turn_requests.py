"""Live Recall@k of ChatCRS on first-turn requests: what the system shows, policy and all.

`recommender_recall.py` scores the recommender alone; this scores `ChatCRS.candidates`, the items
a conversation actually gets (after the dialogue policy reads the message, its constraints and
exclusions), on every iEvaLM test sample whose context is the user's first message (ReDial 67,
OpenDialKG 613; measurement only, nothing is tuned on them). Run it on two checkouts to compare.

    HF_HUB_OFFLINE=1 ARENA_LLM_PROVIDER=fake nice -n 10 python benchmarks/first_turn_requests.py
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.runtime.config import Settings  # noqa: E402
from arena.llm import build_client  # noqa: E402
from crs.registry import CRSRegistry  # noqa: E402
from crs.reply_cli import context_dialogue  # noqa: E402
from crs.systems import system_specs  # noqa: E402

KS = (5, 10, 50)


def main() -> None:
    settings = Settings.from_env()
    registry = CRSRegistry(system_specs(settings, build_client(settings)))
    print("| dataset | first-turn samples | targets | " + " | ".join(f"R@{k}" for k in KS) + " | s per turn |")
    print("|---|---:|---:|" + "---:|" * (len(KS) + 1))
    for dataset in ("redial", "opendialkg"):
        crs = registry.get(f"chatcrs_{dataset}")
        path = ROOT / "assets" / "catalogs" / f"{dataset}_eval" / "test_data_processed.jsonl"
        samples = [s for s in map(json.loads, path.read_text(encoding="utf-8").splitlines()) if len(s["context"]) == 1]
        hits = {k: 0 for k in KS}
        targets = 0
        started = time.perf_counter()
        for sample in samples:
            labels = [item.name for item in crs.candidates(context_dialogue(sample["context"], crs))]
            for target in sample["rec"]:
                targets += 1
                for k in KS:
                    hits[k] += target in labels[:k]
        per_turn = (time.perf_counter() - started) / max(1, len(samples))
        cells = " | ".join(f"{hits[k] / max(1, targets):.3f}" for k in KS)
        print(f"| {dataset} | {len(samples)} | {targets} | {cells} | {per_turn:.3f} |")


if __name__ == "__main__":
    main()
