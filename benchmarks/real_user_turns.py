"""Real users' multi-turn conversations replayed against the offline systems, scored strictly.

One command (both halves, all three systems; the replies and the scores are stored in
`benchmarks/results/real_user_turns_<label>.json`, the table is printed):

    HF_HUB_OFFLINE=1 ARENA_LLM_PROVIDER=local ARENA_LLM_CACHE=0 nice -n 10 \\
        python benchmarks/real_user_turns.py --label before

`--rescore --label before` reads the stored replies again with the current checks (no system runs);
`--systems chatcrs_opendialkg` runs one system and replaces only its replies under the label. The
stored replies name their items by catalog id, so rescore a label with the catalogs it ran on.

`--set v2 --halves fresh --label fresh_X` runs the sixth set (`real_user_turns_v2.json`, one half,
"fresh"), never tuned on and already measured once; `--set v3 --halves fresh` runs the seventh
(`real_user_turns_v3.json`, one half, "fresh"), drawn after v2 was spent and kept unseen for the final
measurement; `--set v4 --halves fresh` runs the eighth (`real_user_turns_v4.json`, one half, "fresh"),
drawn after v3 by the seeded rule of `conversations/draw_real_user_turns.py`, its gold written before any
system ran; `--set v5 --halves fresh` runs the ninth (`real_user_turns_v5.json`, one half, "fresh"), drawn
after v4 by the same rule (`--set v5` there), its gold also written before any system ran; `--set v6
--halves tune` runs the tenth (`real_user_turns_v6.json`, one half, "tune"), ReDial seekers drawn after v5
by that rule (`--set v6` there) as a development set to tune on, its gold written before any system ran;
`--set v7 --halves fresh` runs the eleventh (`real_user_turns_v7.json`, one half, "fresh"), ReDial seekers
drawn after v6 by that rule (`--set v7` there), unseen, its gold written before any system ran;
`--set v8 --halves fresh` runs the twelfth (`real_user_turns_v8.json`, one half, "fresh"), ReDial seekers
drawn after v7 by that rule (`--set v8` there), unseen too, its gold written before any system ran.
The conversations (`benchmarks/conversations/real_user_turns_v1.json` to v8, issue 47)
are real people's messages to CRSs: the CRS Arena study's dialogues and ReDial seekers, named by source
and read from ../shared at run time. The gold says what a person reads in each message; the strict
checks are in `benchmarks/real_turn_checks.py`. Figures are given by turn depth: the 1st, 2nd and 3rd-or-later
request (a turn that expects a list) of a conversation.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from arena.catalogs.catalog import CATALOG_DIR, load_catalog  # noqa: E402
from real_turn_checks import (  # noqa: E402
    answers_strict, false_facts_strict, misfits, off_vocabulary, resolve_texts, unnatural_strict, unresolved,
)
from user_message_checks import Turn, apply_gold, catalog_names, new_items  # noqa: E402

# v1 has a tune and a held-out half; v2 to v5 are one fresh half each (v2 measured once, v3 kept unseen
# for the final measurement, v4 drawn after v3 and v5 after v4, each with its gold written before any
# system ran); v6, drawn after v5, is one tune half: a development set, its gold also written first; v7,
# drawn after v6, is one fresh half again, unseen, its gold written before any system ran; v8, drawn after
# v7, is another such fresh half.
CONVERSATION_SETS = {
    name: ROOT / "benchmarks" / "conversations" / f"real_user_turns_{name}.json"
    for name in ("v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8")}
CONVERSATIONS = CONVERSATION_SETS["v1"]
RESULTS = ROOT / "benchmarks" / "results"
SYSTEMS = {"chatcrs_redial": "redial", "chatcrs_opendialkg": "opendialkg", "crb_crs_redial": "redial"}
DEPTHS = ("1st", "2nd", "3rd+")


def replay(crs, conversation: dict) -> list[dict]:
    """The system's reply to each user turn, in order, with the ids of the items it showed."""
    from arena.dialogue import Dialogue

    dialogue = Dialogue(crs_id=crs.name)
    rows = []
    for spec in conversation["turns"]:
        dialogue.add_user(spec["user"])
        started = time.perf_counter()
        text, recommended = crs.respond(dialogue)
        seconds = time.perf_counter() - started
        dialogue.add_agent(text, items=recommended)
        rows.append({"reply": text, "item_ids": [r.item_id for r in recommended],
                     "seconds": round(seconds, 3)})
    return rows


def build_registry():
    """The systems as the app builds them from the environment, with the learnt act reader."""
    from arena.runtime.config import Settings
    from arena.llm import build_client
    from crs.registry import CRSRegistry
    from crs.systems import system_specs
    from evaluators.acts.intent_readers import UserActReader

    settings = Settings.from_env()
    return CRSRegistry(system_specs(settings, build_client(settings), act_reader=UserActReader()))


