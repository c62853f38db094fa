"""Build CRB-CRS's response corpus from the ReDial validation dialogues.

    python scripts/build_crb_corpus.py [--source ../shared/data/redial_dialogues/valid_data.jsonl]
                                       [--out assets/crb_crs/redial_recommender_turns.jsonl]

Each recommender turn (consecutive messages of the recommender joined) is
kept with the seeker's turn before it as its context. Movie mentions
(`@123`) become numbered slots (`<movie_0>`, `<movie_1>`, one per distinct
movie) that CRB-CRS fills with its recommender's items; in the context they
become the word "movie", so retrieval matches what was asked, not which
film. Turns are left out when they would put words in a filled film's mouth
or be unusable: a person or other non-genre entity named (the person would
not belong to the film that fills the slot), a title written without `@` or a broken mention,
more than three slots, too short or too long.

ReDial (Li et al., NeurIPS 2018) is CC BY 4.0; the file read here is the copy
in iEvaLM-CRS (MIT). The output is a derived work under CC BY 4.0.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.catalogs.catalog import load_catalog  # noqa: E402

DEFAULT_SOURCE = ROOT.parent / "shared" / "data" / "redial_dialogues" / "valid_data.jsonl"
DEFAULT_OUT = ROOT / "assets" / "crb_crs" / "redial_recommender_turns.jsonl"
MENTION = re.compile(r"@(\d+)")
MAX_SLOTS = 3
MIN_WORDS, MAX_CHARS = 2, 280


def turns_of(dialogue: dict) -> list[tuple[bool, list[dict]]]:
    """(is recommender, messages) per turn: consecutive messages of one speaker joined."""
    recommender = dialogue["respondentWorkerId"]
    turns: list[tuple[bool, list[dict]]] = []
    for message in dialogue["messages"]:
        is_rec = message["senderWorkerId"] == recommender
        if turns and turns[-1][0] == is_rec:
            turns[-1][1].append(message)
        else:
            turns.append((is_rec, [message]))
    return turns


def slotted(text: str) -> tuple[str, int]:
    slots: dict[str, int] = {}

    def slot(match: re.Match) -> str:
        return f"<movie_{slots.setdefault(match.group(1), len(slots))}>"

    return MENTION.sub(slot, text), len(slots)


def clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def build(source: Path, out: Path) -> dict[str, int]:
    catalog = load_catalog("redial")
    genres = {name for name, eid in catalog.entity2id.items() if catalog.entity_kinds.get(eid) == "genre"}
    counts = {"dialogues": 0, "recommender turns": 0, "kept": 0}
    seen: set[tuple[str, str]] = set()
    rows = []
    for line in source.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        dialogue = json.loads(line)
        counts["dialogues"] += 1
        turns = turns_of(dialogue)
        for previous, (is_rec, messages) in zip(turns, turns[1:]):
            if not is_rec or previous[0]:
                continue
            counts["recommender turns"] += 1
            response, slots = slotted(clean(" ".join(m["text"] for m in messages)))
            context = clean(MENTION.sub("movie", " ".join(m["text"] for m in previous[1])).replace("@", ""))
            entities = {e for m in messages for e in m.get("entity") or ()}
            if entities - genres or slots > MAX_SLOTS or "@" in response:  # "@" left: a broken mention
                continue
            if len(response.split()) < MIN_WORDS or len(response) > MAX_CHARS or not context:
                continue
            plain = re.sub(r"<movie_\d>", "it", response)
            if catalog.link_spans(plain):
                continue  # a title written out: it would not be one of the filled items
            if any(catalog.entity_kinds.get(eid) != "genre" for _, eid in catalog.link_entities(plain)):
                continue  # a person the dataset did not mark, e.g. "Tom Hanks is great in it"
            key = (context.lower(), response.lower())
            if key in seen:
                continue
            seen.add(key)
            rows.append({"dialogue": dialogue["conversationId"], "context": context,
                         "response": response, "slots": slots})
    counts["kept"] = len(rows)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return counts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    if not args.source.exists():
        print(f"error: no ReDial dialogues at {args.source}", file=sys.stderr)
        return 1
    counts = build(args.source, args.out)
    print(", ".join(f"{k}: {v}" for k, v in counts.items()), f"-> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
