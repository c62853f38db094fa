"""Multi-turn conversations with the offline systems, every reply scored against the catalog.

The conversations (`benchmarks/conversations/user_messages_v1.json`, 34 of 3-4 user turns, written
before the work on reading user messages; `--conversations
benchmarks/conversations/user_messages_v2.json`, a second set of 34 written before the second round
of that work) hold constraints, questions about shown items, turn-downs
with reasons, refinements, small talk, negations ("funny but not a romcom", "not too gory"),
persons, "lighter", OpenDialKG kinds and closings. Each reply is scored by
`benchmarks/user_message_checks.py`: answers what was asked (yes / partly / no), items fit every
constraint so far, no repeated or turned-down item, no fact the catalog does not bear out, natural
English; and the turn time.

The fifth set (`benchmarks/conversations/real_user_turns_v1.json`, real users' turns named by
source, texts read from ../shared) replays here too; its own strict checks and one command are in
`benchmarks/real_user_turns.py`.

The split into "tune" and "heldout" is fixed in the file. The script prints the splits asked for
(`--splits tune` while working) and stores every reply of every split in
`benchmarks/results/user_messages_<label>.json`, so the held-out half can be read once at the end.
ChatCRS reads acts with the learnt act model as in the app, CRB-CRS with its rules.

    HF_HUB_OFFLINE=1 ARENA_LLM_PROVIDER=local nice -n 10 python benchmarks/user_messages.py \
        --label before --splits tune [--show]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from arena.catalogs.catalog import CATALOG_DIR  # noqa: E402
from arena.runtime.config import Settings  # noqa: E402
from arena.dialogue import Dialogue  # noqa: E402
from arena.llm import build_client  # noqa: E402
from crs.registry import CRSRegistry  # noqa: E402
from crs.systems import system_specs  # noqa: E402
from user_message_checks import (  # noqa: E402
    Turn, answers, apply_gold, catalog_names, false_facts, fits, fresh, unnatural,
)

CONVERSATIONS = ROOT / "benchmarks" / "conversations" / "user_messages_v1.json"
RESULTS = ROOT / "benchmarks" / "results"
SYSTEMS = {"chatcrs_redial": "redial", "chatcrs_opendialkg": "opendialkg", "crb_crs_redial": "redial"}
PLACES = ("first", "second", "third")


def run_conversation(crs, conversation: dict) -> list[dict]:
    catalog = crs.catalog
    persons, titles = catalog_names(catalog.dataset, str(CATALOG_DIR / catalog.dataset / "id2info.json"))
    dialogue = Dialogue(crs_id=crs.name)
    constraints: dict = {}
    previous, earlier, rejected, named = [], [], [], []
    rows = []
    for spec in conversation["turns"]:
        message = spec["user"]
        for index, place in enumerate(PLACES):
            if "{" + place + "}" in message:
                item = previous[min(index, len(previous) - 1)] if previous else None
                message = message.replace("{" + place + "}", item.label if item else "it")
        about = apply_gold(spec, constraints, previous, rejected, named, catalog.find_title)
        dialogue.add_user(message)
        started = time.perf_counter()
        text, recommended = crs.respond(dialogue)
        seconds = time.perf_counter() - started
        state_for = getattr(crs, "state_for", None)  # stored as the runner does, so the next turn resumes
        dialogue.add_agent(text, items=recommended, state=state_for(dialogue) if state_for else None)
        items = [i for i in (catalog.get(r.item_id) for r in recommended) if i is not None]
        turn = Turn(spec, message, text, items, dict(constraints), list(earlier), list(rejected), about, list(named))
        listed = spec["expect"] == "list" and bool(items)
        facts = false_facts(turn, persons, titles)
        rows.append({
            "user": message, "reply": text, "items": [i.label for i in items], "expect": spec["expect"],
            "answers": answers(turn),
            "fits": all(fits(i, constraints) for i in items) if listed else None,
            "misfits": [i.label for i in items if not fits(i, constraints)] if listed else [],
            "fresh": fresh(turn) if listed else None,
            "false_facts": facts, "unnatural": unnatural(turn), "seconds": round(seconds, 3),
        })
        if items:
            earlier += items if spec["expect"] == "list" else []
            previous = items
    return rows


def summary(rows: list[dict]) -> dict:
    answered = Counter(r["answers"] for r in rows)
    listed = [r for r in rows if r["fits"] is not None]
    times = sorted(r["seconds"] for r in rows)
    p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))] if times else 0.0
    n = len(rows) or 1
    return {
        "replies": len(rows),
        "answers_yes": answered["yes"] / n, "answers_partly": answered["partly"] / n, "answers_no": answered["no"] / n,
        "fits": sum(r["fits"] for r in listed) / (len(listed) or 1), "lists": len(listed),
        "fresh": sum(r["fresh"] for r in listed) / (len(listed) or 1),
        "replies_with_false_fact": sum(bool(r["false_facts"]) for r in rows),
        "natural": sum(not r["unnatural"] for r in rows) / n,
        "p95_s": p95,
    }


def table(results: dict, splits: list[str]) -> str:
    lines = ["| system | split | replies | answers yes / partly / no | fit | fresh | replies with a false fact "
             "| natural | p95 turn (s) |", "|---|---|---:|---|---:|---:|---:|---:|---:|"]
    for name, by_split in results.items():
        for split in splits:
            s = summary(by_split.get(split, []))
            lines.append(f"| {name} | {split} | {s['replies']} | {s['answers_yes']:.0%} / {s['answers_partly']:.0%} / "
                         f"{s['answers_no']:.0%} | {s['fits']:.0%} ({s['lists']}) | {s['fresh']:.0%} | "
                         f"{s['replies_with_false_fact']} | {s['natural']:.0%} | {s['p95_s']:.2f} |")
    return "\n".join(lines)


def rescore(path: Path, splits: list[str]) -> None:
    """The stored replies read again by the checks that changed after the first run (natural
    English: a title in the message is no parroting, graph qualifiers are tags; false facts: a
    namesake's year is no false year). Run it with the code and catalogs the replies came from."""
    from arena.catalogs.catalog import load_catalog

    results = json.loads(path.read_text(encoding="utf-8"))
    for name, by_split in results.items():
        catalog = load_catalog(SYSTEMS[name])
        persons, titles = catalog_names(catalog.dataset, str(CATALOG_DIR / catalog.dataset / "id2info.json"))
        for rows in by_split.values():
            for row in rows:
                items = [i for i in (catalog.find_title(label) for label in row["items"]) if i is not None]
                turn = Turn({"expect": row["expect"]}, row["user"], row["reply"], items, {}, [], [])
                row["unnatural"] = unnatural(turn)
                if not row["false_facts"]:
                    continue  # the changes only take findings away
                named = [i for i in (catalog.find_title(t) for t in re.findall(r"[A-Z][^?!.]*", row["user"])) if i]
                turn.named = named
                row["false_facts"] = false_facts(turn, persons, titles)
    path.write_text(json.dumps(results, indent=1, ensure_ascii=False), encoding="utf-8")
    print(table(results, splits))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=Path, default=CONVERSATIONS,
                        help="the conversation file (default: the first set, user_messages_v1.json)")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--label", default="run", help="results go to benchmarks/results/user_messages_<label>.json")
    parser.add_argument("--splits", default="tune", help="the splits to print (all are stored): tune, heldout")
    parser.add_argument("--run", default="tune,heldout", help="the splits to run (a tuning run: tune)")
    parser.add_argument("--show", action="store_true", help="print every reply of the printed splits and its faults")
    parser.add_argument("--rescore", action="store_true",
                        help="read the stored replies of --label again with the current natural-English check")
    args = parser.parse_args()
    splits = args.splits.split(",")
    if args.rescore:
        rescore(RESULTS / f"user_messages_{args.label}.json", splits)
        return
    if not args.conversations.is_file():
        parser.error(f"no conversation file at {args.conversations}")
    conversations = json.loads(args.conversations.read_text(encoding="utf-8"))["conversations"]
    if any("user" not in t for c in conversations for t in c["turns"]):
        from real_turn_checks import resolve_texts  # the fifth set names its texts by source

        conversations = resolve_texts(conversations)
    settings = Settings.from_env()
    from evaluators.acts.intent_readers import UserActReader

    registry = CRSRegistry(system_specs(settings, build_client(settings), act_reader=UserActReader()))
    results: dict[str, dict[str, list]] = {}
    for name in args.systems.split(","):
        crs = registry.get(name)
        by_split: dict[str, list] = {}
        for conversation in conversations:
            if conversation["dataset"] != SYSTEMS[name] or conversation["split"] not in args.run.split(","):
                continue
            rows = run_conversation(crs, conversation)
            for row in rows:
                row["conversation"] = conversation["id"]
            by_split.setdefault(conversation["split"], []).extend(rows)
            if args.show and conversation["split"] in splits:
                print(f"== {name} {conversation['id']}")
                for r in rows:
                    faults = [f"answers {r['answers']}"] + (["misfit " + ", ".join(r["misfits"])] if r["misfits"] else [])
                    faults += (["repeat"] if r["fresh"] is False else []) + r["false_facts"] + r["unnatural"]
                    print(f"  USER: {r['user']}\n  SYSTEM: {r['reply']}\n  ITEMS: {r['items']}\n  -> {'; '.join(faults)}")
        results[name] = by_split
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"user_messages_{args.label}.json"
    out.write_text(json.dumps(results, indent=1, ensure_ascii=False), encoding="utf-8")
    print(table(results, splits))
    print(f"stored: {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
