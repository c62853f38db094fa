"""Hand-made files in CRSArena-Dial's and CRSArena-Eval's layouts (invented dialogues and labels).

The published labels and CRSArena-Dial itself are an outside check of this project; its tests never read them.
"""

import json

# Four invented CRSArena-Dial conversations, with their acts: (participant, text, intents).
CONVERSATIONS = {
    "kbrd_redial_7c1f": ("kbrd_redial", [
        ("USER", "I'd like a heist movie", ["IQU"]),
        ("AGENT", "Have you seen Heat (1995)?", ["REC-E"]),
        ("USER", "no, I'll watch it tonight", ["ACC"]),
        ("AGENT", "Enjoy!", ["OTH"]),
    ]),
    "barcor_redial_2a9e": ("barcor_redial", [
        ("USER", "a comedy please", ["IQU"]),
        ("AGENT", "Try Airplane! (1980).", ["REC-S"]),
        ("USER", "sounds fun, I'll check it out", ["ACC"]),
        ("AGENT", "Try Airplane! (1980).", ["REC-S"]),  # the system repeats itself: told apart by order
        ("USER", "you said that already", ["REJ"]),
        ("AGENT", "Sorry.", ["OTH"]),
    ]),
    "unicrs_opendialkg_0b3d": ("unicrs_opendialkg", [
        ("USER", "something scary", ["IQU"]),
        ("AGENT", "What kind of scary?", ["REQ"]),
        ("USER", "ghosts", ["PRO"]),
        ("AGENT", "The Others (2001) is good.", ["REC-S"]),
        ("USER", "seen it, didn't like it", ["SEE", "REJ"]),
    ]),
    "chatcrs_redial_e4d2": ("chatcrs_redial", [
        ("USER", "hi", ["OTH"]),
        ("AGENT", "hello", ["OTH"]),
        ("USER", "bye", ["OTH"]),
    ]),
}

# Their labels: per dialogue (understanding, task_completion, interest_arousal, efficiency, dialogue_overall,
# preference_elicitation, explanation) and per system turn (relevance, interestingness).
DIAL_LABELS = {
    "kbrd_redial_7c1f": (2, 2, 1.67, 1, 3.33, 1, 2),
    "barcor_redial_2a9e": (1.33, 1.5, 1, 0.67, 2, 0.33, 0),
    "unicrs_opendialkg_0b3d": (1, 0, 0.33, 0, 1, 2, 1),
    "chatcrs_redial_e4d2": (0, 0.5, 0, 0, 0.33, 0, 0),
}
TURN_LABELS = {  # (conv_id, turn_ind) -> (relevance, interestingness)
    ("kbrd_redial_7c1f", 1): (3, 2), ("kbrd_redial_7c1f", 3): (2, 0.67),
    ("barcor_redial_2a9e", 1): (2, 1), ("barcor_redial_2a9e", 3): (1, 0),
    ("unicrs_opendialkg_0b3d", 1): (1, 0.33), ("unicrs_opendialkg_0b3d", 3): (0, 0),
}
DIAL_KEYS = ("understanding", "task_completion", "interest_arousal", "efficiency", "dialogue_overall",
             "preference_elicitation", "explanation")


def corpus_records():
    return [{"conversation ID": conv_id, "agent": {"id": crs, "type": "AGENT"},
             "user": {"id": f"u-{conv_id}", "type": "USER"}, "metadata": {},
             "conversation": [{"participant": p, "utterance": text, "utterance ID": f"{conv_id}_{i}",
                               "dialogue_acts": [{"intent": x, "slot_values": []} for x in intents]}
                              for i, (p, text, intents) in enumerate(turns)]}
            for conv_id, (crs, turns) in CONVERSATIONS.items()]


def eval_records():
    """CRSArena-Eval's layout: the whole dialogue, turn labels on the system's turns, dialogue labels."""
    records = []
    for conv_id, (_, turns) in CONVERSATIONS.items():
        dialogue = []
        for i, (p, text, _) in enumerate(turns):
            turn = {"turn_ind": i, "role": "USER" if p == "USER" else "ASST", "utterance": text}
            if (conv_id, i) in TURN_LABELS:
                relevance, interestingness = TURN_LABELS[(conv_id, i)]
                turn["turn_level_aggregated"] = {"relevance": relevance, "interestingness": interestingness}
            elif p == "USER" and i == 0:
                turn["turn_level_aggregated"] = {}  # user turns carry no labels
            dialogue.append(turn)
        records.append({"conv_id": conv_id, "dialogue": dialogue,
                        "dial_level_aggregated": dict(zip(DIAL_KEYS, DIAL_LABELS[conv_id]))})
    return records


def write_corpus(folder):
    path = folder / "crsarena_dial.json"
    path.write_text(json.dumps(corpus_records()), encoding="utf-8")
    return path


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path
