"""Redo the seeded draw of a set of real users' conversations (issue 47), so that a set's `origin.draw`
can be checked against the sources rather than trusted.

The rule (v3's, with each set's seed, earlier sets and mix, DRAWS): every CRS Arena dialogue and every
ReDial validation dialogue that is a source of none of the earlier sets (nor, from v5 on, of the closings
probe, redial_closings_v1.json) and has at least 2 non-empty user (seeker) messages is eligible. The ids
of each group (CRS Arena '_redial_', CRS Arena '_opendialkg_', ReDial seekers) are sorted as strings and
shuffled in that order with one seeded random.Random; each group is walked in its shuffled order. A CRS
Arena dialogue is passed over when its user (the id's part after the system's name) wrote a conversation
of an earlier set or one already taken; any dialogue is passed over when a reader judged that fewer than
2 of its user turns read sensibly alone (that judgement is the one input the rule cannot make itself, so
it is passed in by id). A CRS Arena group that runs out before its number is taken leaves the shortfall
to the seekers (the last group). v6 asks for seekers only (0, 0 and 40): the CRS Arena groups are still
shuffled, in their turn, so that the seekers' order is the rule's, but none of their dialogues is taken.
v7, an unseen (fresh) set drawn after v6, asks the same.
v8, a second unseen (fresh) set drawn after v7, asks the same again.

    PYTHONPATH=$PWD python benchmarks/conversations/draw_real_user_turns.py --set v5 --show 30

prints the draw of a set (v4 by default) and, with --show N, the user messages of the first N dialogues
walked in each group, to judge them by (nothing is written).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from real_turn_checks import SOURCES, resolve_texts  # noqa: E402

GROUP_ORDER = ("redial", "opendialkg", "seeker")
BEFORE_USER = "its user also wrote a conversation of v1, v2 or v3"  # v4's words: before_user of v1 to v3
EARLIER_USER = "its user wrote an earlier conversation of this set"
NOT_SENSIBLE = "fewer than 2 of its user turns read sensibly alone"
# v4: the seed, the earlier sets and the mix the issue asks (the seekers fill the set to 45).
V4 = {"seed": 4704, "earlier": ("v1", "v2", "v3"), "wanted": {"redial": 14, "opendialkg": 10, "seeker": 21},
      "probes": ()}
# v5: drawn after v4 and after the closings probe, whose dialogues it leaves out too.
V5 = {"seed": 4705, "earlier": ("v1", "v2", "v3", "v4"),
      "wanted": {"redial": 10, "opendialkg": 9, "seeker": 26}, "probes": ("redial_closings_v1",)}
# v6: a development (tune) set drawn after v5, of ReDial seekers only (the CRS Arena groups are used up).
V6 = {"seed": 4706, "earlier": ("v1", "v2", "v3", "v4", "v5"),
      "wanted": {"redial": 0, "opendialkg": 0, "seeker": 40}, "probes": ("redial_closings_v1",)}
# v7: an unseen (fresh) measurement set drawn after v6, of ReDial seekers only, like v6.
V7 = {"seed": 4707, "earlier": ("v1", "v2", "v3", "v4", "v5", "v6"),
      "wanted": {"redial": 0, "opendialkg": 0, "seeker": 40}, "probes": ("redial_closings_v1",)}
# v8: a second unseen (fresh) measurement set drawn after v7, of ReDial seekers only, like v7.
V8 = {"seed": 4708, "earlier": ("v1", "v2", "v3", "v4", "v5", "v6", "v7"),
      "wanted": {"redial": 0, "opendialkg": 0, "seeker": 40}, "probes": ("redial_closings_v1",)}
DRAWS = {"v4": V4, "v5": V5, "v6": V6, "v7": V7, "v8": V8}


@dataclass
class Draw:
    taken: list[str] = field(default_factory=list)
    passed: list[tuple[str, str]] = field(default_factory=list)  # (id, reason), in draw order
    walked: dict[str, list[str]] = field(default_factory=dict)  # group -> ids met, in order
    short: dict[str, int] = field(default_factory=dict)  # group -> how many it could not take


def load_set(name: str) -> dict:
    return json.loads((HERE / f"real_user_turns_{name}.json").read_text(encoding="utf-8"))


def load_probe(name: str) -> dict:
    return json.loads((HERE / f"{name}.json").read_text(encoding="utf-8"))


def set_dialogues(gold: dict) -> set[str]:
    return {c["source"]["dialogue"] for c in gold["conversations"]}


def study_user(dialogue: str) -> str:
    # A CRS Arena id is "<system>_<dataset>_<user>"; a ReDial id has no "_" and names no study user.
    return dialogue.rsplit("_", 1)[-1] if "_" in dialogue else ""


def study_users(gold: dict) -> list[str]:
    """The study users of a set's CRS Arena conversations, one per conversation."""
    return [study_user(c["source"]["dialogue"]) for c in gold["conversations"]
            if c["source"]["corpus"] == "crsarena_dial"]


