"""Small dialogue files for the refusal tests."""

from __future__ import annotations

import json
from pathlib import Path


def dialogue_record(conv_id: str, sentiment: str = "satisfied", score: object = 0.5) -> dict:
    """One CRSArena-Dial record with a verdict and (optionally odd) score."""
    rec = {
        "conversation ID": conv_id,
        "agent": {"id": "kbrd_redial"},
        "user": {"id": "person-1"},
        "conversation": [
            {"participant": "USER", "utterance": "hi, any comedy?", "utterance ID": f"{conv_id}-0"},
            {"participant": "AGENT", "utterance": "Try Up (2009).", "utterance ID": f"{conv_id}-1"},
        ],
        "metadata": {"sentiment": sentiment},
    }
    if score is not None:
        rec["metadata"]["score_details"] = {"rdl": {"value": score, "scorer": "rdl", "version": "1"}}
    return rec


def write_records(path: Path, records: list) -> Path:
    path.write_text(json.dumps(records), encoding="utf-8")
    return path
