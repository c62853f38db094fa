"""The table of SRRR/SR readings in docs/metrics.md is what the metric code gives on IARD's 259 dialogues,
and both readings can be asked for by name in `crs-arena score --metrics`."""

import json
import re
import sys
from pathlib import Path

import pytest

from arena.corpus.loading import load_dialogues
from evaluators import metrics as M
from evaluators import metrics_usersimcrs as U
from evaluators.scoring import parse_metrics, score_dialogue
from tests.acts.acts_helpers import make_dialogue

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import srrr_readings  # noqa: E402

IARD = ROOT / "assets" / "iard" / "formatted_IARD_annotated_partially.json"


@pytest.fixture(scope="module")
def iard():
    return load_dialogues(IARD)


def test_the_docs_table_is_the_one_the_metric_code_gives_on_iard(iard):
    assert len(iard) == 259
    text = (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")
    documented = re.search(r"<!-- srrr-readings-table -->\n(.*?)\n<!-- /srrr-readings-table -->", text, re.S)
    assert documented, "docs/metrics.md lost its SRRR readings table"
    assert documented.group(1) == srrr_readings.readings_table(iard)
    said = f"{srrr_readings.opening_count(iard)} of the 259 dialogues say something before"
    assert said in " ".join(text.split())


def test_the_readings_part_on_iard_where_the_docs_say(iard):
    arena = [M.srrr(d) for d in iard]
    theirs = [U.srrr_usersimcrs(d) for d in iard]
    assert sum(a != t for a, t in zip(arena, theirs)) == 174
    assert round(sum(arena) / 259, 3) == 0.300 and round(sum(theirs) / 259, 3) == 0.229


def test_both_readings_are_metric_names_and_the_default_is_the_arenas():
    assert parse_metrics("srrr,srrr_usersimcrs,sr_usersimcrs") == ["srrr", "srrr_usersimcrs", "sr_usersimcrs"]
    d = make_dialogue([("U", "any good thrillers?", ["IQU"]), ("A", "Heat (1995)", ["REC-S"]),
                       ("U", "great, I'll watch it", ["ACC"])])
    scores = score_dialogue(d, ["srrr", "sr", "srrr_usersimcrs", "sr_usersimcrs"])
    assert scores["srrr"].value == 1.0 and scores["srrr_usersimcrs"].value == 0.5
    assert scores["sr"].value == scores["sr_usersimcrs"].value == 1.0
    assert scores["srrr_usersimcrs"].details == {"rounds": 2, "successful_rounds": 1, "opening_round": True}
    assert scores["srrr_usersimcrs"].version.endswith("/provided")


def test_score_command_writes_the_usersimcrs_reading(tmp_path):
    from evaluators.cli import main

    src = tmp_path / "in.json"
    src.write_text(json.dumps([{"conversation ID": "c1", "agent": {"id": "sys"}, "user": {"id": "u1"},
                                "conversation": [
                                    {"participant": "USER", "utterance": "hi",
                                     "dialogue_acts": [{"intent": "IQU"}]},
                                    {"participant": "AGENT", "utterance": "Heat (1995)?",
                                     "dialogue_acts": [{"intent": "REC-S"}]},
                                    {"participant": "USER", "utterance": "yes!",
                                     "dialogue_acts": [{"intent": "ACC"}]}],
                                }]), encoding="utf-8")
    out = tmp_path / "scored.jsonl"
    assert main(["score", "--input", str(src), "--metrics", "srrr,srrr_usersimcrs", "--out", str(out),
                 "--quiet"]) == 0
    rec = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert rec["metadata"]["scores"] == {"srrr": 1.0, "srrr_usersimcrs": 0.5}