def score_conversation(conversation: dict, rows: list[dict], catalog) -> list[dict]:
    """Each reply read against the gold so far (constraints, shown and turned-down items)."""
    catalog_path = str(CATALOG_DIR / catalog.dataset / "id2info.json")
    persons, titles = catalog_names(catalog.dataset, catalog_path)
    constraints: dict = {}
    previous, earlier, rejected, named = [], [], [], []
    requests = 0
    scored = []
    for spec, row in zip(conversation["turns"], rows):
        about = apply_gold(spec, constraints, previous, rejected, named, catalog.find_title)
        items = [i for i in (catalog.get(r) for r in row["item_ids"]) if i is not None]
        turn = Turn(spec, spec["user"], row["reply"], items, dict(constraints), list(earlier), list(rejected),
                    about, list(named))
        listed = spec["expect"] == "list"
        requests += listed
        liked = [t for key in ("like", "like_all") for t in constraints.get(key, ())]
        bad = {i.label: misfits(i, constraints, catalog.find_title) for i in items} if listed else {}
        scored.append({
            **row, "user": spec["user"], "items": [i.label for i in items], "act": spec["act"],
            "expect": spec["expect"],
            "source": spec["source"],
            "depth": DEPTHS[min(requests, 3) - 1] if listed else None,
            "answers": answers_strict(turn, previous, catalog.find_title),
            "fits": (bool(items) and not any(bad.values())) if listed else None,
            "misfits": {label: why for label, why in bad.items() if why},
            "off_vocabulary": off_vocabulary(row["reply"], [i.title for i in items],
                                             [i.title for i in named] + liked, catalog_path),
            "closing_with_list": bool(new_items(turn)) if spec["act"] == "close" else None,
            "unresolved": unresolved(turn),
            "false_facts": false_facts_strict(turn, persons, titles),
            "unnatural": unnatural_strict(turn),
        })
        if scored[-1]["off_vocabulary"]:  # "Here are some action picks about filled:" reads badly too
            scored[-1]["unnatural"].append("heading on a stray word")
        if items:
            earlier += items if listed else []
            previous = items
    return scored


def summary(rows: list[dict]) -> dict:
    n = len(rows) or 1
    lists = [r for r in rows if r["expect"] == "list"]
    by_depth = {d: [r for r in lists if r["depth"] == d] for d in DEPTHS}
    closes = [r for r in rows if r["closing_with_list"] is not None]
    refs = [r for r in rows if r["unresolved"] is not None]
    times = sorted(r["seconds"] for r in rows)
    return {
        "replies": len(rows),
        "fit": {d: (sum(r["fits"] for r in rs), len(rs)) for d, rs in by_depth.items()},
        "fit_all": (sum(r["fits"] for r in lists), len(lists)),
        "answers_yes": sum(r["answers"] == "yes" for r in rows) / n,
        "answers_by_depth": {d: sum(r["answers"] == "yes" for r in rs) / (len(rs) or 1)
                             for d, rs in by_depth.items()},
        "closings_with_list": (sum(r["closing_with_list"] for r in closes), len(closes)),
        "off_vocabulary": sum(bool(r["off_vocabulary"]) for r in rows),
        "unresolved": (sum(r["unresolved"] for r in refs), len(refs)),
        "natural": sum(not r["unnatural"] for r in rows) / n,
        "false_facts_per_100": 100 * sum(len(r["false_facts"]) for r in rows) / n,
        "p95_s": times[min(len(times) - 1, round(0.95 * (len(times) - 1)))] if times else 0.0,
    }


def _share(pair: tuple[int, int]) -> str:
    good, total = pair
    return f"{good / total:.0%} ({good}/{total})" if total else "-"


