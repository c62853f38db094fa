"""Whether the offline act annotator gives user utterances label sets a person would give.

    HF_HUB_OFFLINE=1 python benchmarks/acts_coherence.py [--sample benchmarks/conversations/user_messages_v1_acts.json]

For each set, with and without the coherent label sets of `arena.reading.intents` (Accept with
Reject only where the utterance addresses different items and the artifact allows it, at most
three intents): Accept and Reject precision / recall / F1 on the user utterances (where gold
labels exist), the share of user utterances with more than three intents, and how many hold both
Accept and Reject. Sets:
- IARD's held-out part (`evaluators.acts.data.iard_split`, never trained on);
- the 242 shared CRS Arena dialogues (`../shared/data/crsarena_dial_texts`, no gold here: shares only);
- `--sample`: user turns of this issue's conversations labelled by hand (JSON: [{"context": [...],
  "user": "...", "intents": [...]}]).
  Two such samples sit in `benchmarks/conversations/`: `user_messages_v1_acts.json` (42 user turns,
  3 Accept, 11 Reject) and `acts_sample_v2.json`, written for issue 40 on 2026-11-27 by a project
  developer to have enough Accept and Reject turns to measure: 52 new movie conversations in the
  tone of the crowd users and of the arena's systems, 211 user turns (48 Accept, 51 Reject, 5 of
  them both), each labelled by hand with IARD's intents following `assets/acts/LABELING_GUIDE.md`
  and its borderline conventions, and committed before any annotator read it. Its rows also carry
  `conversation` and a short `why` of the Accept/Reject decision, which this script ignores.
Then the CPU time of reading one user utterance as the dialogue policy does (the last one alone,
one thread): p50 and p95 in ms over the IARD held-out user utterances.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.corpus.loading import load_dialogues  # noqa: E402
from arena.dialogue import Dialogue, Role  # noqa: E402
from evaluators.acts.context_decision import utterance_facts  # noqa: E402
from evaluators.acts.data import iard_split, load_iard  # noqa: E402
from evaluators.acts.features import dialogue_pairs  # noqa: E402
from evaluators.acts.offline import OfflineActAnnotator, decide  # noqa: E402
from evaluators.acts.quality import PRF  # noqa: E402
from evaluators.acts.schema import intents_of  # noqa: E402

CRSARENA = ROOT.parent / "shared" / "data" / "crsarena_dial_texts" / "dialogues.json"


def predict(annotator: OfflineActAnnotator, dialogue: Dialogue, coherent: bool) -> list[set[str]]:
    views, pairs = dialogue_pairs(dialogue, annotator._linker)
    if not views:
        return []
    model = annotator.model
    roles = [v.role for v in views]
    probs = model.probabilities(pairs)
    probs = model.in_context(roles, probs, utterance_facts(views))
    return [set(i) for i in decide(roles, probs, model.threshold, coherent_sets=coherent,
                                   decided_first=model.decided_first, mixed=model.mixed,
                                   texts=[v.utterance.text for v in views], titles=[len(v.title_keys) for v in views])]


def measure(annotator, dialogues, coherent: bool, gold: bool) -> dict:
    counts = {"ACC": PRF(), "REJ": PRF()}
    users = over_three = both = 0
    for dialogue in dialogues:
        for utt, predicted in zip(dialogue.utterances, predict(annotator, dialogue, coherent)):
            if utt.role != Role.USER:
                continue
            users += 1
            over_three += len(predicted) > 3
            both += {"ACC", "REJ"} <= predicted
            if gold and utt.dialogue_acts is not None:
                truth = intents_of(utt)
                for intent, prf in counts.items():
                    prf.tp += intent in truth and intent in predicted
                    prf.fp += intent not in truth and intent in predicted
                    prf.fn += intent in truth and intent not in predicted
    return {"users": users, "over_three": over_three / max(users, 1), "acc_and_rej": both,
            **({k: v for k, v in counts.items()} if gold else {})}


def sample_dialogues(path: Path) -> list[Dialogue]:
    out = []
    for n, row in enumerate(json.loads(path.read_text(encoding="utf-8"))):
        dialogue = Dialogue(crs_id="sample", dialogue_id=f"sample-{n}")
        for i, text in enumerate(row["context"]):
            (dialogue.add_user if i % 2 == 0 else dialogue.add_agent)(text)
        dialogue.add_user(row["user"])
        from arena.dialogue import DialogueAct

        for utt in dialogue.utterances[:-1]:
            utt.dialogue_acts = None
        dialogue.utterances[-1].dialogue_acts = [DialogueAct(intent=i) for i in row["intents"]]
        out.append(dialogue)
    return out


def fmt(prf: PRF) -> str:
    f = lambda v: "-" if v is None else f"{v:.2f}"  # noqa: E731
    return f"{f(prf.precision)} / {f(prf.recall)} / {f(prf.f1)} ({prf.support})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", type=Path, default=None)
    parser.add_argument("--timed", type=int, default=300, help="user utterances timed")
    parser.add_argument("--crsarena", type=Path, default=CRSARENA, help="the shared CRS Arena dialogues (JSON)")
    args = parser.parse_args()
    annotator = OfflineActAnnotator(threads=1)
    _, held = iard_split(load_iard())
    sets = [("IARD held-out", held, True)]
    if args.crsarena.exists():
        arena = load_dialogues(args.crsarena, default_crs_id="crsarena")
        sets.append((f"CRS Arena ({len(arena)} shared dialogues)", arena, False))
    if args.sample:
        sets.append((f"hand-labelled sample ({args.sample.name})", sample_dialogues(args.sample), True))
    print("| set | label sets | user utterances | Accept P / R / F1 | Reject P / R / F1 | > 3 intents | "
          "Accept with Reject |")
    print("|---|---|---:|---|---|---:|---:|")
    for name, dialogues, gold in sets:
        for coherent in (False, True):
            r = measure(annotator, dialogues, coherent, gold)
            acc = fmt(r["ACC"]) if gold else "-"
            rej = fmt(r["REJ"]) if gold else "-"
            print(f"| {name} | {'coherent' if coherent else 'as the model gives'} | {r['users']} | {acc} | {rej} | "
                  f"{r['over_three']:.1%} | {r['acc_and_rej']} |")
    times = []
    for dialogue in held:
        for i, utt in enumerate(dialogue.utterances):
            if utt.role != Role.USER or len(times) >= args.timed:
                continue
            prefix = Dialogue(crs_id="t", dialogue_id=f"{dialogue.dialogue_id}-{i}")
            for u in dialogue.utterances[:i + 1]:
                (prefix.add_user if u.role == Role.USER else prefix.add_agent)(u.text)
            started = time.process_time()
            annotator.annotate_intents(prefix, last_only=True)
            times.append((time.process_time() - started) * 1000)
    times.sort()
    p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
    print(f"\nCPU per user utterance (last one alone, 1 thread), {len(times)} utterances: "
          f"p50 {statistics.median(times):.1f} ms, p95 {p95:.1f} ms")


if __name__ == "__main__":
    main()
