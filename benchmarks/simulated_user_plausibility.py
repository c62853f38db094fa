"""How plausible the offline simulated users are: N dialogues per simulator against an offline system.

Every user turn is checked (simulators.plausibility): no role label or prompt text, no copy of a
system sentence, preferences named only from the user's profile. Reported per simulator: the share
of user turns passing each check, the share of generations the simulator replaced by its template
(and why), and the share of verdicts consistent with ignored questions and rejections (a failed
dialogue must carry no verdict).

    HF_HUB_OFFLINE=1 ARENA_LLM_PROVIDER=local nice -n 10 python benchmarks/simulated_user_plausibility.py \
        [--dialogues 3] [--turns 4] [--system crb_crs_redial] [--simulators abus,llm_us,target_biased,pepper]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.runtime.config import Settings  # noqa: E402
from arena.dialogue import Dialogue  # noqa: E402
from arena.llm import build_client  # noqa: E402
from arena.conversation.runner import DialogueRunner  # noqa: E402
from crs.registry import CRSRegistry  # noqa: E402
from crs.systems import system_specs  # noqa: E402
from evaluators.acts.intent_readers import intent_reader  # noqa: E402
from simulators import build_simulator, catalog_view  # noqa: E402
from simulators.plausibility import TURN_CHECKS, check_dialogue, verdict_consistent  # noqa: E402

SIMULATORS = ("abus", "llm_us", "target_biased", "pepper")


def run(kind: str, crs, view, llm, settings: Settings, dialogues: int, turns: int, show: bool = False) -> dict:
    passed: Counter[str] = Counter()
    rejected: Counter[str] = Counter()
    user_turns = consistent = failed = 0
    started = time.perf_counter()
    for seed in range(dialogues):
        options = {"nlu": "offline", "intent_readers": intent_reader} if kind == "abus" else {}
        sim = build_simulator(kind, catalog=view, seed=seed, llm=llm, max_tokens=60,
                              movielens_cache_dir=settings.cache_dir, **options)
        dialogue = DialogueRunner(crs, max_turns=turns).run_simulated(Dialogue(crs_id=crs.name), sim)
        sim.finalize(dialogue)
        said = [u.text for u in dialogue.user_turns()]
        for text, checks in zip(said, check_dialogue(dialogue, sim.profile_facts(), view)):
            user_turns += 1
            passed.update(name for name, ok in checks.items() if ok)
            if show and not all(checks.values()):
                print(f"  {kind} seed {seed} fails {[c for c, ok in checks.items() if not ok]}: {text!r}")
        rejected.update(dialogue.metadata.get("simulator_rejected", {}))
        consistent += verdict_consistent(dialogue)
        failed += dialogue.end_reason == "simulator_error"
    return {"turns": user_turns, "passed": passed, "rejected": rejected, "consistent": consistent,
            "dialogues": dialogues, "failed": failed, "seconds": time.perf_counter() - started}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dialogues", type=int, default=3)
    parser.add_argument("--turns", type=int, default=4, help="system turns per dialogue")
    parser.add_argument("--system", default="crb_crs_redial")
    parser.add_argument("--simulators", default=",".join(SIMULATORS))
    parser.add_argument("--show", action="store_true", help="print every user turn that fails a check")
    args = parser.parse_args()
    settings = Settings.from_env()
    llm = build_client(settings)
    crs = CRSRegistry(system_specs(settings, llm)).get(args.system)
    view = catalog_view("redial")
    print(f"LLM: {llm.describe()}. System: {args.system}. {args.dialogues} dialogues x {args.turns} turns each.\n")
    print("| simulator | user turns | no role label/prompt | no copy | profile-grounded preference | "
          "generations replaced (why) | verdicts consistent | failed dialogues | s |")
    print("|---|---:|---:|---:|---:|---|---:|---:|---:|")
    for kind in args.simulators.split(","):
        r = run(kind, crs, view, llm, settings, args.dialogues, args.turns, args.show)
        n = max(r["turns"], 1)
        shares = " | ".join(f"{r['passed'][c]}/{r['turns']} = {r['passed'][c] / n:.2f}" for c in TURN_CHECKS)
        why = ", ".join(f"{reason}: {count}" for reason, count in r["rejected"].most_common()) or "none"
        print(f"| {kind} | {r['turns']} | {shares} | {sum(r['rejected'].values())} ({why}) | "
              f"{r['consistent']}/{r['dialogues']} | {r['failed']} | {r['seconds']:.0f} |", flush=True)


if __name__ == "__main__":
    main()
