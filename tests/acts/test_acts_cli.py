"""`python -m evaluators score` and `meta` end to end on small files."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def crs_arena_record(conv_id, crs, sentiment, turns, with_acts=True):
    conversation = []
    for i, (role, text, intents) in enumerate(turns):
        utt = {"participant": role, "utterance": text, "utterance ID": f"{conv_id}_{i}"}
        if with_acts:
            utt["dialogue_acts"] = [{"intent": x, "slot_values": []} for x in intents]
        conversation.append(utt)
    return {"conversation ID": conv_id, "agent": {"id": crs, "type": "AGENT"},
            "user": {"id": "u-" + conv_id, "type": "USER"}, "conversation": conversation,
            "metadata": {"sentiment": sentiment}}


GOOD = [("USER", "I want a thriller", ["IQU"]), ("AGENT", "Have you seen Heat (1995)?", ["REC-E"]),
        ("USER", "no, I'll watch it tonight", ["ACC"]), ("AGENT", "Enjoy!", ["OTH"])]
MEH = [("USER", "I want a comedy", ["IQU"]), ("AGENT", "I would recommend the following items: 1: Heat (1995)",
                                              ["REC-S"]),
       ("USER", "that's not a comedy", ["REJ"]), ("AGENT", "What about Up (2009)?", ["REC-E"]),
       ("USER", "ok I'll watch that", ["ACC"]), ("AGENT", "bye", ["OTH"])]
BAD = [("USER", "hi", ["OTH"]), ("AGENT", "hello", ["OTH"]), ("USER", "a drama?", ["IQU"]),
       ("AGENT", "I like movies", ["OTH"])]


def write_corpus(path: Path, with_acts=True):
    records = [
        crs_arena_record("a1", "sys_a", "satisfied", GOOD, with_acts),
        crs_arena_record("a2", "sys_a", "satisfied", MEH, with_acts),
        crs_arena_record("b1", "sys_b", "satisfied", MEH, with_acts),
        crs_arena_record("b2", "sys_b", "frustrated", BAD, with_acts),
        crs_arena_record("c1", "sys_c", "frustrated", BAD, with_acts),
    ]
    path.write_text(json.dumps(records), encoding="utf-8")


def run_cli(*args, env_extra=None, timeout=600):
    env = dict(os.environ, HF_HUB_OFFLINE="1", **(env_extra or {}))
    return subprocess.run([sys.executable, "-m", "evaluators", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_score_and_meta_with_provided_acts(tmp_path):
    src, out = tmp_path / "dialogues.json", tmp_path / "scored.jsonl"
    write_corpus(src)
    res = run_cli("score", "--input", str(src), "--metrics", "acts,rdl,srrr,sr", "--out", str(out), "--quiet")
    assert res.returncode == 0, res.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["conversation ID"] for r in lines] == ["a1", "a2", "b1", "b2", "c1"]
    a1 = lines[0]
    assert a1["scores"] == {"acts": 1.0, "rdl": 0.25, "sr": 1.0, "srrr": 1.0}
    assert a1["conversation"][1]["dialogue_acts"] == [{"intent": "REC-E", "slot_values": []}]
    assert a1["metadata"]["score_details"]["rdl"]["version"] == "2/provided"
    assert lines[1]["scores"]["srrr"] == 0.5 and lines[1]["scores"]["rdl"] == pytest.approx(1 / 6)

    res = run_cli("meta", "--input", str(out), "--json")
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    by_sys = {r["crs_id"]: r for r in report["systems"]}
    assert by_sys["sys_a"]["satisfaction"] == 1.0 and by_sys["sys_b"]["satisfaction"] == 0.5
    assert by_sys["sys_a"]["rdl"] == pytest.approx((0.25 + 1 / 6) / 2)
    assert report["kendall_tau"]["rdl"] == 1.0 and report["kendall_tau"]["sr"] == 1.0
    table = run_cli("meta", "--input", str(out))
    assert "Kendall tau vs satisfaction" in table.stdout


def test_score_with_llm_annotator_from_settings(tmp_path):
    src, out = tmp_path / "dialogues.json", tmp_path / "scored.jsonl"
    write_corpus(src, with_acts=False)
    env = {"ARENA_LLM_PROVIDER": "fake", "ARENA_FAKE_REPLY": '{"intents": ["OTH"], "titles": []}',
           "ARENA_CACHE_DIR": str(tmp_path / "cache")}
    res = run_cli("score", "--input", str(src), "--metrics", "rdl,sr", "--out", str(out), "--annotator", "llm",
                  "--quiet", env_extra=env)
    assert res.returncode == 0, res.stderr
    first = json.loads(out.read_text().splitlines()[0])
    assert first["scores"] == {"rdl": 0.0, "sr": 0.0}
    assert first["conversation"][0]["dialogue_acts"][0]["intent"] == "OTH"
    details = first["metadata"]["score_details"]["rdl"]
    assert details["version"].startswith("2/llm-acts/prompt2-") and details["model"] == "fake:fake"


def test_bad_input_and_metric_are_reported(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("[{\"conversation\": 3}]")
    res = run_cli("score", "--input", str(bad), "--out", str(tmp_path / "o.jsonl"))
    assert res.returncode == 2 and "conversation" in res.stderr
    good = tmp_path / "good.json"
    write_corpus(good)
    res = run_cli("score", "--input", str(good), "--metrics", "rdl,bleu", "--out", str(tmp_path / "o.jsonl"))
    assert res.returncode == 2 and "bleu" in res.stderr


def test_export_subcommand_is_registered():
    res = run_cli("--help")
    assert res.returncode == 0
    for name in ("score", "meta", "export"):
        assert name in res.stdout


@pytest.mark.slow
def test_score_with_offline_annotator(tmp_path):
    src, out = tmp_path / "dialogues.json", tmp_path / "scored.jsonl"
    write_corpus(src, with_acts=False)
    res = run_cli("score", "--input", str(src), "--out", str(out), "--annotator", "offline", "--quiet",
                  env_extra={"ARENA_LLM_PROVIDER": "fake"})
    assert res.returncode == 0, res.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    a1, a2 = lines[0], lines[1]
    assert all(u["dialogue_acts"] for r in lines for u in r["conversation"])
    assert "REC-E" in [a["intent"] for a in a1["conversation"][1]["dialogue_acts"]]
    assert a1["conversation"][1]["dialogue_acts"][0]["slot_values"][0][:2] == ["TITLE", "Heat (1995)"]
    assert a1["scores"]["sr"] == 1.0 and a1["scores"]["rdl"] == 0.25
    assert a2["scores"]["srrr"] == 0.5
    assert lines[3]["scores"]["sr"] == 0.0
    assert a1["metadata"]["score_details"]["rdl"]["version"].startswith("2/offline-acts/")