def set_turns(gold: dict) -> list[tuple[dict, dict]]:
    """(conversation, turn) of every turn of a set."""
    return [(c, t) for c in gold["conversations"] for t in c["turns"]]


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


def before_user(earlier: list[dict]) -> str:
    """The reason a dialogue whose user wrote one of the earlier sets is passed over, naming those sets
    ("v1, v2 or v3")."""
    names = [f"v{g['version']}" for g in earlier]
    named = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
    return f"its user also wrote a conversation of {named}"


def draw(seed: int, earlier: list[dict], wanted: dict[str, int], not_sensible: set[str],
         probes: Sequence[dict] = ()) -> Draw:
    """The draw; `probes` are other files (the closings probe) whose source dialogues are not eligible
    either, though their ReDial seekers name no study user."""
    before = set().union(*(set_dialogues(g) for g in earlier))
    shut_out = before | set().union(*(set_dialogues(g) for g in probes))
    before_reason = before_user(earlier)
    before_users = {study_user(d) for d in before} - {""}
    eligible = [d for corpus in ("crsarena_dial", "redial_valid")
                for d, turns in user_turns(corpus).items() if len(turns) >= 2 and d not in shut_out]
    pools = {"redial": sorted(d for d in eligible if "_redial_" in d),
             "opendialkg": sorted(d for d in eligible if "_opendialkg_" in d),
             "seeker": sorted(d for d in eligible if "_" not in d)}
    rng = random.Random(seed)
    result, users = Draw(), set()
    short = 0  # what the CRS Arena groups could not take, left to the seekers
    for group in GROUP_ORDER:
        pool = pools[group]
        rng.shuffle(pool)
        result.walked[group] = []
        taken, want = 0, wanted[group] + (short if group == GROUP_ORDER[-1] else 0)
        for dialogue in pool:
            if taken == want:
                break
            result.walked[group].append(dialogue)
            user = study_user(dialogue)
            if user and user in before_users:
                result.passed.append((dialogue, before_reason))
            elif user and user in users:
                result.passed.append((dialogue, EARLIER_USER))
            elif dialogue in not_sensible:
                result.passed.append((dialogue, NOT_SENSIBLE))
            else:
                result.taken.append(dialogue)
                taken += 1
                users |= {user} - {""}
        result.short[group] = want - taken
        if group != GROUP_ORDER[-1]:
            short += want - taken
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
    parser.add_argument("--set", dest="name", choices=sorted(DRAWS), default="v4", help="the set to redo")
    parser.add_argument("--show", type=int, default=0, help="print the user messages of N dialogues a group")
    parser.add_argument("--not-sensible", nargs="*", default=[], help="ids judged to read sensibly < 2 times")
    args = parser.parse_args()
    rule = DRAWS[args.name]
    earlier = [load_set(name) for name in rule["earlier"]]
    not_sensible = set(args.not_sensible)
    if (HERE / f"real_user_turns_{args.name}.json").is_file():
        written = load_set(args.name)["origin"]["draw"]
        not_sensible |= {d for d, why in _passed_in(written) if why == NOT_SENSIBLE}
    probes = [load_probe(name) for name in rule["probes"]]
    result = draw(rule["seed"], earlier, rule["wanted"], not_sensible, probes)
    print("taken:", " ".join(result.taken))
    print("passed over:", passed_text(result))
    if any(result.short.values()):
        print("short:", result.short)
    if args.show:
        _show(result, args.show)


def _passed_in(draw_text: str) -> list[tuple[str, str]]:
    """The (id, reason) pairs a set's draw text names after 'in draw order:'."""
    named = draw_text.split("in draw order:", 1)[1]
    return re.findall(r"([\w-]+) \((its user [^)]*|fewer than 2 [^)]*)\)", named)


if __name__ == "__main__":
    main()
