"""Labelled data for training and measuring act annotators.

IARD: 259 ReDial dialogues with per-utterance acts. The held-out part is
fixed by dialogue id: a dialogue is held out when the first 8 hex digits of
sha256(conversation_id) are 0 modulo 5 (60 dialogues, 782 utterances).
Training never sees it; the threshold search inside training uses folds of
the training part only.

Second annotation (measured against as a separate label set; the learnt model
trains on IARD's own labels): IARD's own Accept/Reject labels follow conventions the
labeling guide does not share ("too old" is a feature critique, "seen it,
anything else?" is only SEEN). Every IARD user utterance was read again for
ACC and REJ with `LABELING_GUIDE.md`, without IARD's labels at hand:
`iard_train_second_annotation.jsonl` (training part) and `iard_heldout_second_annotation.jsonl` (held-out
part; only measured against).

Arena-style sets: JSONL, one utterance per line with its preceding context:
{"id", "role": "USER"|"AGENT", "context": [{"role", "text"}...], "text",
"intents": [...]}. Development sets (the cues were written and tuned on them):
`dev_arena_style.jsonl`, `eval_arena_style.jsonl` (measured once with
artifact v1, then used for development) and `eval2_arena_style.jsonl`
(measured once with the first v2 artifact, then used for development) and
`dev3_arena_style.jsonl` (replies that must not count as decisions, written
to tune the Reject cues' precision). `test_arena_style.jsonl` and
`test3_arena_style.jsonl` to `test9_arena_style.jsonl` were each committed
before the rule annotator of that moment was run on them, measured once, and then
used for development (benchmarks/acts_fresh_sets.py replays the first
measurements). `test10_arena_style.jsonl` was written after the rule annotator's
last change and is only measured. The learnt model trains on the sets in
ARENA_SETS except ARENA_VAL (its thresholds are chosen there) and is measured on
test10.

CRS Arena parts: real dialogues between crowd users and the nine systems of the CRS Arena
study (the CRS Arena dialogue texts, outside the project: they may not be copied into the
project), labelled by hand for Recommend / Accept / Reject with `LABELING_GUIDE.md`. The
files in training_data/acts hold only ids and labels: {"id": "<conversation ID>:<index>", "role",
"rec"} for system utterances, {"id", "role", "acc", "rej"} for user ones. Split by a hash of
the conversation id before any labelling: `crsarena_test_acts.jsonl` (sha256("crsarena-acts:"
+ id) % 10 < 4, 102 dialogues, measured only) and `crsarena_calibration_acts.jsonl` (the
other 140, where the decision rule is chosen).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

from arena.runtime.config import ASSETS_DIR, PROJECT_ROOT
from arena.dialogue import Dialogue, DialogueAct, Role

# The labelled sets are not needed to annotate, so they live outside assets/ (training_data/MANIFEST.md
# gives each file's origin, licence, split and reader).
ACT_SETS = PROJECT_ROOT / "training_data" / "acts"
IARD_FILE_NAME = "formatted_IARD_annotated_partially.json"
ARENA_EVAL = ACT_SETS / "eval_arena_style.jsonl"
ARENA_DEV = ACT_SETS / "dev_arena_style.jsonl"
ARENA_EVAL2 = ACT_SETS / "eval2_arena_style.jsonl"
ARENA_DEV3 = ACT_SETS / "dev3_arena_style.jsonl"
ARENA_TEST = ACT_SETS / "test_arena_style.jsonl"
ARENA_TEST3 = ACT_SETS / "test3_arena_style.jsonl"
ARENA_TEST4 = ACT_SETS / "test4_arena_style.jsonl"
ARENA_TEST5 = ACT_SETS / "test5_arena_style.jsonl"
ARENA_TEST6 = ACT_SETS / "test6_arena_style.jsonl"
ARENA_TEST7 = ACT_SETS / "test7_arena_style.jsonl"
ARENA_TEST8 = ACT_SETS / "test8_arena_style.jsonl"
ARENA_TEST9 = ACT_SETS / "test9_arena_style.jsonl"
ARENA_TEST10 = ACT_SETS / "test10_arena_style.jsonl"
# Every arena-style set, oldest first. All have been read and tuned on by now; from test3 on, each was
# first measured before its errors were read (benchmarks/acts_fresh_sets.py replays those measurements).
ARENA_SETS = (
    ARENA_DEV,
    ARENA_EVAL,
    ARENA_EVAL2,
    ARENA_DEV3,
    ARENA_TEST,
    ARENA_TEST3,
    ARENA_TEST4,
    ARENA_TEST5,
    ARENA_TEST6,
    ARENA_TEST7,
    ARENA_TEST8,
    ARENA_TEST9,
)
# Written before the shipped annotator was run on it; never tuned on.
ARENA_HELD_OUT = ARENA_TEST10
# Of ARENA_SETS, the learnt annotator trains on all but these, on which its thresholds are chosen.
ARENA_VAL = (ARENA_TEST8, ARENA_TEST9)
SECOND_ANNOTATION = ACT_SETS / "iard_heldout_second_annotation.jsonl"
TRAIN_SECOND_ANNOTATION = ACT_SETS / "iard_train_second_annotation.jsonl"
HELD_OUT_MODULUS = 5
CRSARENA_PARTS = {"calibration": ACT_SETS / "crsarena_calibration_acts.jsonl",
                  "test": ACT_SETS / "crsarena_test_acts.jsonl"}


def iard_path() -> Path:
    """The project's copy of the IARD file (origin and licence in assets/iard/README.md)."""
    path = ASSETS_DIR / "iard" / IARD_FILE_NAME
    if not path.exists():
        raise FileNotFoundError(
            f"{IARD_FILE_NAME} not found under assets/iard/ (restore it from the repository)"
        )
    return path


