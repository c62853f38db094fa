"""How the offline systems answer a person who is done, on ReDial seekers' own last messages.

    HF_HUB_OFFLINE=1 ARENA_LLM_PROVIDER=local ARENA_LLM_CACHE=0 nice -n 10 \\
        python benchmarks/closing_replies.py --halves tune --label before

Each conversation of `benchmarks/conversations/redial_closings_v1.json` (gold written before any system
ran) is replayed seeker message by seeker message, up to and including its last gold message, through
ChatCRS ReDial and CRB-CRS ReDial. On the gold messages two faults are counted: a `close` (a goodbye,
thanks, or taking a title) answered with new items, which should never happen; and a `more` (a request
or a question) answered with no items and a farewell, a false close. An item is new when no earlier reply
of the replay showed it and the seeker's message does not name it. The replies are stored under
`benchmarks/results/closing_replies_<label>.json` (no seeker text: it stays in ../shared); `--rescore`
reads them again with the current checks, `--show` prints the gold messages with their replies.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "benchmarks" / "conversations"))

from arena.catalogs.catalog import load_catalog  # noqa: E402
from arena.titles.phrases import normalize  # noqa: E402
from draw_redial_closings import seeker_messages  # noqa: E402
from real_turn_checks import resolve_texts  # noqa: E402
from real_user_turns import RESULTS, SYSTEMS, build_registry, replay, store_results  # noqa: E402

PROBE = ROOT / "benchmarks" / "conversations" / "redial_closings_v1.json"
RUN_SYSTEMS = ("chatcrs_redial", "crb_crs_redial")
# A reply that takes leave: kept narrower than a greeting check, since "have a look" or "glad you asked"
# open a reply that goes on to ask something.
FAREWELL = re.compile(r"\b(bye|goodbye|good night|take care|happy (watching|viewing)|"
                      r"enjoy (it|them|the|your)|have (fun|a (great|good|nice|lovely|wonderful)))\b",
                      re.IGNORECASE)


def conversations(halves: list[str]) -> list[dict]:
    """The probe's conversations of the halves, each with every seeker message up to its last gold one
    (the gold on the messages that have one)."""
    probe = json.loads(PROBE.read_text(encoding="utf-8"))["conversations"]
    numbers = seeker_messages()
    out = []
    for c in probe:
        if c["split"] not in halves:
            continue
        dialogue = c["source"]["dialogue"]
        gold = {t["utterance"]: t["gold"] for t in c["turns"]}
        turns = [{"source": {"corpus": "redial_valid", "dialogue": dialogue, "utterance": i},
                  "gold": gold.get(i)} for i in numbers[dialogue] if i <= max(gold)]
        out.append({**c, "turns": turns})
    return resolve_texts(out)


def names(item, text: str) -> bool:
    """Whether the message names the item (its title, without the year, as whole words)."""
    title = normalize(re.sub(r"\s*\(\d{4}\)\s*$", "", item.title))
    return bool(title) and f" {title} " in f" {normalize(text)} "


def score(conversation: dict, rows: list[dict], catalog) -> list[dict]:
    shown: set[str] = set()
    scored = []
    for turn, row in zip(conversation["turns"], rows):
        items = [i for i in (catalog.get(r) for r in row["item_ids"]) if i is not None]
        new = [i.label for i in items if i.item_id not in shown and not names(i, turn["user"])]
        shown |= {i.item_id for i in items}
        if turn["gold"] is None:
            continue
        farewell = bool(FAREWELL.search(row["reply"]))
        scored.append({"conversation": conversation["id"], "utterance": turn["source"]["utterance"],
                       "gold": turn["gold"], "user": turn["user"], "reply": row["reply"], "new": new,
                       "close_with_list": bool(new) if turn["gold"] == "close" else None,
                       "false_close": (not items and farewell) if turn["gold"] == "more" else None})
    return scored


def summary(rows: list[dict]) -> dict:
    closes = [r for r in rows if r["gold"] == "close"]
    mores = [r for r in rows if r["gold"] == "more"]
    return {"close_with_list": (sum(r["close_with_list"] for r in closes), len(closes)),
            "false_close": (sum(r["false_close"] for r in mores), len(mores))}


def table(scores: dict) -> str:
    lines = ["| system | half | closings answered with new items | requests answered with a farewell "
             "and no items |", "|---|---|---:|---:|"]
    for name, halves in scores.items():
        for half, rows in halves.items():
            s = summary(rows)
            lines.append(f"| {name} | {half} | {s['close_with_list'][0]}/{s['close_with_list'][1]} | "
                         f"{s['false_close'][0]}/{s['false_close'][1]} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--halves", default="tune", help="tune, heldout or both (comma-separated)")
    parser.add_argument("--systems", default=",".join(RUN_SYSTEMS))
    parser.add_argument("--label", default="run",
                        help="results go to benchmarks/results/closing_replies_<label>.json")
    parser.add_argument("--rescore", action="store_true", help="score the stored replies of --label again")
    parser.add_argument("--show", action="store_true", help="print each gold message with its reply")
    args = parser.parse_args()
    halves = args.halves.split(",")
    if set(halves) - {"tune", "heldout"}:
        parser.error("the probe's halves are tune and heldout")
    chosen = conversations(halves)
    out = RESULTS / f"closing_replies_{args.label}.json"
    if args.rescore:
        if not out.is_file():
            parser.error(f"no stored replies at {out}")
        stored = json.loads(out.read_text(encoding="utf-8"))["replies"]
    else:
        registry = build_registry()
        stored = {}
        for name in args.systems.split(","):
            crs = registry.get(name)
            stored[name] = {half: {c["id"]: replay(crs, c) for c in chosen if c["split"] == half}
                            for half in halves}
    by_id = {c["id"]: c for c in chosen}
    scores = {name: {half: [r for cid, rows in by_conversation.items()
                            for r in score(by_id[cid], rows, load_catalog(SYSTEMS[name]))]
                     for half, by_conversation in by_half.items()}
              for name, by_half in stored.items()}
    if args.show:
        for name, by_half in scores.items():
            for half, rows in by_half.items():
                for r in rows:
                    fault = ("CLOSE WITH LIST " + ", ".join(r["new"])) if r["close_with_list"] else \
                        "FALSE CLOSE" if r["false_close"] else "ok"
                    print(f"== {name} {half} {r['conversation']}[{r['utterance']}] {r['gold']}: {fault}\n"
                          f"  SEEKER: {r['user']}\n  SYSTEM: {r['reply']}")
    store_results(out, stored, scores, summary, table)


if __name__ == "__main__":
    main()
