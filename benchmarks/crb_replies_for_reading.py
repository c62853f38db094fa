"""CRB-CRS replies to real ReDial seekers, written out for reading by hand (natural English).

    HF_HUB_OFFLINE=1 python benchmarks/crb_replies_for_reading.py --seed 31 [--without-context-check]

Draws `--dialogues` ReDial validation dialogues (../shared/data/redial_dialogues/valid_data.jsonl), plays
their seekers' first `--turns` messages to CRB-CRS (its own replies in between), and prints each message
with the reply and what `crs.crb_context` says of the reply's filler. `--without-context-check` chooses
turns as before that check, for a before/after reading of the same messages. Nothing is scored here: the
figures in BENCHMARKS.md are a person's reading of this output.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.dialogue import Dialogue, Role, Utterance  # noqa: E402
from arena.llm import FakeProvider, LLMClient  # noqa: E402
from crs.crb_context import context_problem  # noqa: E402
from crs.crb_crs import crb_crs_specs  # noqa: E402
from crs.registry import CRSRegistry  # noqa: E402

SOURCE = ROOT.parent / "shared" / "data" / "redial_dialogues" / "valid_data.jsonl"


def seeker_messages(row: dict, turns: int) -> list[str]:
    """The seeker's first messages, movie mentions written as their titles."""
    names = row.get("movieMentions") or {}
    seeker = row["initiatorWorkerId"]
    out = []
    for message in row["messages"]:
        if message["senderWorkerId"] == seeker:
            out.append(re.sub(r"@(\d+)", lambda m: names.get(m.group(1)) or "a movie", message["text"]))
    return out[:turns]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--dialogues", type=int, default=25)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--without-context-check", action="store_true")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/crb_reading_cache"))
    args = parser.parse_args()
    if not SOURCE.exists():
        print(f"no ReDial dialogues at {SOURCE}", file=sys.stderr)
        return 1
    spec = crb_crs_specs(lambda: LLMClient(FakeProvider([])), args.cache)[0]
    crb = CRSRegistry([spec]).get(spec.name)
    crb.fit_context = not args.without_context_check
    rows = [json.loads(line) for line in SOURCE.read_text(encoding="utf-8").splitlines() if line.strip()]
    random.Random(args.seed).shuffle(rows)
    replies = flagged = 0
    seconds = []
    for number, row in enumerate(rows[: args.dialogues], 1):
        dialogue = Dialogue(crs_id=crb.name)
        for text in seeker_messages(row, args.turns):
            dialogue.utterances.append(Utterance(role=Role.USER, text=text))
            started = time.perf_counter()
            reply, items = crb.respond(dialogue)
            seconds.append(time.perf_counter() - started)
            filler = reply
            for item in items:
                filler = filler.replace(item.title, "<movie_0>")
            problem = context_problem(filler, crb.context_of(dialogue))
            replies, flagged = replies + 1, flagged + (problem is not None)
            note = f"\n     (filler: {problem})" if problem else ""
            print(f"[{number}] USER: {text}\n     CRB:  {reply}{note}")
            dialogue.utterances.append(Utterance(role=Role.AGENT, text=reply, items=items))
    print(f"{replies} replies; {flagged} whose filler the context check would not pass; turn time median "
          f"{statistics.median(seconds):.3f} s, p95 {sorted(seconds)[int(0.95 * (len(seconds) - 1))]:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