def is_held_out(dialogue_id: str) -> bool:
    digest = hashlib.sha256(dialogue_id.encode("utf-8")).hexdigest()
    return int(digest[:8], 16) % HELD_OUT_MODULUS == 0


def load_iard(path: Optional[Path] = None) -> list[Dialogue]:
    from arena.corpus.loading import load_dialogues

    return load_dialogues(path or iard_path(), default_crs_id="iard")


def iard_split(dialogues: Iterable[Dialogue]) -> tuple[list[Dialogue], list[Dialogue]]:
    """(training part, held-out part)."""
    train: list[Dialogue] = []
    held: list[Dialogue] = []
    for d in dialogues:
        (held if is_held_out(d.dialogue_id) else train).append(d)
    return train, held


def utterance_key(dialogue_id: str, index: int) -> str:
    return f"{dialogue_id}:{index}"


def load_second_annotation(path: Path = SECOND_ANNOTATION) -> dict[str, tuple[bool, bool]]:
    """utterance key -> (accept, reject) from the second annotation file."""
    labels: dict[str, tuple[bool, bool]] = {}
    for line_no, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        rec = json.loads(line)
        if not isinstance(rec.get("acc"), bool) or not isinstance(rec.get("rej"), bool):
            raise ValueError(f"{path}:{line_no}: 'acc' and 'rej' must be true or false")
        labels[str(rec["id"])] = (rec["acc"], rec["rej"])
    return labels


def with_second_annotation(
    dialogues: Iterable[Dialogue], labels: dict[str, tuple[bool, bool]]
) -> list[Dialogue]:
    """Copies whose user utterances carry the second annotation's ACC/REJ instead of IARD's.

    Other intents are kept; utterances the second annotation does not cover are left as they are.
    """
    out = []
    for dialogue in dialogues:
        copy = dialogue.model_copy(deep=True)
        for i, utt in enumerate(copy.utterances):
            decision = labels.get(utterance_key(dialogue.dialogue_id, i))
            if utt.role != Role.USER or decision is None:
                continue
            acts = [a for a in utt.dialogue_acts or [] if a.intent not in ("ACC", "REJ")]
            acts += [
                DialogueAct(intent=name, slot_values=[]) for name, on in zip(("ACC", "REJ"), decision) if on
            ]
            utt.dialogue_acts = acts
        out.append(copy)
    return out


def crsarena_part(dialogue_id: str) -> str:
    """'test' or 'calibration': the split of the CRS Arena dialogues, fixed before they were labelled."""
    digest = hashlib.sha256(f"crsarena-acts:{dialogue_id}".encode("utf-8")).hexdigest()
    return "test" if int(digest, 16) % 10 < 4 else "calibration"


def load_crsarena_acts(part: str, texts: Path) -> list[Dialogue]:
    """The hand-labelled CRS Arena dialogues of `part`, with their labels as acts (REC-S for a
    Recommend, ACC / REJ, OTH for an utterance with none of them). `texts`: the CRS Arena dialogue
    file (DialogueKit layout), which stays outside the project; FileNotFoundError without it."""
    from arena.corpus.loading import load_dialogues

    if not Path(texts).exists():
        raise FileNotFoundError(f"the CRS Arena dialogue texts are not at {texts}")
    labels: dict[str, dict[int, dict]] = {}
    for line_no, line in enumerate(CRSARENA_PARTS[part].read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            rec = json.loads(line)
            cid, index = str(rec["id"]).rsplit(":", 1)
            labels.setdefault(cid, {})[int(index)] = rec
    dialogues = {d.dialogue_id: d for d in load_dialogues(Path(texts))}
    out = []
    for cid, by_index in labels.items():
        dialogue = dialogues[cid].model_copy(deep=True)
        if sorted(by_index) != list(range(len(dialogue.utterances))):
            raise ValueError(
                f"{CRSARENA_PARTS[part].name}: {cid} is labelled on other utterances than the text has"
            )
        for i, utt in enumerate(dialogue.utterances):
            rec = by_index[i]
            if rec["role"] != utt.role.value:
                raise ValueError(
                    f"{CRSARENA_PARTS[part].name}: {cid}:{i} is {utt.role.value}, labelled {rec['role']}"
                )
            names = (["REC-S"] if rec.get("rec") else []) if utt.role == Role.AGENT else \
                [name for name, key in (("ACC", "acc"), ("REJ", "rej")) if rec.get(key)]
            utt.dialogue_acts = [DialogueAct(intent=name, slot_values=[]) for name in names or ["OTH"]]
        out.append(dialogue)
    return out


@dataclass
class LabelledUtterance:
    id: str
    dialogue: Dialogue  # the context followed by the utterance itself (last)
    intents: set[str]

    @property
    def role(self) -> Role:
        return self.dialogue.utterances[-1].role


def load_arena_style(path: Path) -> list[LabelledUtterance]:
    rows = []
    for line_no, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        rec = json.loads(line)
        d = Dialogue(crs_id="arena-style", dialogue_id=str(rec.get("id", line_no)))
        for ctx in rec.get("context", []):
            role = Role(ctx["role"])
            (d.add_user if role == Role.USER else d.add_agent)(ctx["text"])
        (d.add_user if rec["role"] == "USER" else d.add_agent)(rec["text"])
        rows.append(
            LabelledUtterance(id=str(rec.get("id", line_no)), dialogue=d, intents=set(rec["intents"]))
        )
    return rows
