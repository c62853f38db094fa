"""`meta` against CRSArena-Eval's labels (imported as published): dialogue, system and turn level.

The files are built by hand (tests/human_ratings/crsarena_eval_files.py); the published labels are an
outside check of this project and are not read by its tests.
"""

import json
import math

import pytest

from evaluators.cli import main
from tests.human_ratings.crsarena_eval_files import eval_records, write, write_corpus

# RDL per dialogue (accepting user utterances / utterances): kbrd 1/4, barcor 1/6, unicrs 0, chatcrs 0;
# task_completion 2, 1.5, 0, 0.5. Ranks of RDL 4 3 1.5 1.5 (deviations 1.5 .5 -1 -1, squares 4.5), of
# task_completion 4 3 1 2 (deviations 1.5 .5 -1.5 -.5, squares 5); products 2.25 + .25 + 1.5 + .5 = 4.5,
# Spearman = 4.5 / sqrt(22.5) = 0.948683.
#
# Turn level, SRRR's per-round term of each rated Recommend reply against its relevance: kbrd's Heat
# (accepted: 1, relevance 3), barcor's first Airplane! (1, 2) and second (rejected: 0, 1), unicrs's The Others
# (0, 0); the other rated replies recommend nothing and have no term. x = 1 1 0 0, y = 3 2 1 0: Spearman
# (ranks 3.5 3.5 1.5 1.5 and 4 3 2 1) = 4 / sqrt(4 * 5) = 0.894427, and Pearson the same, 2 / sqrt(1 * 5).


def test_meta_correlates_metrics_with_the_imported_labels(tmp_path, capsys):
    corpus = write_corpus(tmp_path)
    scored = tmp_path / "scored.jsonl"
    assert main(["score", "--input", str(corpus), "--metrics", "rdl,srrr,sr", "--out", str(scored), "--quiet"]) == 0
    ratings = write(tmp_path, "crsarena_eval.json", json.dumps(eval_records()))
    out = tmp_path / "meta.json"
    assert main(["meta", "--input", str(scored), "--ratings", str(ratings), "--json", str(out),
                 "--rounds", "200"]) == 0
    records = json.loads(out.read_text())

    def find(**where):
        [hit] = [r for r in records if all(r[k] == v for k, v in where.items())]
        return hit

    tc = find(metric="rdl", aspect="task_completion", level="dialogue")
    assert tc["n"] == 4 and tc["spearman"] == pytest.approx(4.5 / math.sqrt(22.5))
    for aspect in ("overall_impression", "preference_elicitation", "explanation", "relevance", "interestingness"):
        assert find(metric="rdl", aspect=aspect, level="dialogue")["n"] in (3, 4)
    turn = find(metric="srrr", aspect="relevance", level="turn")
    assert turn["n"] == 4
    assert turn["spearman"] == pytest.approx(4 / math.sqrt(20)) and turn["pearson"] == pytest.approx(2 / math.sqrt(5))
    assert find(metric="srrr", aspect="interestingness", level="turn")["n"] == 4
    assert {r["level"] for r in records} == {"dialogue", "system", "turn"}
    assert not [r for r in records if r["level"] == "turn" and r["metric"] in ("rdl", "sr")]  # no per-reply term
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[:4] for line in lines if " turn " in line][0] == ["human", "turn", "srrr", "relevance"]
