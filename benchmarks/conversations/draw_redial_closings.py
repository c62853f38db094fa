"""The seeded draw of the closings probe (issue 47's closings, `redial_closings_v1.json`): ReDial seekers'
own last messages, to see whether a system answers a goodbye or a choice with a new list.

The rule: every ReDial validation dialogue that is the source of none of the real users' sets
(`real_user_turns_v1.json` to v4) and has at least 2 non-empty seeker messages is eligible. The ids are
sorted as strings and shuffled with random.Random(4805); the first 120 are taken. From each, the seeker's
last 2 non-empty messages are the candidates for gold (a message whose meaning is unclear gets none). A
conversation's half is fixed by its id alone (`half_of`), so no reply can move a conversation between halves.

    PYTHONPATH=$PWD python benchmarks/conversations/draw_redial_closings.py --show

prints the candidates with the recommender's message before each, to write the gold by (nothing is written).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from real_turn_checks import SOURCES, resolve_texts  # noqa: E402

SEED = 4805
WANTED = 120
LAST = 2
EARLIER_SETS = ("v1", "v2", "v3", "v4")


def half_of(dialogue: str) -> str:
    """tune or heldout, from the first byte of the id's SHA-256 (even: tune)."""
    return "tune" if hashlib.sha256(dialogue.encode("utf-8")).digest()[0] % 2 == 0 else "heldout"


def earlier_sources() -> set[str]:
    """The source dialogue ids of the real users' sets (only their ids are read)."""
    out: set[str] = set()
    for name in EARLIER_SETS:
        gold = json.loads((HERE / f"real_user_turns_{name}.json").read_text(encoding="utf-8"))
        out |= {c["source"]["dialogue"] for c in gold["conversations"]}
    return out


def seeker_messages(path: Path | None = None) -> dict[str, list[int]]:
    """The indices of each ReDial validation dialogue's non-empty seeker messages."""
    out = {}
    for line in (path or SOURCES["redial_valid"]).read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        seeker = d["initiatorWorkerId"]
        out[str(d["conversationId"])] = [i for i, m in enumerate(d["messages"])
                                         if m["senderWorkerId"] == seeker and m["text"].strip()]
    return out


def draw(seed: int = SEED, wanted: int = WANTED) -> list[str]:
    before = earlier_sources()
    eligible = sorted(d for d, turns in seeker_messages().items() if len(turns) >= 2 and d not in before)
    random.Random(seed).shuffle(eligible)
    return eligible[:wanted]


def _show() -> None:
    numbers = seeker_messages()
    for dialogue in draw():
        everyone = resolve_texts([{"turns": [
            {"source": {"corpus": "redial_valid", "dialogue": dialogue, "utterance": i}}
            for i in range(max(numbers[dialogue]) + 1)]}])[0]["turns"]
        print(f"== {dialogue} ({half_of(dialogue)})")
        first = numbers[dialogue][-LAST]
        for i, turn in enumerate(everyone[max(0, first - 3):], start=max(0, first - 3)):
            who = "S" if i in numbers[dialogue] else "r"
            print(f"  {who}[{i}] {turn['user']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--show", action="store_true", help="print the candidates with their context")
    args = parser.parse_args()
    taken = draw()
    print("taken:", " ".join(taken))
    if args.show:
        _show()


if __name__ == "__main__":
    main()