def table(scores: dict) -> str:
    lines = ["| system | half | replies | fit 1st / 2nd / 3rd+ request | fit, all requests "
             "| answers (all turns) "
             "| closings with a list | replies with a topic outside the vocabulary | unresolved references "
             "| natural English | false facts per 100 replies | p95 turn (s) |",
             "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, halves in scores.items():
        for half, rows in halves.items():
            s = summary(rows)
            fit = " / ".join(_share(s["fit"][d]) for d in DEPTHS)
            lines.append(f"| {name} | {half} | {s['replies']} | {fit} | {_share(s['fit_all'])} | "
                         f"{s['answers_yes']:.0%} | {s['closings_with_list'][0]}/{s['closings_with_list'][1]}"
                         f" | {s['off_vocabulary']} | {s['unresolved'][0]}/{s['unresolved'][1]}"
                         f" | {s['natural']:.0%} | "
                         f"{s['false_facts_per_100']:.1f} | {s['p95_s']:.2f} |")
    return "\n".join(lines)


def score_all(stored: dict, conversations: list[dict]) -> dict:
    by_id = {c["id"]: c for c in conversations}
    scores: dict = {}
    for name, halves in stored.items():
        catalog = load_catalog(SYSTEMS[name])
        for half, by_conversation in halves.items():
            rows = []
            for cid, replies in by_conversation.items():
                for row in score_conversation(by_id[cid], replies, catalog):
                    rows.append({"conversation": cid, **row})
            scores.setdefault(name, {})[half] = rows
    return scores


def show(scores: dict) -> None:
    for name, halves in scores.items():
        for half, rows in halves.items():
            for r in rows:
                faults = [f"answers {r['answers']}"]
                faults += [f"misfit {k}: {','.join(v)}" for k, v in r["misfits"].items()]
                faults += [f"off-vocabulary {r['off_vocabulary']}"] if r["off_vocabulary"] else []
                faults += ["closing with a list"] if r["closing_with_list"] else []
                faults += ["unresolved reference"] if r["unresolved"] else []
                faults += r["false_facts"] + r["unnatural"]
                print(f"== {name} {half} {r['conversation']} [{r['act']}/{r['expect']} {r['depth'] or ''}]\n"
                      f"  USER: {r['user']}\n  SYSTEM: {r['reply']}\n  -> {'; '.join(faults)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", dest="conversation_set", choices=sorted(CONVERSATION_SETS), default="v1",
                        help="v1 (halves tune, heldout), v2, v3, v4 or v5 (half fresh: never tuned on), "
                             "v6 (half tune: a development set)")
    parser.add_argument("--conversations", type=Path, default=None,
                        help="a conversation file instead of --set")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--halves", default="",
                        help="the halves to run: tune (v1, v6), heldout (v1), fresh (v2 to v5); default: all "
                             "of the set's")
    parser.add_argument("--label", default="run",
                        help="results go to benchmarks/results/real_user_turns_<label>.json")
    parser.add_argument("--rescore", action="store_true", help="score the stored replies of --label again")
    parser.add_argument("--limit", type=int, default=0,
                        help="only the first N conversations of each half (a trial)")
    parser.add_argument("--show", action="store_true", help="print every reply and what the checks found")
    args = parser.parse_args()
    args.conversations = args.conversations or CONVERSATION_SETS[args.conversation_set]
    if not args.conversations.is_file():
        parser.error(f"no conversation file at {args.conversations}")
    conversations = resolve_texts(json.loads(args.conversations.read_text(encoding="utf-8"))["conversations"])
    halves = args.halves.split(",") if args.halves else sorted({c["split"] for c in conversations})
    unknown = sorted(set(halves) - {c["split"] for c in conversations})
    if unknown:  # a half the file lacks would run nothing and store an empty result under the label
        parser.error(f"{args.conversations.name} has no half {', '.join(unknown)}; its halves: "
                     f"{', '.join(sorted({c['split'] for c in conversations}))}")
    out = RESULTS / f"real_user_turns_{args.label}.json"
    if args.rescore:
        if not out.is_file():
            parser.error(f"no stored replies at {out}")
        stored = json.loads(out.read_text(encoding="utf-8"))["replies"]
    else:
        registry = build_registry()
        # A run of some systems replaces only their replies under the label.
        before = json.loads(out.read_text(encoding="utf-8"))["replies"] if out.is_file() else {}
        stored = defaultdict(dict, before)
        for name in args.systems.split(","):
            stored[name] = {}
            crs = registry.get(name)
            for half in halves:
                chosen = [c for c in conversations if c["dataset"] == SYSTEMS[name] and c["split"] == half]
                stored[name][half] = {c["id"]: replay(crs, c) for c in chosen[:args.limit or None]}
    scores = score_all(stored, conversations)
    if args.show:
        show(scores)
    store_results(out, stored, scores, summary, table)


def store_results(out: Path, stored: dict, scores: dict, summarise, tabulate) -> None:
    """Write the replies, each half's summary and the scored rows to `out`, then print the table. The
    user texts stay out of the stored file (they are read from ../shared); the replies stay in."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    summaries = {name: {half: summarise(rows) for half, rows in halves.items()}
                 for name, halves in scores.items()}
    scored = {name: {half: [{k: v for k, v in r.items() if k != "user"} for r in rows]
                     for half, rows in halves.items()}
              for name, halves in scores.items()}
    out.write_text(json.dumps({"replies": stored, "summary": summaries, "scored": scored}, indent=1,
                              ensure_ascii=False), encoding="utf-8")
    print(tabulate(scores))
    print(f"stored: {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
