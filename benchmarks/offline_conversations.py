"""Scripted two-turn conversations with the offline systems, each checked against the catalog.

The conversations are in `benchmarks/conversations/offline_conversations_v1.json`: a question
about a shown item, a turn-down, a child in the audience, an era, a closing, a complaint (ReDial
and OpenDialKG). A second message may name "{first}": the first item the system showed in its
first reply. Every check is objective, read from the catalog entries of what was shown:

- answers ASPECT: the reply states the first item's catalog fact (a director, a star, its year,
  the start of its plot, a genre; for "suitability" one of its genres and a word about children),
  or says the catalog lacks it;
- only_about_first: the answer shows only the item asked about, and names it;
- excludes_first: neither the first item nor a sequel or namesake of it is shown again;
- no_genre G / child_safe / child_friendly_share X / era LO HI / kind K / first_kind K:
  genres, years and kinds of the shown items;
- no_title_word W, not_all_year Y: the complaint's words did not become the request;
- farewell: a closing gets no list and a goodbye; picks_child_friendly: "which one is best for
  kids?" is answered with a shown family or animation title (or none when none is).

Half the conversations ("tune") were looked at while building the dialogue policy; the other half
("heldout") only measured. `--reader learnt` reads the user's act with the project's act model
(evaluators.acts) instead of the rules.

    HF_HUB_OFFLINE=1 ARENA_LLM_PROVIDER=local nice -n 10 python benchmarks/offline_conversations.py \
        [--reader rules|learnt] [--show] [--write]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.catalogs.catalog import CatalogItem  # noqa: E402
from arena.runtime.config import Settings  # noqa: E402
from arena.dialogue import Dialogue  # noqa: E402
from arena.llm import build_client  # noqa: E402
from arena.titles.phrases import normalize  # noqa: E402
from crs.registry import CRSRegistry  # noqa: E402
from crs.systems import system_specs  # noqa: E402

CONVERSATIONS = ROOT / "benchmarks" / "conversations" / "offline_conversations_v1.json"
# Raw output, not tracked: the figures of record are in BENCHMARKS.md.
RESULTS = ROOT / "benchmarks" / "out" / "offline_conversations.md"
SYSTEMS = {"chatcrs_redial": "redial", "chatcrs_opendialkg": "opendialkg", "crb_crs_redial": "redial"}
CHILD_UNSAFE = ("horror", "crime", "thriller", "slasher")
CHILD_FRIENDLY = ("family", "animation")
_CHILD_WORDS = re.compile(r"\b(child|children|kids?|young)\b", re.IGNORECASE)
_GOODBYE = re.compile(r"\b(bye|goodbye|enjoy|welcome|happy (watching|reading))\b", re.IGNORECASE)
_LACKS = re.compile(r"\b(catalog|catalogue)\b.*\b(no|not|does not|doesn't)\b", re.IGNORECASE)


def genre_words(item: CatalogItem) -> set[str]:
    return {w for g in item.genres for w in normalize(g).split()}


def kind_of(item: CatalogItem) -> str:
    """"book" for an OpenDialKG entry with writers and neither cast nor director, else "film"
    (read here from the entry itself, so the check does not trust the system's own reading)."""
    people = item.people
    if item.dataset == "opendialkg" and people.get("writer") and not (
            people.get("actor") or people.get("star") or people.get("director")):
        return "book"
    return "film"


def unsafe(item: CatalogItem) -> bool:
    return bool(genre_words(item) & set(CHILD_UNSAFE))


def friendly(item: CatalogItem) -> bool:
    return bool(genre_words(item) & set(CHILD_FRIENDLY)) and not unsafe(item)


def same_series(a: CatalogItem, b: CatalogItem) -> bool:
    """b is a, a sequel of a or another title starting like a ("Batman" / "Batman Returns")."""
    if a.item_id == b.item_id:
        return True
    base = re.sub(r"\s+(\d+|ii|iii|iv|v)$", "", normalize(re.split(r":| - ", a.title)[0]))
    base = re.sub(r"^(the|a|an) ", "", base)
    other = re.sub(r"^(the|a|an) ", "", normalize(b.title))
    return len(base) >= 4 and (other == base or other.startswith(base + " "))


def fact_values(item: CatalogItem, aspect: str) -> list[str]:
    people = item.people
    return {
        "plot": [item.plot[:40]] if item.plot else [],
        "director": list(people.get("director", ())),
        "writer": list(people.get("writer", ())),
        "stars": list(people.get("star", ()) or people.get("actor", ())),
        "year": [str(item.year)] if item.year else [],
        "genres": list(item.genres),
    }.get(aspect, [])


def check(name: str, args: list, text: str, items: list[CatalogItem], first: list[CatalogItem]) -> bool:
    low = text.lower()
    if name == "answers":
        if not first:
            return False
        item, aspect = first[0], args[0]
        if aspect == "suitability":
            return any(g.lower() in low for g in item.genres) and bool(_CHILD_WORDS.search(text))
        values = fact_values(item, aspect)
        return any(v.lower() in low for v in values) if values else bool(_LACKS.search(text))
    if name == "only_about_first":
        return bool(first) and [i.item_id for i in items] == [first[0].item_id] and first[0].title.lower() in low
    if name == "excludes_first":
        return bool(first) and not any(same_series(first[0], i) for i in items)
    if name == "has_items":
        return bool(items)
    if name == "no_genre":
        return not any(args[0] in genre_words(i) or (args[0] == "horror" and "slasher" in genre_words(i))
                       for i in items)
    if name == "child_safe":
        return not any(unsafe(i) for i in items) and any(friendly(i) for i in items)
    if name == "child_friendly_share":
        return bool(items) and sum(friendly(i) for i in items) / len(items) >= args[0]
    if name == "era":
        return bool(items) and all(i.year is not None and args[0] <= i.year <= args[1] for i in items)
    if name == "farewell":
        return not items and bool(_GOODBYE.search(text))
    if name == "first_kind":
        return bool(first) and kind_of(first[0]) == args[0]
    if name == "kind":
        return bool(items) and all(kind_of(i) == args[0] for i in items)
    if name == "not_all_year":
        return not (items and all(i.year == args[0] for i in items))
    if name == "no_title_word":
        return not any(args[0] in normalize(i.title).split() for i in items)
    if name == "picks_child_friendly":
        good = [i for i in first if friendly(i)]
        return (bool(items) and items[0] in good) if good else not items
    raise ValueError(f"unknown check {name!r}")


def run_conversation(crs, conversation: dict) -> dict:
    catalog = crs.catalog
    dialogue = Dialogue(crs_id=crs.name)
    first: list[CatalogItem] = []
    replies, times = [], []
    for index, message in enumerate(conversation["turns"]):
        if "{first}" in message:
            message = message.replace("{first}", first[0].label if first else "it")
        dialogue.add_user(message)
        started = time.perf_counter()
        text, recommended = crs.respond(dialogue)
        times.append(time.perf_counter() - started)
        state_for = getattr(crs, "state_for", None)  # stored as the runner does, so the next turn resumes
        dialogue.add_agent(text, items=recommended, state=state_for(dialogue) if state_for else None)
        items = [catalog.get(r.item_id) for r in recommended]
        if index == 0:
            first = items
        replies.append((message, text, items))
    _, text, items = replies[-1]
    results = [(c[0], c[1:], check(c[0], c[1:], text, items, first)) for c in conversation["checks"]]
    return {"id": conversation["id"], "split": conversation["split"], "replies": replies, "checks": results,
            "times": times}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--reader", choices=["rules", "learnt"], default="rules")
    parser.add_argument("--show", action="store_true", help="print every reply and failed check")
    parser.add_argument("--write", action="store_true", help=f"write the table to {RESULTS}")
    args = parser.parse_args()
    conversations = json.loads(CONVERSATIONS.read_text(encoding="utf-8"))["conversations"]
    settings = Settings.from_env()
    registry = CRSRegistry(system_specs(settings, build_client(settings)))
    reader = None
    if args.reader == "learnt":
        from evaluators.acts.intent_readers import UserActReader

        reader = UserActReader()
    rows = []
    for name in args.systems.split(","):
        crs = registry.get(name)
        if reader is not None:
            crs.policy.reader = reader
        totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        times = []
        for conversation in conversations:
            if conversation["dataset"] != SYSTEMS[name]:
                continue
            result = run_conversation(crs, conversation)
            times += result["times"]
            for check_name, check_args, ok in result["checks"]:
                for key in (result["split"], "all"):
                    totals[key][0] += ok
                    totals[key][1] += 1
            if args.show:
                print(f"== {name} {result['id']} ({result['split']})")
                for message, text, items in result["replies"]:
                    print(f"  USER: {message}\n  SYSTEM: {text}\n  ITEMS: {[i.label for i in items]}")
                for check_name, check_args, ok in result["checks"]:
                    print(f"  {'ok  ' if ok else 'FAIL'} {check_name} {check_args}")
        times.sort()
        p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))] if times else 0.0
        rows.append((name, totals, p95))
    lines = [f"Act reader: {args.reader}. Conversations: {CONVERSATIONS.relative_to(ROOT)}.", "",
             "| system | tune | held-out | all | p95 turn (s) |", "|---|---:|---:|---:|---:|"]
    for name, totals, p95 in rows:
        cells = [f"{totals[k][0]}/{totals[k][1]} = {totals[k][0] / totals[k][1]:.2f}" if totals[k][1] else "-"
                 for k in ("tune", "heldout", "all")]
        lines.append(f"| {name} | {' | '.join(cells)} | {p95:.2f} |")
    table = "\n".join(lines)
    print(table)
    if args.write:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        with RESULTS.open("a", encoding="utf-8") as out:
            out.write(table + "\n\n")


if __name__ == "__main__":
    main()
