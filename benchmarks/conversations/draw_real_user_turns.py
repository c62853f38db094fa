"""Redo the seeded draw of a set of real users' conversations (issue 47), so that a set's `origin.draw`
can be checked against the sources rather than trusted.

The rule (v3's, with v4's seed and mix): every CRS Arena dialogue and every ReDial validation dialogue
that is a source of none of the earlier sets and has at least 2 non-empty user (seeker) messages is
eligible. The ids of each group (CRS Arena '_redial_', CRS Arena '_opendialkg_', ReDial seekers) are
sorted as strings and shuffled in that order with one seeded random.Random; each group is walked in its
shuffled order. A CRS Arena dialogue is passed over when its user (the id's part after the system's name)
wrote a conversation of an earlier set or one already taken; any dialogue is passed over when a reader
judged that fewer than 2 of its user turns read sensibly alone (that judgement is the one input the rule
cannot make itself, so it is passed in by id).

    PYTHONPATH=$PWD python benchmarks/conversations/draw_real_user_turns.py --show 30

prints the draw of v4 and, with --show N, the user messages of the first N dialogues walked in each
group, to judge them by (nothing is written).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from real_turn_checks import SOURCES, resolve_texts  # noqa: E402

GROUP_ORDER = ("redial", "opendialkg", "seeker")
BEFORE_USER = "its user also wrote a conversation of v1, v2 or v3"
EARLIER_USER = "its user wrote an earlier conversation of this set"
NOT_SENSIBLE = "fewer than 2 of its user turns read sensibly alone"
# v4: the seed, the earlier sets and the mix the issue asks (the seekers fill the set to 45).
V4 = {"seed": 4704, "earlier": ("v1", "v2", "v3"), "wanted": {"redial": 14, "opendialkg": 10, "seeker": 21}}


@dataclass
class Draw:
    taken: list[str] = field(default_factory=list)
    passed: list[tuple[str, str]] = field(default_factory=list)  # (id, reason), in draw order
    walked: dict[str, list[str]] = field(default_factory=dict)  # group -> ids met, in order


def load_set(name: str) -> dict:
    return json.loads((HERE / f"real_user_turns_{name}.json").read_text(encoding="utf-8"))


def set_dialogues(gold: dict) -> set[str]:
    return {c["source"]["dialogue"] for c in gold["conversations"]}


def study_user(dialogue: str) -> str:
    # A CRS Arena id is "<system>_<dataset>_<user>"; a ReDial id has no "_" and names no study user.
    return dialogue.rsplit("_", 1)[-1] if "_" in dialogue else ""


def user_turns(corpus: str) -> dict[str, list[int]]:
    """The indices of each dialogue's non-empty user (seeker) messages."""
    path = SOURCES[corpus]
    if corpus == "crsarena_dial":
        return {d["conversation ID"]: [i for i, t in enumerate(d["conversation"])
                                       if t["participant"] == "USER" and t["utterance"].strip()]
                for d in json.loads(path.read_text(encoding="utf-8"))}
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        seeker = d["initiatorWorkerId"]
        out[str(d["conversationId"])] = [i for i, m in enumerate(d["messages"])
                                         if m["senderWorkerId"] == seeker and m["text"].strip()]
    return out


def draw(seed: int, earlier: list[dict], wanted: dict[str, int], not_sensible: set[str]) -> Draw:
    before = set().union(*(set_dialogues(g) for g in earlier))
    before_users = {study_user(d) for d in before} - {""}
    eligible = [d for corpus in ("crsarena_dial", "redial_valid")
                for d, turns in user_turns(corpus).items() if len(turns) >= 2 and d not in before]
    pools = {"redial": sorted(d for d in eligible if "_redial_" in d),
             "opendialkg": sorted(d for d in eligible if "_opendialkg_" in d),
             "seeker": sorted(d for d in eligible if "_" not in d)}
    rng = random.Random(seed)
    result, users = Draw(), set()
    for group in GROUP_ORDER:
        pool = pools[group]
        rng.shuffle(pool)
        result.walked[group] = []
        taken = 0
        for dialogue in pool:
            if taken == wanted[group]:
                break
            result.walked[group].append(dialogue)
            user = study_user(dialogue)
            if user and user in before_users:
                result.passed.append((dialogue, BEFORE_USER))
            elif user and user in users:
                result.passed.append((dialogue, EARLIER_USER))
            elif dialogue in not_sensible:
                result.passed.append((dialogue, NOT_SENSIBLE))
            else:
                result.taken.append(dialogue)
                taken += 1
                users |= {user} - {""}
    return result


def passed_text(result: Draw) -> str:
    return "; ".join(f"{d} ({why})" for d, why in result.passed)


def _show(result: Draw, per_group: int) -> None:
    corpora = {d: ("redial_valid" if "_" not in d else "crsarena_dial")
               for ids in result.walked.values() for d in ids}
    numbers = {c: user_turns(c) for c in ("crsarena_dial", "redial_valid")}
    for group, ids in result.walked.items():
        for dialogue in ids[:per_group]:
            corpus = corpora[dialogue]
            turns = [{"source": {"corpus": corpus, "dialogue": dialogue, "utterance": i}}
                     for i in numbers[corpus][dialogue]]
            resolved = resolve_texts([{"turns": turns}])[0]["turns"]
            print(f"== {group} {dialogue}")
            for turn in resolved:
                print(f"  [{turn['source']['utterance']}] {turn['user']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--show", type=int, default=0, help="print the user messages of N dialogues a group")
    parser.add_argument("--not-sensible", nargs="*", default=[], help="ids judged to read sensibly < 2 times")
    args = parser.parse_args()
    earlier = [load_set(name) for name in V4["earlier"]]
    not_sensible = set(args.not_sensible)
    if (HERE / "real_user_turns_v4.json").is_file():
        written = load_set("v4")["origin"]["draw"]
        not_sensible |= {d for d, why in _passed_in(written) if why == NOT_SENSIBLE}
    result = draw(V4["seed"], earlier, V4["wanted"], not_sensible)
    print("taken:", " ".join(result.taken))
    print("passed over:", passed_text(result))
    if args.show:
        _show(result, args.show)


def _passed_in(draw_text: str) -> list[tuple[str, str]]:
    """The (id, reason) pairs a set's draw text names after 'in draw order:'."""
    named = draw_text.split("in draw order:", 1)[1]
    return re.findall(r"([\w-]+) \((its user [^)]*|fewer than 2 [^)]*)\)", named)


if __name__ == "__main__":
    main()
